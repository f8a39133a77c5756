-- 0003: a freeze names a test, not only a file, and is bound to the run
-- command and the config entry it was granted for. Existing freezes keep
-- name '' (an entry without a name) and empty bindings, which a check
-- voids on first use (the command cannot be vouched for).
ALTER TABLE flakegate.freezes
    ADD COLUMN name                  text COLLATE "C" NOT NULL DEFAULT '',
    ADD COLUMN run_sha256            text NOT NULL DEFAULT '',
    ADD COLUMN property_entry_sha256 text NOT NULL DEFAULT '';
ALTER TABLE flakegate.freezes DROP CONSTRAINT freezes_pkey;
ALTER TABLE flakegate.freezes ADD PRIMARY KEY (property_path, name, seed, fixture_sha256);
