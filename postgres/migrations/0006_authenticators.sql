-- 0006: rows that decide a label carry an authenticator (HMAC-SHA256
-- under a key derived from the runner's ledger key, which the database
-- never holds): freezes, audit lines, records, replay results and the
-- labelled triples of shared checks. A row
-- without one (written before a key was configured, or by a client that
-- can only write the database) is refused when read. The column is NULL
-- when a store without a key wrote the row.
ALTER TABLE flakegate.freezes ADD COLUMN mac bytea;
ALTER TABLE flakegate.audit   ADD COLUMN mac bytea;
ALTER TABLE flakegate.records ADD COLUMN mac bytea;
ALTER TABLE flakegate.replays ADD COLUMN mac bytea;
-- A labelled triple of a shared check: its label decides the verdict.
ALTER TABLE flakegate.check_triples ADD COLUMN mac bytea;

-- The failure corpus: every seed that failed a candidate of a property
-- (corpus_key names the property: path, name and run template digest),
-- run again for every later candidate of that property on another base.
-- first_base_sha is the base of its first failure (kept), candidate_sha
-- and failed_at those of its newest (fixed-width UTC text, so it sorts).
-- A forged row only adds a seed to run; it needs no authenticator.
CREATE TABLE flakegate.failure_corpus (
    corpus_key     text COLLATE "C" NOT NULL,
    seed           text COLLATE "C" NOT NULL,
    first_base_sha text NOT NULL,
    candidate_sha  text NOT NULL,
    failed_at      text COLLATE "C" NOT NULL,
    PRIMARY KEY (corpus_key, seed)
);
