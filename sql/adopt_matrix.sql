--
-- adopt_column runs no role's code with another role's rights (issue 37,
-- point 1), as a matrix: each shape that puts code on a relation the
-- adoption reaches, times each owner of that relation (the table owner's
-- own, another role's, a role the table owner is a member of), adopted by a
-- superuser and by the table's owner.  The code is a function owned by the
-- relation's owner that makes that owner a superuser if it can: afterwards
-- no role has gained anything (pg_authid, pg_auth_members,
-- pg_db_role_setting compared before and after).
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS idgen;
CREATE ROLE adm_alice;          -- owns the tables
CREATE ROLE adm_mallory;        -- another role
CREATE ROLE adm_bob;            -- a role adm_alice is a member of
GRANT adm_bob TO adm_alice;
GRANT CREATE ON DATABASE contrib_regression TO adm_alice, adm_mallory, adm_bob;
RESET client_min_messages;

-- What a role could gain, in one text
CREATE FUNCTION roles_state() RETURNS text LANGUAGE sql AS $$
    SELECT md5(concat_ws('|',
        (SELECT string_agg(concat_ws(',', rolname, rolsuper, rolinherit, rolcreaterole,
                                     rolcreatedb, rolreplication, rolbypassrls), ';' ORDER BY rolname)
           FROM pg_authid),
        (SELECT string_agg(concat_ws(',', roleid, member, admin_option), ';' ORDER BY roleid, member)
           FROM pg_auth_members),
        (SELECT string_agg(concat_ws(',', setdatabase, setrole, setconfig::text), ';' ORDER BY setdatabase, setrole)
           FROM pg_db_role_setting)))
$$;
SELECT roles_state() AS before \gset

-- The shapes: setup SQL run by a superuser in a schema of its own, with
-- %1$s the role that owns the relation carrying the code (the "odd" one),
-- %2$s the table's owner.  evil() makes its owner a superuser if the
-- role running it can; evil_imm() is the same, declared IMMUTABLE for
-- index expressions (where PostgreSQL runs it read-only).  Both act only
-- while adm.armed is on: during the attempt, not the superuser's setup.
CREATE TABLE shapes (shape text PRIMARY KEY, setup text, odd_is_table boolean);
INSERT INTO shapes VALUES
('check', $s$
CREATE TABLE t (id serial PRIMARY KEY CHECK (evil(id)));
INSERT INTO t DEFAULT VALUES;
ALTER TABLE t OWNER TO %1$s;
$s$, true),
('expression index', $s$
CREATE TABLE t (id serial PRIMARY KEY);
CREATE INDEX ON t ((evil_imm(id)));
INSERT INTO t DEFAULT VALUES;
ALTER TABLE t OWNER TO %1$s;
$s$, true),
('partial index', $s$
CREATE TABLE t (id serial PRIMARY KEY);
CREATE INDEX ON t (id) WHERE evil_imm(id);
INSERT INTO t DEFAULT VALUES;
ALTER TABLE t OWNER TO %1$s;
$s$, true),
('generated column', $s$
CREATE TABLE t (id serial PRIMARY KEY, g boolean GENERATED ALWAYS AS (evil_imm(id)) STORED);
INSERT INTO t DEFAULT VALUES;
ALTER TABLE t OWNER TO %1$s;
$s$, true),
('rule', $s$
CREATE TABLE t (id serial PRIMARY KEY);
CREATE TABLE log (id int);
CREATE RULE r AS ON INSERT TO t DO ALSO INSERT INTO log SELECT NEW.id WHERE evil(NEW.id);
INSERT INTO t DEFAULT VALUES;
ALTER TABLE t OWNER TO %1$s;
ALTER TABLE log OWNER TO %1$s;
$s$, true),
('policy', $s$
CREATE TABLE t (id serial PRIMARY KEY);
CREATE POLICY p ON t USING (evil(id));
ALTER TABLE t ENABLE ROW LEVEL SECURITY;
INSERT INTO t DEFAULT VALUES;
ALTER TABLE t OWNER TO %1$s;
$s$, true),
('trigger', $s$
CREATE TABLE t (id serial PRIMARY KEY);
CREATE FUNCTION trg() RETURNS trigger LANGUAGE plpgsql AS $f$BEGIN PERFORM evil(NEW.id); RETURN NEW; END$f$;
CREATE TRIGGER tr BEFORE INSERT OR UPDATE ON t FOR EACH ROW EXECUTE FUNCTION trg();
INSERT INTO t DEFAULT VALUES;
ALTER TABLE t OWNER TO %1$s;
ALTER FUNCTION trg() OWNER TO %1$s;
$s$, true),
('partitioned, depth 2', $s$
CREATE TABLE t (id serial, k int, PRIMARY KEY (id, k)) PARTITION BY LIST (k);
CREATE TABLE t1 PARTITION OF t FOR VALUES IN (1, 2) PARTITION BY LIST (k);
CREATE TABLE t11 PARTITION OF t1 (CHECK (evil(id))) FOR VALUES IN (1);
INSERT INTO t (k) VALUES (1);
ALTER TABLE t OWNER TO %2$s;
ALTER TABLE t1 OWNER TO %2$s;
ALTER TABLE t11 OWNER TO %1$s;
$s$, false),
('inheritance, depth 2', $s$
CREATE TABLE t (id serial PRIMARY KEY);
CREATE TABLE c1 () INHERITS (t);
CREATE TABLE c11 (CHECK (evil(id))) INHERITS (c1);
INSERT INTO c11 DEFAULT VALUES;
ALTER TABLE t OWNER TO %2$s;
ALTER TABLE c1 OWNER TO %2$s;
ALTER TABLE c11 OWNER TO %1$s;
$s$, false),
('inheritance child with expression index', $s$
CREATE TABLE t (id serial PRIMARY KEY);
CREATE TABLE c1 () INHERITS (t);
CREATE INDEX ON c1 ((evil_imm(id)));
INSERT INTO c1 DEFAULT VALUES;
ALTER TABLE t OWNER TO %2$s;
ALTER TABLE c1 OWNER TO %1$s;
$s$, false),
('referencing table', $s$
CREATE TABLE t (id serial PRIMARY KEY);
CREATE TABLE ref (t_id int REFERENCES t CHECK (evil(t_id)));
INSERT INTO t DEFAULT VALUES;
INSERT INTO ref VALUES (1);
ALTER TABLE t OWNER TO %2$s;
ALTER TABLE ref OWNER TO %1$s;
$s$, false),
('referencing bigint column', $s$
CREATE TABLE t (id serial PRIMARY KEY);
CREATE TABLE ref (t_id bigint REFERENCES t CHECK (evil(t_id)));
INSERT INTO t DEFAULT VALUES;
INSERT INTO ref VALUES (1);
ALTER TABLE t OWNER TO %2$s;
ALTER TABLE ref OWNER TO %1$s;
$s$, false);

-- One attempt: a new schema, the shape set up with the odd relation owned
-- by odd_owner, evil() owned by it too, then adopt_column by caller.
-- Returns 'adopted' or the SQLSTATE and message of the refusal.
CREATE FUNCTION attempt(n int, sh text, odd_owner text, caller text) RETURNS text
    LANGUAGE plpgsql AS $attempt$
DECLARE
    sch text := 'adm_' || n;
    tbl_owner text := CASE WHEN (SELECT odd_is_table FROM shapes WHERE shape = sh)
                           THEN odd_owner ELSE 'adm_alice' END;
    result text;
BEGIN
    EXECUTE format('CREATE SCHEMA %I', sch);
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO PUBLIC', sch);
    PERFORM set_config('search_path', sch || ', public', true);
    EXECUTE format($f$CREATE FUNCTION evil(bigint) RETURNS boolean LANGUAGE plpgsql AS
        $b$BEGIN
            IF current_setting('adm.armed', true) IS DISTINCT FROM 'on' THEN
                RETURN true;    -- the superuser's setup, not the attempt
            END IF;
            BEGIN EXECUTE 'ALTER ROLE %1$s SUPERUSER BYPASSRLS CREATEROLE'; EXCEPTION WHEN OTHERS THEN NULL; END;
            BEGIN EXECUTE 'GRANT pg_execute_server_program TO %1$s'; EXCEPTION WHEN OTHERS THEN NULL; END;
            BEGIN EXECUTE 'ALTER ROLE %1$s SET session_preload_libraries = ''x'''; EXCEPTION WHEN OTHERS THEN NULL; END;
            RETURN true;
        END$b$$f$, odd_owner);
    EXECUTE format($f$CREATE FUNCTION evil_imm(bigint) RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS
        $b$BEGIN
            IF current_setting('adm.armed', true) IS DISTINCT FROM 'on' THEN
                RETURN true;
            END IF;
            BEGIN EXECUTE 'ALTER ROLE %1$s SUPERUSER'; EXCEPTION WHEN OTHERS THEN NULL; END;
            RETURN true;
        END$b$$f$, odd_owner);
    EXECUTE format('ALTER FUNCTION evil(bigint) OWNER TO %I', odd_owner);
    EXECUTE format('ALTER FUNCTION evil_imm(bigint) OWNER TO %I', odd_owner);
    EXECUTE format((SELECT setup FROM shapes WHERE shape = sh), odd_owner, tbl_owner);
    PERFORM set_config('adm.armed', 'on', true);
    BEGIN
        IF caller <> 'superuser' THEN
            EXECUTE format('SET LOCAL ROLE %I', caller);
        END IF;
        PERFORM idgen.adopt_column(format('%I.t', sch)::regclass, 'id', 'segment:' || sch);
        result := 'adopted';
        RESET ROLE;
    EXCEPTION WHEN OTHERS THEN
        RESET ROLE;
        result := SQLSTATE || ' ' || SQLERRM;
    END;
    PERFORM set_config('adm.armed', 'off', true);
    PERFORM set_config('search_path', 'public', true);
    RETURN result;
END
$attempt$;

-- The table owner may use the tag functions, as the README grants them
GRANT EXECUTE ON FUNCTION idgen.segment_create(text, bigint, int, text, int),
    idgen.segment_alter(text, int, text, bigint, int),
    idgen.segment_export_leaf(text, boolean)
    TO adm_alice, adm_mallory, adm_bob;

SELECT s.shape, o.odd_owner, c.caller,
       attempt(row_number() OVER (ORDER BY s.shape, o.odd_owner, c.caller)::int,
               s.shape, o.odd_owner, c.caller) AS outcome
  FROM shapes s
 CROSS JOIN (VALUES ('adm_alice'), ('adm_mallory'), ('adm_bob')) o(odd_owner)
 CROSS JOIN (VALUES ('superuser'), ('adm_alice')) c(caller)
 ORDER BY s.shape, o.odd_owner, c.caller;

-- No role gained anything
SELECT roles_state() = :'before' AS no_role_gained_anything;
SELECT rolname FROM pg_roles WHERE rolname LIKE 'adm_%' AND (rolsuper OR rolbypassrls OR rolcreaterole);

-- Clean up
SET client_min_messages = warning;
DO $$
DECLARE s text;
BEGIN
    FOR s IN SELECT nspname FROM pg_namespace WHERE nspname ~ '^adm_[0-9]+$' LOOP
        EXECUTE format('DROP SCHEMA %I CASCADE', s);
    END LOOP;
END
$$;
DROP OWNED BY adm_alice, adm_mallory, adm_bob;
DROP ROLE adm_alice, adm_mallory, adm_bob;
RESET client_min_messages;
