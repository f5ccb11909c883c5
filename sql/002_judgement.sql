-- Schema version 2: judgement state and output (behaviour §2, §4, §5).
-- State is per subject: nothing here relates two subjects, so the rows of a
-- share of subjects can be judged, stored and merged on their own.

-- Each subject's last judged fix: the "last known location", and the line
-- below which later fixes are stale.
CREATE TABLE gf_subjects (
    subject_id      TEXT PRIMARY KEY,
    last_ts         TEXT NOT NULL,   -- UTC, fixed width: text order is time order
    last_lat        REAL NOT NULL,
    last_lon        REAL NOT NULL,
    last_accuracy_m REAL NOT NULL
) WITHOUT ROWID;

-- Stay state per (subject, area). Only stays that matter are stored: INSIDE,
-- or an inside streak under way. UNKNOWN and OUTSIDE without a streak behave
-- the same for every later fix, so they are simply absent.
CREATE TABLE gf_stays (
    subject_id  TEXT NOT NULL,
    area_id     TEXT NOT NULL,
    state       TEXT NOT NULL CHECK (state IN ('UNKNOWN', 'INSIDE', 'OUTSIDE')),
    in_streak   INTEGER NOT NULL CHECK (in_streak >= 0),
    out_streak  INTEGER NOT NULL CHECK (out_streak >= 0),
    entered_at  TEXT,        -- the ENTER fix's time while INSIDE
    dwell_spent TEXT,        -- DWELL condition ids already spent in this stay, comma-separated
    PRIMARY KEY (subject_id, area_id)
) WITHOUT ROWID;
CREATE INDEX gf_stays_by_area ON gf_stays (area_id);

-- The local date (in the condition's zone) each condition last notified each subject.
CREATE TABLE gf_last_notified (
    subject_id   TEXT NOT NULL,
    condition_id INTEGER NOT NULL,
    local_date   TEXT NOT NULL,   -- YYYY-MM-DD
    PRIMARY KEY (subject_id, condition_id)
) WITHOUT ROWID;

-- Judgement runs: one row per batch or single check, with its counts.
CREATE TABLE gf_runs (
    run_id        INTEGER PRIMARY KEY,
    kind          TEXT NOT NULL,   -- 'judge' or 'check'
    source        TEXT,
    started_at    TEXT NOT NULL,
    fixes         INTEGER NOT NULL DEFAULT 0,
    judged        INTEGER NOT NULL DEFAULT 0,
    stale         INTEGER NOT NULL DEFAULT 0,
    invalid       INTEGER NOT NULL DEFAULT 0,
    transitions   INTEGER NOT NULL DEFAULT 0,
    notifications INTEGER NOT NULL DEFAULT 0,
    filtered      INTEGER NOT NULL DEFAULT 0
);

-- Every notification sent, in canonical order of id: subject, time, area_id, condition_id.
CREATE TABLE gf_notifications (
    id           INTEGER PRIMARY KEY,
    run_id       INTEGER NOT NULL,
    subject_id   TEXT NOT NULL,
    ts           TEXT NOT NULL,
    area_id      TEXT NOT NULL,
    condition_id INTEGER NOT NULL,
    transition   TEXT NOT NULL CHECK (transition IN ('IN', 'OUT', 'DWELL')),
    lat          REAL NOT NULL,
    lon          REAL NOT NULL,
    accuracy_m   REAL NOT NULL
);
CREATE INDEX gf_notifications_by_subject ON gf_notifications (subject_id, ts);

-- With --explain: why fixes did not count and transitions did not notify.
CREATE TABLE gf_explain (
    run_id       INTEGER NOT NULL,
    subject_id   TEXT,
    ts           TEXT,
    area_id      TEXT,
    condition_id INTEGER,
    kind         TEXT NOT NULL,
    reason       TEXT NOT NULL
);

-- An inbox of fixes: `geofence judge` judges and empties it in one transaction.
-- ts: ISO 8601 with an offset, or Unix seconds.
CREATE TABLE gf_fixes (
    subject_id TEXT,
    ts,
    lat        REAL,
    lon        REAL,
    accuracy_m REAL
);

-- An area that goes away takes its stays with it.
CREATE TRIGGER gf_areas_remove_stays AFTER DELETE ON gf_areas
BEGIN
    DELETE FROM gf_stays WHERE area_id = OLD.area_id;
END;
