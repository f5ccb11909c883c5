-- Schema version 4: stays that a long streak does not rewrite at every fix.
-- behaviour §4 counts every inside fix of a stay, so a subject staying in eight
-- areas used to rewrite eight rows per fix. Now each subject counts its
-- judged fixes, and a stay row holds its streaks as of one of them: the
-- streak under way (an inside streak, or else an outside one) has grown by
-- one with every judged fix since, and the row is written again only when
-- a fix breaks that (an undecided verdict, a turn, a transition).
-- `gf_stays` is now a view that reads the rows this way, with the columns
-- it had; deleting from it deletes the rows.

ALTER TABLE gf_subjects ADD COLUMN judged_fixes INTEGER NOT NULL DEFAULT 0;

-- Renaming also renames the table in gf_areas_remove_stays.
ALTER TABLE gf_stays RENAME TO gf_stay_rows;
ALTER TABLE gf_stay_rows RENAME COLUMN in_streak TO in_base;
ALTER TABLE gf_stay_rows RENAME COLUMN out_streak TO out_base;
-- The subject's judged_fixes when in_base and out_base were exact.
ALTER TABLE gf_stay_rows ADD COLUMN base_judged INTEGER NOT NULL DEFAULT 0;
DROP INDEX gf_stays_by_area;
CREATE INDEX gf_stay_rows_by_area ON gf_stay_rows (area_id);

CREATE VIEW gf_stays AS
SELECT r.subject_id, r.area_id, r.state,
       r.in_base + CASE WHEN r.in_base > 0 THEN s.judged_fixes - r.base_judged ELSE 0 END AS in_streak,
       r.out_base + CASE WHEN r.in_base = 0 AND r.out_base > 0 THEN s.judged_fixes - r.base_judged ELSE 0 END AS out_streak,
       r.entered_at, r.dwell_spent
FROM gf_stay_rows AS r JOIN gf_subjects AS s ON s.subject_id = r.subject_id;

CREATE TRIGGER gf_stays_delete INSTEAD OF DELETE ON gf_stays
BEGIN
    DELETE FROM gf_stay_rows WHERE subject_id = OLD.subject_id AND area_id = OLD.area_id;
END;

-- The rows count by their subject's judged fixes, so they go with the subject.
CREATE TRIGGER gf_subjects_remove_stays AFTER DELETE ON gf_subjects
BEGIN
    DELETE FROM gf_stay_rows WHERE subject_id = OLD.subject_id;
END;
