-- Schema version 10: resumable runs (docs/operations.md, "Resumable runs").
-- `judge --fixes FILE --resume` commits its run chunk by chunk (whole
-- subjects, in the order it judges them), so a run cut short (a kill, a full
-- disk) is resumed where its last commit left it instead of starting over.
-- gf_runs.status says what a reader sees: 'running' while such a run is
-- being judged or waits to be resumed (its counts and rows are those of the
-- subjects committed so far), 'done' once it went to its end. Every other
-- run is one transaction, seen only when 'done'.
ALTER TABLE gf_runs ADD COLUMN status TEXT NOT NULL DEFAULT 'done';

-- What a resumable run judges and how far it has come: the input is known
-- by its content (size and SHA-256), so a rerun of the same file finds the
-- run, and a changed file is refused; the options that change what is
-- judged must be the same too, and so must the catalog (its
-- catalog_stamp, which every change of an area, condition or setting
-- replaces: version 5). last_subject: the last subject committed
-- (NULL before the first chunk's commit); notifications_after: the largest
-- notification id before the run, as `Judgement.Report` has it;
-- out_partial, out_format, out_bytes: the temporary file `--out FILE` is
-- being written to, its format, and its length synced with the last chunk
-- committed, so that a resumed run truncates it there and goes on writing
-- it (NULL: the resumed run reads its notifications back instead).
CREATE TABLE gf_run_inputs (
    run_id              INTEGER PRIMARY KEY REFERENCES gf_runs (run_id) ON DELETE CASCADE,
    path                TEXT NOT NULL,
    size                INTEGER NOT NULL,
    sha256              TEXT NOT NULL,
    options             TEXT NOT NULL,
    catalog_stamp       TEXT NOT NULL,
    notifications_after INTEGER NOT NULL,
    last_subject        TEXT,
    out_partial         TEXT,
    out_format          TEXT,
    out_bytes           INTEGER
);
CREATE INDEX gf_run_inputs_by_content ON gf_run_inputs (sha256);
