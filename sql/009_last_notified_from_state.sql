-- Schema version 9: gf_last_notified shows the days the suppression rules
-- read. A subject's record keeps, for each condition with a suppression,
-- the local day it last notified the subject (docs/subject-record.md,
-- `days`); that day, not the notifications still stored, decides whether
-- the next one is suppressed, so the view shows it (and none where the
-- record has none: a suppression added after the condition notified does
-- not read an earlier day). For a condition without a suppression (no rule
-- reads its day, and no record keeps it) the day is the one of the latest
-- stored notification, as in version 7.
--
-- Only subjects that have state are shown: `geofence reset --subject` and
-- DELETE FROM gf_subjects take a subject's days with its state, as the
-- table of versions 2 to 6 did. What is derived from the notifications
-- goes with them: deleting notifications, or judging with
-- --no-store-notifications, leaves no day for a condition without a
-- suppression (docs/sql.md).
DROP VIEW gf_last_notified;

CREATE VIEW gf_last_notified AS
SELECT st.subject_id AS subject_id, c.condition_id AS condition_id, json_extract(d.value, '$[1]') AS local_date
FROM gf_subject_state AS st, json_each(st.record, '$.days') AS d
JOIN gf_conditions AS c ON c.condition_id = json_extract(d.value, '$[0]') AND c.renotify_suppress_days > 0
UNION ALL
SELECT s.subject_id AS subject_id, g.condition_id AS condition_id,
       CASE WHEN g.day < -719528 THEN '-0001-12-31' WHEN g.day > 2932896 THEN '10000-01-01'
            ELSE date(g.day * 86400, 'unixepoch') END AS local_date
FROM (SELECT subject_key, condition_id, local_day AS day, max(id) FROM gf_notification_rows GROUP BY subject_key, condition_id) AS g
JOIN gf_subject_keys AS s ON s.subject_key = g.subject_key
WHERE EXISTS (SELECT 1 FROM gf_subject_state AS st WHERE st.subject_id = s.subject_id)
  AND NOT EXISTS (SELECT 1 FROM gf_conditions AS c WHERE c.condition_id = g.condition_id AND c.renotify_suppress_days > 0);
