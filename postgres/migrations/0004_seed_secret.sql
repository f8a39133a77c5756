-- 0004: the secret drawn seeds (random_seeds) are keyed by, so that a
-- patch author, who controls the candidate's commit sha, cannot compute
-- the seeds a check will draw for it. One row, 32 random bytes, made by
-- the first check that draws a seed (INSERT ... ON CONFLICT DO NOTHING:
-- runners starting at once all keep the first one) and never changed,
-- whatever the role's privileges: a new secret would draw other seeds for
-- the same candidate.
CREATE TABLE flakegate.seed_secret (
    id         boolean     PRIMARY KEY DEFAULT true CHECK (id),
    secret     bytea       NOT NULL CHECK (octet_length(secret) = 32),
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE FUNCTION flakegate.seed_secret_kept() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'flakegate.seed_secret is never changed: % refused', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$;
CREATE TRIGGER seed_secret_no_update_delete BEFORE UPDATE OR DELETE ON flakegate.seed_secret
    FOR EACH ROW EXECUTE FUNCTION flakegate.seed_secret_kept();
CREATE TRIGGER seed_secret_no_truncate BEFORE TRUNCATE ON flakegate.seed_secret
    FOR EACH STATEMENT EXECUTE FUNCTION flakegate.seed_secret_kept();
