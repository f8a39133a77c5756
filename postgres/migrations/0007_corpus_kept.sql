-- 0007: the failure corpus keeps what caught a regression. A seed is
-- removed only by age, counted in the bases the store's checks run on
-- since its newest failure (failed_epoch, against corpus_bases' epoch),
-- never by another patch's failures: a key's bound and the corpus's
-- refuse a new seed instead, and one candidate adds at most one seed per
-- key (added_by). Existing seeds are kept, each added by its newest
-- failure's candidate, its age starting at the corpus's first base.
ALTER TABLE flakegate.failure_corpus ADD COLUMN added_by text;
UPDATE flakegate.failure_corpus SET added_by = candidate_sha;
ALTER TABLE flakegate.failure_corpus ALTER COLUMN added_by SET NOT NULL;
ALTER TABLE flakegate.failure_corpus ADD COLUMN failed_epoch bigint NOT NULL DEFAULT 0;

-- The bases the store's checks ran on, each with the epoch it brought
-- (1, 2, ...): only the last 2 * MaxCorpusAge are kept, to tell a base
-- seen from a new one.
CREATE TABLE flakegate.corpus_bases (
    base_sha text COLLATE "C" PRIMARY KEY,
    epoch    bigint NOT NULL UNIQUE CHECK (epoch > 0)
);
