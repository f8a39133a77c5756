-- 0002 (fleet): the shared work queue of 'flakegate check --join'. One row
-- per check (what every runner must agree on) and one per triple (its
-- state, its lease, and once labelled its summary line). Lease times are
-- the server's (now()), so runners' clocks do not matter.

CREATE TABLE flakegate.checks (
    check_id           text COLLATE "C" PRIMARY KEY CHECK (check_id <> ''),
    base_sha           text        NOT NULL,
    candidate_sha      text        NOT NULL,
    config_sha256      text        NOT NULL,
    triples_sha256     text        NOT NULL,
    triples            integer     NOT NULL CHECK (triples > 0),
    max_lease_expiries integer     NOT NULL CHECK (max_lease_expiries >= 0),
    created_by         text        NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE flakegate.check_triples (
    check_id        text COLLATE "C" NOT NULL REFERENCES flakegate.checks (check_id),
    triple_id       text COLLATE "C" NOT NULL,
    position        integer     NOT NULL CHECK (position >= 0),
    property_path   text        NOT NULL,
    name            text        NOT NULL,
    seed            text        NOT NULL,
    state           text        NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'claimed', 'done')),
    runner_id       text,                 -- the lease holder, then who labelled it
    runner_host     text,
    lease_token     text,
    lease_expires   timestamptz,
    claims          integer     NOT NULL DEFAULT 0,
    expiries        integer     NOT NULL DEFAULT 0, -- leases that ended without a label
    expired_runners text[]      NOT NULL DEFAULT '{}',
    label           text,
    record_sha256   text,
    result          bytea,                -- the summary line (JSON), once labelled
    done_at         timestamptz,
    PRIMARY KEY (check_id, triple_id),
    UNIQUE (check_id, position),
    CHECK ((state = 'done') = (result IS NOT NULL AND label IS NOT NULL)),
    CHECK ((state = 'claimed') = (lease_token IS NOT NULL))
);

-- Claims look for the first unlabelled triple of a check.
CREATE INDEX check_triples_open ON flakegate.check_triples (check_id, position) WHERE state <> 'done';

-- A labelled triple is never changed or removed again, whatever the
-- role's privileges: a triple is labelled exactly once.
CREATE FUNCTION flakegate.check_triple_labelled_once() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.state = 'done' THEN
        RAISE EXCEPTION 'flakegate.check_triples: triple % of check % is labelled already: % refused',
            OLD.triple_id, OLD.check_id, TG_OP USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF TG_OP = 'DELETE' THEN
        RETURN OLD;
    END IF;
    RETURN NEW;
END;
$$;
CREATE TRIGGER check_triples_labelled_once BEFORE UPDATE OR DELETE ON flakegate.check_triples
    FOR EACH ROW EXECUTE FUNCTION flakegate.check_triple_labelled_once();
