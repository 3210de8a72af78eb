\echo Use "ALTER EXTENSION idgen UPDATE TO '0.5.0'" to load this file. \quit

-- BEGIN roles of restored rows

-- A tag's or key's owner and grantees are roles, kept by OID with the name
-- beside it for pg_dump.  A row also records the cluster it was written
-- in (its system identifier), so that a restore knows what its OID means:
-- restored into the cluster it was dumped from (any database of it), the
-- row names the role of its OID, under that role's name now, or no role
-- if that role is gone; restored into another cluster, the role of its
-- name.  A role renamed or dropped while connected to another database
-- cannot hand its rights to a new role of the old name either way.  A dump
-- never carries a name that is not the row's role (idgen.dump_role_check
-- refuses it), so a restore into another cluster names the right role too.
CREATE FUNCTION idgen.cluster_id() RETURNS bigint
    AS 'MODULE_PATHNAME', 'idgen_cluster_id'
    LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION idgen.cluster_id() IS
    'This cluster''s system identifier (pg_control_system().system_identifier), which rows of tags and keys record';

ALTER TABLE idgen.segment_alloc ADD COLUMN cluster_id bigint;
ALTER TABLE idgen.segment_privilege ADD COLUMN cluster_id bigint;
ALTER TABLE idgen.id_key ADD COLUMN cluster_id bigint;
ALTER TABLE idgen.id_key_privilege ADD COLUMN cluster_id bigint;
COMMENT ON COLUMN idgen.segment_alloc.cluster_id IS
    'System identifier of the cluster whose role owner_id is (idgen.cluster_id()); NULL in rows of before 0.5.0 restored from a dump';
COMMENT ON COLUMN idgen.segment_privilege.cluster_id IS
    'System identifier of the cluster whose role grantee_id is (idgen.cluster_id())';
COMMENT ON COLUMN idgen.id_key.cluster_id IS
    'System identifier of the cluster whose role owner_id is (idgen.cluster_id())';
COMMENT ON COLUMN idgen.id_key_privilege.cluster_id IS
    'System identifier of the cluster whose role grantee_id is (idgen.cluster_id())';

-- The role a row names, as the row triggers store it: for a row of this
-- cluster with an OID, the role of that OID, under its name now; for any
-- other (restored from another cluster, or written without a cluster),
-- the role of its name; (NULL, '') when there is no such role
CREATE FUNCTION idgen.row_role(given_name name, given_id oid, given_cluster bigint,
    OUT role_id oid, OUT role_name name)
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT r.oid, coalesce(r.rolname, '')
    FROM (SELECT 1) AS one
    LEFT JOIN pg_roles r
      ON CASE WHEN given_cluster = idgen.cluster_id() AND given_id IS NOT NULL
              THEN r.oid = given_id
              ELSE r.rolname = given_name END
$$;
COMMENT ON FUNCTION idgen.row_role(name, oid, bigint) IS
    'The role a row of a tag or key names: by OID in the cluster that wrote it, by name in another';
REVOKE ALL ON FUNCTION idgen.row_role(name, oid, bigint) FROM PUBLIC;

-- pg_dump's filter of the four tables (pg_extension_config_dump): a row
-- whose name is not its role now (renamed or dropped while connected to
-- another database) would be restored to whichever role has that name, so
-- the dump stops and says how to refresh the names
CREATE FUNCTION idgen.dump_role_check(kind text, object text, part text,
    role_name name, role_id oid) RETURNS boolean
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    by_name oid := (SELECT r.oid FROM pg_roles r WHERE r.rolname = role_name);
    now_name name := (SELECT r.rolname FROM pg_roles r WHERE r.oid = role_id);
BEGIN
    IF by_name IS NOT DISTINCT FROM (CASE WHEN now_name IS NULL THEN NULL ELSE role_id END) THEN
        RETURN true;
    END IF;
    RAISE EXCEPTION 'cannot dump % "%": its % is recorded as role "%", which is not that role now',
        kind, object, part, role_name
        USING ERRCODE = 'object_not_in_prerequisite_state',
              DETAIL = CASE
                  WHEN now_name IS NOT NULL THEN format('The role was renamed to "%s" while connected to another database; a restore would give the %s''s rights to the role named "%s".', now_name, kind, role_name)
                  WHEN role_id IS NOT NULL THEN format('The role was dropped while connected to another database; a restore would give the %s''s rights to the role now named "%s".', kind, role_name)
                  ELSE format('No role holds it here; a restore would give the %s''s rights to the role now named "%s".', kind, role_name) END,
              HINT = format('Have a superuser run SELECT idgen.role_names_refresh(); in database %s, then dump again.',
                            quote_ident(current_database()));
