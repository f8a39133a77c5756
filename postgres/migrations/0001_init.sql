-- 0001: the freeze ledger, its audit log, the record store and the replay
-- cache. Everything lives in the schema "flakegate" (created by the
-- migrator together with flakegate.schema_version).

-- One freeze per triple. runs_left counts down; the row is deleted in the
-- same transaction that brings it to zero. Times are RFC 3339 text with
-- nanoseconds, exactly as written into the audit log, so the ledger and the
-- log replay to the same values.
CREATE TABLE flakegate.freezes (
    property_path   text COLLATE "C" NOT NULL,
    seed            text COLLATE "C" NOT NULL,
    fixture_sha256  text COLLATE "C" NOT NULL,
    label           text    NOT NULL CHECK (label = 'SCHEDULER'),
    runs_left       integer NOT NULL CHECK (runs_left >= 0),
    owner           text    NOT NULL,
    record_sha256   text    NOT NULL,
    property_sha256 text    NOT NULL,
    granted_at      text    NOT NULL,
    granted_by      text    NOT NULL,
    PRIMARY KEY (property_path, seed, fixture_sha256)
);

-- The audit log: one row per event line, in order, with the line's exact
-- bytes. Each line names the sha256 of the line before it.
CREATE TABLE flakegate.audit (
    seq         bigint PRIMARY KEY CHECK (seq > 0),
    line        bytea  NOT NULL,
    sha256      text   NOT NULL,
    prev_sha256 text   NOT NULL
);

-- The head of the chain: one row, locked by every writer (FOR UPDATE) so
-- appends from many runners serialize and the chain never forks.
CREATE TABLE flakegate.audit_head (
    id     boolean PRIMARY KEY DEFAULT true CHECK (id),
    seq    bigint  NOT NULL,
    sha256 text    NOT NULL
);
INSERT INTO flakegate.audit_head (id, seq, sha256) VALUES (true, 0, '');

-- The audit log is append-only, whatever the role's privileges.
CREATE FUNCTION flakegate.audit_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'flakegate.audit is append-only: % refused', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$;
CREATE TRIGGER audit_no_update_delete BEFORE UPDATE OR DELETE ON flakegate.audit
    FOR EACH ROW EXECUTE FUNCTION flakegate.audit_append_only();
CREATE TRIGGER audit_no_truncate BEFORE TRUNCATE ON flakegate.audit
    FOR EACH STATEMENT EXECUTE FUNCTION flakegate.audit_append_only();

-- Run records by record_sha256, byte for byte (never re-serialised).
-- Keys sort by byte ("C"), whatever the database's collation.
CREATE TABLE flakegate.records (
    record_sha256 text COLLATE "C" PRIMARY KEY,
    raw           bytea NOT NULL
);

-- The first base result per replay key; never overwritten.
CREATE TABLE flakegate.replays (
    replay_key   text             PRIMARY KEY,
    result       text             NOT NULL,
    wall_seconds double precision NOT NULL,
    run_id       text             NOT NULL,
    at           text             NOT NULL
);
