-- 0005: a freeze keeps the candidate sha of the record that earned it, so
-- a skip can say where its freeze came from. Existing freezes keep ''.
ALTER TABLE flakegate.freezes
    ADD COLUMN candidate_sha text NOT NULL DEFAULT '';