END
$$;
COMMENT ON FUNCTION idgen.dump_role_check(text, text, text, name, oid) IS
    'pg_dump''s filter of the tables of tags and keys: refuses a row whose role name is stale';

-- The names of this database's owners and grantees made the roles' names
-- now, after roles were renamed or dropped while connected to another
-- database: a dropped owner leaves no owner (a superuser's only), a dropped
-- grantee's privileges go, as PostgreSQL's own do
CREATE FUNCTION idgen.role_names_refresh() RETURNS bigint
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n bigint := 0;
    c bigint;
    t record;
BEGIN
    -- owners: the name of the role of owner_id, or none
    FOR t IN SELECT * FROM (VALUES ('segment_alloc'), ('id_key')) v(tbl) LOOP
        EXECUTE format('UPDATE idgen.%I a SET owner = r.rolname FROM pg_roles r
                         WHERE r.oid = a.owner_id AND a.owner <> r.rolname', t.tbl);
        GET DIAGNOSTICS c = ROW_COUNT; n := n + c;
        EXECUTE format('UPDATE idgen.%I a SET owner = %L, owner_id = NULL
                         WHERE NOT EXISTS (SELECT 1 FROM pg_roles r WHERE r.oid = a.owner_id)
                           AND (a.owner <> %L OR a.owner_id IS NOT NULL)', t.tbl, '', '');
        GET DIAGNOSTICS c = ROW_COUNT; n := n + c;
    END LOOP;
    -- grants: those of roles that are gone (not public's, grantee_id 0),
    -- stale rows of a role that holds the same grant under its name now,
    -- then the names
    FOR t IN SELECT * FROM (VALUES ('segment_privilege', 'biz_tag'),
                                   ('id_key_privilege', 'key_name')) v(tbl, obj) LOOP
        EXECUTE format('DELETE FROM idgen.%I p WHERE p.grantee_id IS DISTINCT FROM 0
                          AND NOT EXISTS (SELECT 1 FROM pg_roles r WHERE r.oid = p.grantee_id)', t.tbl);
        GET DIAGNOSTICS c = ROW_COUNT; n := n + c;
        EXECUTE format('DELETE FROM idgen.%1$I p USING pg_roles r
                         WHERE r.oid = p.grantee_id AND p.grantee <> r.rolname
                           AND EXISTS (SELECT 1 FROM idgen.%1$I q
                                        WHERE q.%2$I = p.%2$I AND q.privilege = p.privilege
                                          AND q.grantee = r.rolname)', t.tbl, t.obj);
        GET DIAGNOSTICS c = ROW_COUNT; n := n + c;
        EXECUTE format('UPDATE idgen.%I p SET grantee = r.rolname FROM pg_roles r
                         WHERE r.oid = p.grantee_id AND p.grantee <> r.rolname', t.tbl);
        GET DIAGNOSTICS c = ROW_COUNT; n := n + c;
    END LOOP;
    RETURN n;
END
$$;
COMMENT ON FUNCTION idgen.role_names_refresh() IS
    'Make the role names kept for pg_dump on this database''s tags and keys those of their roles now (superuser only); returns the rows changed';
REVOKE ALL ON FUNCTION idgen.role_names_refresh() FROM PUBLIC;

-- The rows written before 0.5.0 hold this cluster's roles: record it
UPDATE idgen.segment_alloc SET cluster_id = idgen.cluster_id();
UPDATE idgen.segment_privilege SET cluster_id = idgen.cluster_id();
UPDATE idgen.id_key SET cluster_id = idgen.cluster_id();
UPDATE idgen.id_key_privilege SET cluster_id = idgen.cluster_id();

-- The row triggers store the role idgen.row_role says

CREATE OR REPLACE FUNCTION idgen.segment_alloc_guard() RETURNS trigger
    LANGUAGE plpgsql
    SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    dropped_max bigint;
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT d.max_id INTO dropped_max
        FROM idgen.segment_dropped d WHERE d.biz_tag = NEW.biz_tag;
        IF FOUND AND NEW.max_id < dropped_max THEN
            RAISE EXCEPTION 'segment tag "%" cannot start at %', NEW.biz_tag, NEW.max_id + 1
                USING ERRCODE = 'invalid_parameter_value',
                      DETAIL = format('The tag was dropped after IDs up to %s had been allocated, and they may have been handed out.', dropped_max),
                      HINT = format('Create the tag with a start of %s or more.', dropped_max + 1);
        END IF;
        NEW.max_id := greatest(NEW.max_id,
            (SELECT max(f.max_id) FROM idgen.segment_floor f WHERE f.biz_tag = NEW.biz_tag));
        -- The owner is a role (owner_id), its name kept for dumps: the
        -- role idgen.row_role says (by OID for a row of this cluster, by
        -- name for one of another); none: a superuser's only
        SELECT o.role_id, o.role_name INTO NEW.owner_id, NEW.owner
        FROM idgen.row_role(NEW.owner, NEW.owner_id, NEW.cluster_id) o;
        NEW.cluster_id := idgen.cluster_id();
        RETURN NEW;
    ELSIF TG_OP = 'UPDATE' THEN
        -- A new owner name with the same owner_id (segment_set_owner,
        -- REASSIGN OWNED, ALTER ROLE ... RENAME TO, a superuser's UPDATE):
        -- the role of that name
        IF NEW.owner IS DISTINCT FROM OLD.owner
           AND NEW.owner_id IS NOT DISTINCT FROM OLD.owner_id THEN
            NEW.owner_id := (SELECT r.oid FROM pg_roles r WHERE r.rolname = NEW.owner);
        END IF;
        IF NEW.biz_tag IS DISTINCT FROM OLD.biz_tag THEN
            RAISE EXCEPTION 'cannot rename segment tag "%"', OLD.biz_tag
                USING ERRCODE = 'feature_not_supported',
                      HINT = 'Create a tag of the new name instead.';
        END IF;
        IF NEW.max_id < OLD.max_id THEN
            RAISE EXCEPTION 'cannot move max_id of segment tag "%" backwards', OLD.biz_tag
                USING ERRCODE = 'invalid_parameter_value',
                      DETAIL = format('max_id is %s; the new value %s is smaller.', OLD.max_id, NEW.max_id),
                      HINT = 'IDs up to max_id may have been handed out already; only a larger max_id keeps new IDs unique.';
        END IF;
        RETURN NEW;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO idgen.segment_dropped AS d (biz_tag, max_id)
        VALUES (OLD.biz_tag, OLD.max_id)
        ON CONFLICT (biz_tag) DO UPDATE
            SET max_id = greatest(d.max_id, excluded.max_id), dropped_at = now();
        RETURN OLD;
    END IF;
    -- TRUNCATE
    INSERT INTO idgen.segment_dropped AS d (biz_tag, max_id)
    SELECT a.biz_tag, a.max_id FROM idgen.segment_alloc a
    ON CONFLICT (biz_tag) DO UPDATE
        SET max_id = greatest(d.max_id, excluded.max_id), dropped_at = now();
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION idgen.segment_privilege_guard() RETURNS trigger
    LANGUAGE plpgsql
    SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    given name;
BEGIN
    IF TG_OP = 'DELETE' THEN
        -- a tag deleted or truncated away takes its privileges with it
        DELETE FROM idgen.segment_privilege p WHERE p.biz_tag = OLD.biz_tag;
        RETURN NULL;
    ELSIF TG_OP = 'TRUNCATE' THEN
        DELETE FROM idgen.segment_privilege;
        RETURN NULL;
    END IF;
    given := NEW.grantee;
    SELECT o.role_id, o.role_name INTO NEW.grantee_id, NEW.grantee
    FROM idgen.row_role(NEW.grantee, NEW.grantee_id, NEW.cluster_id) o;
    NEW.cluster_id := idgen.cluster_id();
    -- no role, or a restored row of a role that holds it under its name now
    IF NEW.grantee_id IS NULL OR
       (TG_OP = 'INSERT' AND NEW.grantee IS DISTINCT FROM given AND EXISTS (
            SELECT 1 FROM idgen.segment_privilege p
             WHERE p.biz_tag = NEW.biz_tag AND p.privilege = NEW.privilege
               AND p.grantee = NEW.grantee)) THEN
        RETURN NULL;
    END IF;
    RETURN NEW;
END
$$;

CREATE OR REPLACE FUNCTION idgen.id_key_guard() RETURNS trigger
    LANGUAGE plpgsql
    SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    given name;
BEGIN
    IF TG_TABLE_NAME = 'id_key_privilege' THEN
        given := NEW.grantee;
        IF NEW.grantee = 'public' THEN
            NEW.grantee_id := 0;
        ELSE
            SELECT o.role_id, o.role_name INTO NEW.grantee_id, NEW.grantee
            FROM idgen.row_role(NEW.grantee, NEW.grantee_id, NEW.cluster_id) o;
        END IF;
        NEW.cluster_id := idgen.cluster_id();
        IF NEW.grantee_id IS NULL OR
           (TG_OP = 'INSERT' AND NEW.grantee IS DISTINCT FROM given AND EXISTS (
                SELECT 1 FROM idgen.id_key_privilege p
                 WHERE p.key_name = NEW.key_name AND p.privilege = NEW.privilege
                   AND p.grantee = NEW.grantee)) THEN
            RETURN NULL;
        END IF;
        RETURN NEW;
    END IF;
    IF TG_OP IN ('DELETE', 'TRUNCATE') THEN
        RAISE EXCEPTION 'cannot delete a key of public IDs'
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'Public IDs made with a key decrypt only with it, and a name is never given to other bytes.',
                  HINT = 'Make a new key with idgen.id_key_create() for new public IDs.';
    END IF;
    IF TG_OP = 'UPDATE' AND (NEW.name IS DISTINCT FROM OLD.name
        OR NEW.key IS DISTINCT FROM OLD.key OR NEW.width IS DISTINCT FROM OLD.width) THEN
        RAISE EXCEPTION 'cannot change key "%" of public IDs', OLD.name
            USING ERRCODE = 'feature_not_supported',
                  HINT = 'Make a new key with idgen.id_key_create() for new public IDs.';
    END IF;
    IF TG_OP = 'INSERT' THEN
        SELECT o.role_id, o.role_name INTO NEW.owner_id, NEW.owner
        FROM idgen.row_role(NEW.owner, NEW.owner_id, NEW.cluster_id) o;
        NEW.cluster_id := idgen.cluster_id();
    ELSIF NEW.owner IS DISTINCT FROM OLD.owner THEN
        IF NOT EXISTS (SELECT 1 FROM pg_roles r
                        WHERE r.oid = NEW.owner_id AND r.rolname = NEW.owner) THEN
            NEW.owner_id := (SELECT r.oid FROM pg_roles r WHERE r.rolname = NEW.owner);
        END IF;
    END IF;
    RETURN NEW;
END
$$;

COMMENT ON FUNCTION idgen.segment_privilege_guard() IS
    'Triggers of idgen.segment_privilege (the grantee is the role idgen.row_role says) and idgen.segment_alloc (a dropped tag takes its privileges with it)';
COMMENT ON FUNCTION idgen.id_key_guard() IS
    'Trigger of idgen.id_key (a key never changes nor goes) and idgen.id_key_privilege (grantees are the roles idgen.row_role says)';

-- pg_dump refuses a row whose role name is stale (idgen.dump_role_check)
SELECT pg_catalog.pg_extension_config_dump('idgen.segment_alloc',
    'WHERE idgen.dump_role_check(''segment tag'', biz_tag, ''owner'', owner, owner_id)');
SELECT pg_catalog.pg_extension_config_dump('idgen.segment_privilege',
    'WHERE idgen.dump_role_check(''segment tag'', biz_tag, ''grantee of '' || privilege, grantee, grantee_id)');
SELECT pg_catalog.pg_extension_config_dump('idgen.id_key',
    'WHERE idgen.dump_role_check(''key'', name, ''owner'', owner, owner_id)');
SELECT pg_catalog.pg_extension_config_dump('idgen.id_key_privilege',
    'WHERE idgen.dump_role_check(''key'', key_name, ''grantee of '' || privilege, grantee, grantee_id)');

-- snowflake_refusal()'s restored is also true on a timeline whose low
-- idgen.node_timeline_bits bits came round (snowflake_resume lifts both)
COMMENT ON FUNCTION idgen.snowflake_refusal() IS
    'Whether snowflake IDs are refused until snowflake_resume, because this server was started from a backup or after archive recovery, or was promoted onto a timeline whose low idgen.node_timeline_bits bits an earlier timeline had (restored), or because idgen.layout or idgen.node_id changed (layout_changed)';
