-- Schema version 8: one state record per subject (docs/write-path.md, "State").
-- A subject's whole state (last fix, judged count, stays with their exact
-- streaks, the last-notified days a suppression reads) is one JSON text,
-- docs/subject-record.md: a judgement writes one row per subject it changed,
-- not a row per stay and per notified condition. gf_subjects and gf_stays
-- become views over the records with the columns they had; gf_inside keeps
-- "who is inside area A now" a seek.

CREATE TABLE gf_subject_state (
    subject_id TEXT PRIMARY KEY,
    record     TEXT NOT NULL    -- SubjectRecord: docs/subject-record.md
) WITHOUT ROWID;

-- The INSIDE stays, by area: written only when a stay starts or ends being INSIDE.
CREATE TABLE gf_inside (
    area_id    TEXT NOT NULL,
    subject_id TEXT NOT NULL,
    PRIMARY KEY (area_id, subject_id)
) WITHOUT ROWID;

-- @convert
-- (SubjectRecordsConversion has filled both tables from the rows below.)

DROP TRIGGER gf_subjects_remove_stays;
DROP TRIGGER gf_stays_delete;
DROP TRIGGER gf_areas_remove_stays;
DROP VIEW gf_stays;
DROP TABLE gf_stay_rows;
DROP TABLE gf_subjects;
DROP TABLE IF EXISTS gf_last_notified_v6;

CREATE VIEW gf_subjects AS
SELECT subject_id,
       json_extract(record, '$.last.ts') AS last_ts,
       json_extract(record, '$.last.lat') AS last_lat,
       json_extract(record, '$.last.lon') AS last_lon,
       json_extract(record, '$.last.acc') AS last_accuracy_m,
       json_extract(record, '$.judged') AS judged_fixes
FROM gf_subject_state;

-- A stay of an area no longer in gf_areas is hidden: it leaves the record at
-- the subject's next judged fix.
CREATE VIEW gf_stays AS
SELECT s.subject_id,
       json_extract(t.value, '$.area') AS area_id,
       json_extract(t.value, '$.phase') AS state,
       json_extract(t.value, '$.in') AS in_streak,
       json_extract(t.value, '$.out') AS out_streak,
       json_extract(t.value, '$.entered') AS entered_at,
       (SELECT group_concat(d.value, ',') FROM json_each(t.value, '$.dwell') AS d) AS dwell_spent
FROM gf_subject_state AS s, json_each(s.record, '$.stays') AS t
WHERE EXISTS (SELECT 1 FROM gf_areas AS a WHERE a.area_id = json_extract(t.value, '$.area'));

CREATE TRIGGER gf_subjects_remove INSTEAD OF DELETE ON gf_subjects
BEGIN
    DELETE FROM gf_inside WHERE subject_id = OLD.subject_id AND area_id IN (
        SELECT json_extract(t.value, '$.area') FROM gf_subject_state AS s, json_each(s.record, '$.stays') AS t
        WHERE s.subject_id = OLD.subject_id);
    DELETE FROM gf_subject_state WHERE subject_id = OLD.subject_id;
END;

-- The record is rewritten without the stay (json_remove keeps the rest's text, so the record stays canonical).
CREATE TRIGGER gf_stays_remove INSTEAD OF DELETE ON gf_stays
BEGIN
    DELETE FROM gf_inside WHERE area_id = OLD.area_id AND subject_id = OLD.subject_id;
    UPDATE gf_subject_state SET record = coalesce(json_remove(record, (
        SELECT '$.stays[' || t.key || ']' FROM json_each(record, '$.stays') AS t WHERE json_extract(t.value, '$.area') = OLD.area_id)), record)
    WHERE subject_id = OLD.subject_id;
END;

-- An area that goes away takes its INSIDE stays with it at once (those
-- subjects' records are rewritten: gf_inside names them); its other stays
-- (an entry being confirmed) leave each record at the subject's next judged
-- fix, and gf_stays hides them until then.
CREATE TRIGGER gf_areas_remove_inside AFTER DELETE ON gf_areas
BEGIN
    UPDATE gf_subject_state SET record = coalesce(json_remove(record, (
        SELECT '$.stays[' || t.key || ']' FROM json_each(record, '$.stays') AS t WHERE json_extract(t.value, '$.area') = OLD.area_id)), record)
    WHERE subject_id IN (SELECT subject_id FROM gf_inside WHERE area_id = OLD.area_id);
    DELETE FROM gf_inside WHERE area_id = OLD.area_id;
END;
