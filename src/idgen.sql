/* src/idgen.sql: the install script of idgen's current version.
 *
 * The Makefile builds idgen--<version>.sql from this file (the version from
 * idgen.control); CREATE EXTENSION idgen runs it directly.  A database that
 * has an older version reaches the same objects through the update scripts
 * idgen--A--B.sql; test/t/095_upgrade.pl compares the two object by object.
 * A change of SQL goes here and into the next update script, both.
 */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION idgen" to load this file. \quit

-- The schema belongs to the extension (the control file names pg_catalog,
-- which always exists), so DROP EXTENSION idgen removes it too.
CREATE SCHEMA idgen;
COMMENT ON SCHEMA idgen IS 'idgen: 64-bit ID generators';

-- Generators need only EXECUTE: let every role reach the schema
GRANT USAGE ON SCHEMA idgen TO PUBLIC;

-- BEGIN snowflake

-- The durable high-water mark of the snowflake generator: one row, written
-- only by the idgen worker.  The mark itself lives first in the data
-- directory's idgen.state file (src/snowflake_state.c); the row carries it to
-- standbys and through pg_upgrade.  It is the server's state, not data to
-- dump: a restored old row must never meet the live one.
CREATE TABLE idgen.snowflake_reservation (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    reserved_until timestamptz NOT NULL
);
COMMENT ON TABLE idgen.snowflake_reservation IS
    'Copy of the snowflake high-water mark for standbys and pg_upgrade; written by the idgen worker, which keeps the mark itself in the data directory''s idgen.state file';
REVOKE ALL ON TABLE idgen.snowflake_reservation FROM PUBLIC;

CREATE FUNCTION idgen.snowflake_nextval() RETURNS bigint
    AS 'MODULE_PATHNAME', 'snowflake_nextval'
    LANGUAGE C VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION idgen.snowflake_nextval() IS
    'Next time-ordered 64-bit ID from this server''s shared generator';

CREATE FUNCTION idgen.snowflake_status(
    OUT node_id int,
    OUT layout text,
    OUT last_tick timestamptz,
    OUT lead_ms float8,
    OUT reserved_until timestamptz,
    OUT issued bigint,
    OUT clock_back_events bigint,
    OUT clock_waits bigint,
    OUT reservation_waits bigint,
    OUT worker_running boolean,
    OUT durable_until timestamptz,
    OUT layout_end timestamptz)
    AS 'MODULE_PATHNAME', 'snowflake_status'
    LANGUAGE C VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION idgen.snowflake_status() IS
    'State of this server''s snowflake generator: node, layout, last tick, lead, reservation, counters, when the layout runs out';

-- After a change of idgen.layout or idgen.node_id that could make new IDs
-- smaller than issued ones, snowflake IDs are refused until a superuser
-- accepts the change with this function.
CREATE FUNCTION idgen.snowflake_accept_layout() RETURNS boolean
    AS 'MODULE_PATHNAME', 'snowflake_accept_layout'
    LANGUAGE C VOLATILE;
COMMENT ON FUNCTION idgen.snowflake_accept_layout() IS
    'Superuser only: accept a change of idgen.layout or idgen.node_id under which new snowflake IDs may be smaller than issued ones; false if nothing was refused';
REVOKE ALL ON FUNCTION idgen.snowflake_accept_layout() FROM PUBLIC;

-- The last ID this session drew, as a sequence's currval: for code written
-- for sequences (and pgEdge's snowflake.currval) that reads the ID just
-- drawn instead of using RETURNING.  Process-local, so PARALLEL RESTRICTED.
CREATE FUNCTION idgen.snowflake_currval()
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_currval'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION idgen.snowflake_currval() IS
    'The last snowflake ID this session drew with snowflake_nextval() or gene_id(key, bits); error 55000 before the first, as a sequence''s currval';

-- END snowflake

-- BEGIN decode and make

CREATE FUNCTION idgen.id_decode(id bigint,
    OUT ts timestamptz, OUT node_id bigint, OUT sequence bigint,
    OUT tick bigint, OUT extra jsonb)
    AS 'MODULE_PATHNAME', 'id_decode'
    LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION idgen.id_decode(id bigint, layout text,
    OUT ts timestamptz, OUT node_id bigint, OUT sequence bigint,
    OUT tick bigint, OUT extra jsonb)
    AS 'MODULE_PATHNAME', 'id_decode'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION idgen.id_decode(bigint) IS
    'Timestamp, node, sequence, tick and extra fields of an ID under the server''s idgen.layout';
COMMENT ON FUNCTION idgen.id_decode(bigint, text) IS
    'Timestamp, node, sequence, tick and extra fields of an ID under the given layout';

CREATE FUNCTION idgen.id_timestamp(id bigint) RETURNS timestamptz
    AS 'MODULE_PATHNAME', 'id_timestamp'
    LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION idgen.id_timestamp(id bigint, layout text) RETURNS timestamptz
    AS 'MODULE_PATHNAME', 'id_timestamp'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION idgen.id_timestamp(bigint) IS
    'Time of an ID under the server''s idgen.layout';
COMMENT ON FUNCTION idgen.id_timestamp(bigint, text) IS
    'Time of an ID under the given layout';

CREATE FUNCTION idgen.id_make(ts timestamptz, node_id bigint, sequence bigint)
    RETURNS bigint
    AS 'MODULE_PATHNAME', 'id_make'
    LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION idgen.id_make(ts timestamptz, node_id bigint, sequence bigint,
    layout text) RETURNS bigint
    AS 'MODULE_PATHNAME', 'id_make'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION idgen.id_make(timestamptz, bigint, bigint) IS
    'Build an ID from its time, node and sequence under the server''s idgen.layout';
COMMENT ON FUNCTION idgen.id_make(timestamptz, bigint, bigint, text) IS
    'Build an ID from its time, node and sequence under the given layout';
CREATE FUNCTION idgen.id_make(ts timestamptz, node_id bigint, sequence bigint,
    layout text, extra jsonb) RETURNS bigint
    AS 'MODULE_PATHNAME', 'id_make_extra'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION idgen.id_make(timestamptz, bigint, bigint, text, jsonb) IS
    'ID of that time, node and sequence under a named layout, its constant fields (method, type, version) taken from extra as id_decode returns it';

-- END decode and make

-- BEGIN partitions

-- Partitioning a table by ID, by time (docs/partitions.md): id_floor is a
-- partition bound (the smallest ID of a time), id_interval the width of a
-- duration in IDs (pg_partman's p_interval for an integer control column).
-- Like id_make: STABLE with the server's layout, IMMUTABLE with a named one.
CREATE FUNCTION idgen.id_floor(ts timestamptz) RETURNS bigint
    AS 'MODULE_PATHNAME', 'id_floor'
    LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION idgen.id_floor(timestamptz) IS
    'Smallest ID of that time under the server''s layout, id_make(ts, 0, 0): a partition bound';
CREATE FUNCTION idgen.id_floor(ts timestamptz, layout text) RETURNS bigint
    AS 'MODULE_PATHNAME', 'id_floor'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION idgen.id_floor(timestamptz, text) IS
    'Smallest ID of that time under the layout, id_make(ts, 0, 0, layout): a partition bound';
CREATE FUNCTION idgen.id_interval(span interval) RETURNS bigint
    AS 'MODULE_PATHNAME', 'id_interval'
    LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION idgen.id_interval(interval) IS
    'ID width of a duration under the server''s layout (a whole number of ticks, no months): a partition interval';
CREATE FUNCTION idgen.id_interval(span interval, layout text) RETURNS bigint
    AS 'MODULE_PATHNAME', 'id_interval'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION idgen.id_interval(interval, text) IS
    'ID width of a duration under the layout (a whole number of ticks, no months): a partition interval';

-- END partitions

-- BEGIN gene and codec functions

CREATE FUNCTION idgen.gene_of(key text, bits int) RETURNS int
    AS 'MODULE_PATHNAME', 'gene_of_text'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION idgen.gene_of(text, int) IS
    'Low bits of the key''s Java String.hashCode(): the same gene a Java application computes';
CREATE FUNCTION idgen.gene_of(key bigint, bits int) RETURNS int
    AS 'MODULE_PATHNAME', 'gene_of_int8'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION idgen.gene_of(bigint, int) IS
    'Low bits of an integer key';

CREATE FUNCTION idgen.gene_id(origin bigint, key text, bits int) RETURNS bigint
    AS 'MODULE_PATHNAME', 'gene_id_origin_text'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION idgen.gene_id(bigint, text, int) IS
    '(origin << bits) | gene_of(key, bits)';
CREATE FUNCTION idgen.gene_id(origin bigint, key bigint, bits int) RETURNS bigint
    AS 'MODULE_PATHNAME', 'gene_id_origin_int8'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION idgen.gene_id(bigint, bigint, int) IS
    '(origin << bits) | gene_of(key, bits)';

CREATE FUNCTION idgen.gene_id(key text, bits int) RETURNS bigint
    AS 'MODULE_PATHNAME', 'gene_id_text'
    LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION idgen.gene_id(text, int) IS
    'Next snowflake ID whose low bits are gene_of(key, bits)';
CREATE FUNCTION idgen.gene_id(key bigint, bits int) RETURNS bigint
    AS 'MODULE_PATHNAME', 'gene_id_int8'
    LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION idgen.gene_id(bigint, int) IS
    'Next snowflake ID whose low bits are gene_of(key, bits)';

CREATE FUNCTION idgen.gene_decode(id bigint, bits int,
    OUT origin bigint, OUT gene int)
    AS 'MODULE_PATHNAME', 'gene_decode'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION idgen.gene_decode(bigint, int) IS
    'Origin (id >> bits) and gene (low bits) of a gene ID';

CREATE FUNCTION idgen.id_to_base62(id bigint) RETURNS text
    AS 'MODULE_PATHNAME', 'id_to_base62'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION idgen.id_to_base62(bigint) IS
    '11-character base62 form (0-9A-Za-z); sorts like the number under COLLATE "C"';
CREATE FUNCTION idgen.id_from_base62(text) RETURNS bigint
    AS 'MODULE_PATHNAME', 'id_from_base62'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION idgen.id_from_base62(text) IS
    'Inverse of id_to_base62: 1 to 11 base62 characters, padded or not';

CREATE FUNCTION idgen.id_to_friendly(id bigint) RETURNS text
    AS 'MODULE_PATHNAME', 'id_to_friendly'
    LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION idgen.id_to_friendly(id bigint, layout text) RETURNS text
    AS 'MODULE_PATHNAME', 'id_to_friendly'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION idgen.id_to_friendly(bigint) IS
    'yyyyMMddHHmmssSSS-node-sequence (yyyyMMddHHmmss for layouts of whole seconds, time in UTC) under the server''s idgen.layout';
COMMENT ON FUNCTION idgen.id_to_friendly(bigint, text) IS
    'yyyyMMddHHmmssSSS-node-sequence (yyyyMMddHHmmss for layouts of whole seconds, time in UTC) under the given layout';
CREATE FUNCTION idgen.id_from_friendly(text) RETURNS bigint
    AS 'MODULE_PATHNAME', 'id_from_friendly'
    LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION idgen.id_from_friendly(text, layout text) RETURNS bigint
    AS 'MODULE_PATHNAME', 'id_from_friendly'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION idgen.id_from_friendly(text) IS
    'Inverse of id_to_friendly(bigint)';
COMMENT ON FUNCTION idgen.id_from_friendly(text, text) IS
    'Inverse of id_to_friendly(bigint, text)';

-- Text forms compatible with CosId (issue 14, point 2).  id_from_base62
-- (unchanged signature) now also reads CosId's unpadded form, 1 to 11
-- characters.  The friendly form writes 14 digits of time for layouts whose
-- ticks are whole seconds, reads 14 or 17 for them, and reads node and
-- sequence with leading zeros (CosId's padStart).
CREATE FUNCTION idgen.id_to_base62(id bigint, pad boolean) RETURNS text
    AS 'MODULE_PATHNAME', 'id_to_base62'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION idgen.id_to_base62(bigint, boolean) IS
    'Base62 form (0-9A-Za-z): 11 characters, or with pad false without leading zeros as CosId''s Radix62IdConverter writes it';
CREATE FUNCTION idgen.id_to_friendly(id bigint, layout text, zone text) RETURNS text
    AS 'MODULE_PATHNAME', 'id_to_friendly'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION idgen.id_to_friendly(bigint, text, text) IS
    'yyyyMMddHHmmssSSS-node-sequence (yyyyMMddHHmmss for layouts of whole seconds) under the given layout, time in the given zone';
CREATE FUNCTION idgen.id_from_friendly(text, layout text, zone text) RETURNS bigint
    AS 'MODULE_PATHNAME', 'id_from_friendly'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION idgen.id_from_friendly(text, text, text) IS
    'Inverse of id_to_friendly(bigint, text, text): the time is read in the given zone';

-- END gene and codec functions

-- BEGIN segment

-- Leaf's allocation table: max_id is the last ID given to a segment of the
-- tag.  Allocations are written only by the idgen worker (src/segment_alloc.c);
-- segment_create/alter/drop change rows, never moving max_id backwards.
CREATE TABLE idgen.segment_alloc (
    biz_tag text PRIMARY KEY
        CHECK (octet_length(biz_tag) BETWEEN 1 AND 128),
    max_id bigint NOT NULL,
    step int NOT NULL CHECK (step > 0),
    description text,
    update_time timestamptz NOT NULL DEFAULT now(),
    owner name NOT NULL DEFAULT CURRENT_USER,
    cache int NOT NULL DEFAULT 1 CHECK (cache BETWEEN 1 AND 10000),
    owner_id oid
);
COMMENT ON TABLE idgen.segment_alloc IS
    'Segment tags (Leaf): IDs up to max_id have been allocated; step is the smallest step';
COMMENT ON COLUMN idgen.segment_alloc.owner IS
    'Name of the role that owns the tag (owner_id), kept for pg_dump: a restored row whose owner_id is not the role of this name takes the role of this name';
COMMENT ON COLUMN idgen.segment_alloc.owner_id IS
    'Role that owns the tag: only it, its members and superusers alter, drop, export or import over the tag; a role that no longer exists leaves the tag to superusers';
COMMENT ON COLUMN idgen.segment_alloc.cache IS
    'IDs each backend takes at once and hands out itself, as a sequence''s CACHE: 1 (off) keeps the order across backends; above 1, IDs still increase within a backend but not across backends, and unused cached IDs are skipped';
REVOKE ALL ON TABLE idgen.segment_alloc FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('idgen.segment_alloc',
    'WHERE idgen.dump_role_check(''segment tag'', biz_tag, ''owner'', owner, owner_id)');

CREATE FUNCTION idgen.segment_nextval(tag text) RETURNS bigint
    AS 'MODULE_PATHNAME', 'segment_nextval'
    LANGUAGE C VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION idgen.segment_nextval(text) IS
    'Next ID of a segment tag, from the shared segment cache';

CREATE FUNCTION idgen.segment_create(tag text, start bigint DEFAULT 1,
    step int DEFAULT 1000, description text DEFAULT NULL,
    cache int DEFAULT 1) RETURNS void
    AS 'MODULE_PATHNAME', 'segment_create'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION idgen.segment_create(text, bigint, int, text, int) IS
    'Create a segment tag whose first ID is start';

CREATE FUNCTION idgen.segment_alter(tag text, step int DEFAULT NULL,
    description text DEFAULT NULL, max_id bigint DEFAULT NULL,
    cache int DEFAULT NULL) RETURNS void
    AS 'MODULE_PATHNAME', 'segment_alter'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION idgen.segment_alter(text, int, text, bigint, int) IS
    'Change the step, description or cache of a segment tag, or move its max_id forward';

CREATE FUNCTION idgen.segment_drop(tag text) RETURNS void
    AS 'MODULE_PATHNAME', 'segment_drop'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION idgen.segment_drop(text) IS
    'Drop a segment tag';

-- Tag administration needs only EXECUTE: the functions check the caller
-- (SECURITY INVOKER), then write the table as its owner, with a pinned
-- search_path, and never move max_id backwards.  A role needs no privilege
-- on idgen.segment_alloc.  A tag is owned by the role that created it;
-- altering, dropping and handing it on need that role's privileges
-- (membership that inherits) or a superuser, as for a sequence.
REVOKE ALL ON FUNCTION idgen.segment_create(text, bigint, int, text, int) FROM PUBLIC;
REVOKE ALL ON FUNCTION idgen.segment_alter(text, int, text, bigint, int) FROM PUBLIC;
REVOKE ALL ON FUNCTION idgen.segment_drop(text) FROM PUBLIC;

CREATE FUNCTION idgen.segment_set_owner(tag text, new_owner regrole) RETURNS void
    AS 'MODULE_PATHNAME', 'segment_set_owner'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION idgen.segment_set_owner(text, regrole) IS
    'Hand a segment tag to another role: by its owner (who must be a member of the new owner) or a superuser';
REVOKE ALL ON FUNCTION idgen.segment_set_owner(text, regrole) FROM PUBLIC;


CREATE FUNCTION idgen.segment_status_fn(
    OUT biz_tag text,
    OUT state text,
    OUT cur_value bigint,
    OUT cur_max bigint,
    OUT cur_step bigint,
    OUT next_ready boolean,
    OUT next_value bigint,
    OUT next_max bigint,
    OUT next_step bigint,
    OUT step bigint,
    OUT fetches bigint,
    OUT waits bigint,
    OUT last_fetch timestamptz,
    OUT epoch bigint,
    OUT chain_length int,
    OUT segments_ready int,
    OUT standby_timeouts bigint,
    OUT unprotected bigint)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'segment_status_fn'
    LANGUAGE C VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION idgen.segment_status_fn() IS
    'Rows of the idgen.segment_status view: segment tags in shared memory';
CREATE VIEW idgen.segment_status AS
    SELECT * FROM idgen.segment_status_fn();
COMMENT ON VIEW idgen.segment_status IS
    'Segment tags in shared memory: current and next segment, dynamic step, chain of segments ready ahead, allocations, waits, allocations handed out before every streaming standby had flushed them, and allocations handed out with no streaming standby where one was expected';
REVOKE ALL ON FUNCTION idgen.segment_status_fn() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idgen.segment_status_fn() TO pg_monitor;
GRANT SELECT ON idgen.segment_status TO pg_monitor;

-- Tags that were dropped, with the last ID allocated to them: a tag of the
-- same name can only be created again above it, so no ID is handed out
-- twice.
CREATE TABLE idgen.segment_dropped (
    biz_tag text PRIMARY KEY,
    max_id bigint NOT NULL,
    dropped_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE idgen.segment_dropped IS
    'Dropped segment tags and the last ID allocated to each; a tag created again starts above it';
REVOKE ALL ON TABLE idgen.segment_dropped FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('idgen.segment_dropped', '');

-- Guards idgen.segment_alloc against every writer, the tag functions, the
-- worker and a role with table privileges alike: max_id never moves
-- backwards, a tag is never renamed, a deleted or truncated tag leaves its
-- max_id in idgen.segment_dropped, and an inserted row is raised to its
-- tag's floor in idgen.segment_floor (below).  idgen.adopt_column reads the
-- start from the hint of its refusal of a dropped tag.
CREATE FUNCTION idgen.segment_alloc_guard() RETURNS trigger
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
COMMENT ON FUNCTION idgen.segment_alloc_guard() IS
    'Trigger of idgen.segment_alloc: max_id never moves backwards, dropped tags are remembered';
REVOKE ALL ON FUNCTION idgen.segment_alloc_guard() FROM PUBLIC;

CREATE TRIGGER segment_alloc_guard
    BEFORE INSERT OR UPDATE OR DELETE ON idgen.segment_alloc
    FOR EACH ROW EXECUTE FUNCTION idgen.segment_alloc_guard();
CREATE TRIGGER segment_alloc_guard_truncate
    BEFORE TRUNCATE ON idgen.segment_alloc
    FOR EACH STATEMENT EXECUTE FUNCTION idgen.segment_alloc_guard();

-- Segment tags outlive the extension (src/segment_keep.c): when extension
-- idgen is dropped, the last max_id of every tag is kept in the data
-- directory, and CREATE EXTENSION reads it back into idgen.segment_floor.
-- A tag of that name is created again only above its floor
-- (segment_create refuses a lower start), and a row inserted otherwise
-- (pg_restore of an older dump, segment_import_leaf) is raised to it.  No
-- primary key: a restore appends the dumped floors to those read back.
CREATE FUNCTION idgen.segment_kept_floors(OUT biz_tag text, OUT max_id bigint)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'segment_kept_floors'
    LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION idgen.segment_kept_floors() IS
    'Segment tags of this database kept in the data directory when extension idgen was last dropped';
REVOKE ALL ON FUNCTION idgen.segment_kept_floors() FROM PUBLIC;

CREATE TABLE idgen.segment_floor (
    biz_tag text NOT NULL,
    max_id bigint NOT NULL
);
COMMENT ON TABLE idgen.segment_floor IS
    'Floors of segment tags from before extension idgen was dropped: a tag is created again only above its floor';
REVOKE ALL ON TABLE idgen.segment_floor FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('idgen.segment_floor', '');
INSERT INTO idgen.segment_floor (biz_tag, max_id)
    SELECT k.biz_tag, k.max_id FROM idgen.segment_kept_floors() k;

-- Load the library in a session that drops the extension, so that its
-- hook keeps the tags (above) also on a server where idgen is not
-- preloaded (a central segment server): an event trigger of the
-- extension's, fired before DROP EXTENSION, DROP SCHEMA and DROP OWNED.
CREATE FUNCTION idgen.segment_keep_on_drop() RETURNS event_trigger
    AS 'MODULE_PATHNAME', 'segment_keep_on_drop'
    LANGUAGE C;
COMMENT ON FUNCTION idgen.segment_keep_on_drop() IS
    'Event trigger function: loads idgen before a drop, so that the segment tags are kept in the data directory';
CREATE EVENT TRIGGER idgen_segment_keep
    ON ddl_command_start
    WHEN TAG IN ('DROP EXTENSION', 'DROP SCHEMA', 'DROP OWNED')
    EXECUTE FUNCTION idgen.segment_keep_on_drop();
COMMENT ON EVENT TRIGGER idgen_segment_keep IS
    'Loads idgen before DROP EXTENSION, DROP SCHEMA and DROP OWNED, so that the segment tags outlive the extension without the preload too';

-- The last ID this session drew from a tag, as a sequence's currval
CREATE FUNCTION idgen.segment_currval(tag text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'segment_currval'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION idgen.segment_currval(text) IS
    'The last ID this session drew from the tag with segment_nextval(tag); error 55000 before the first, as a sequence''s currval';

-- Moving a tag between Leaf's leaf_alloc and idgen.segment_alloc (issue 14,
-- point 3).  Leaf's max_id is the next unused ID (its segments are
-- [max_id - step, max_id)); idgen's is the last allocated one.  Like
-- segment_create, these need only EXECUTE, run as their caller, check the
-- tag's owner and write the table as its owner (src/segment_sql.c), so the
-- segment_alloc_guard trigger and the tombstones in idgen.segment_dropped
-- apply: an import never goes below a dropped tag.
CREATE FUNCTION idgen.segment_import_leaf(biz_tag text, max_id bigint,
    step int, description text DEFAULT NULL) RETURNS void
    AS 'MODULE_PATHNAME', 'segment_import_leaf'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION idgen.segment_import_leaf(text, bigint, int, text) IS
    'Create a segment tag from a row of Leaf''s leaf_alloc (max_id = next unused ID), or move an existing tag forward to it';
REVOKE ALL ON FUNCTION idgen.segment_import_leaf(text, bigint, int, text) FROM PUBLIC;

CREATE FUNCTION idgen.segment_export_leaf(tag text, drop_tag boolean DEFAULT true,
    OUT biz_tag text, OUT max_id bigint, OUT step int, OUT description text,
    OUT update_time timestamptz)
    AS 'MODULE_PATHNAME', 'segment_export_leaf'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION idgen.segment_export_leaf(text, boolean) IS
    'A segment tag as a row of Leaf''s leaf_alloc (max_id = next unused ID); drops the tag unless drop_tag is false';
REVOKE ALL ON FUNCTION idgen.segment_export_leaf(text, boolean) FROM PUBLIC;

-- END segment

-- BEGIN node leases

-- The bounds a node registry and a central segment server enforce, read
-- from the serving server's own configuration.  Calling this function loads
-- the library, which defines both settings (also without the preload) as
-- reload-only: a caller's SET, set_config or ALTER ROLE/DATABASE ... SET
-- cannot change them, only postgresql.conf or ALTER SYSTEM can.
CREATE FUNCTION idgen.serving_settings(OUT node_lease_guard interval,
    OUT segment_max_step bigint, OUT node_lease_max_time interval)
    RETURNS record
    LANGUAGE C STABLE PARALLEL RESTRICTED
    AS 'MODULE_PATHNAME', 'serving_settings';
COMMENT ON FUNCTION idgen.serving_settings() IS
    'Bounds this server enforces as node registry (idgen.node_lease_guard, idgen.node_lease_max_time) and central segment server (idgen.segment_max_step), from its own configuration only';

-- The lease a node registry grants for lease_ms: at least a second, and
-- refused (22023) beyond the registry's own idgen.node_lease_max_time, so
-- that no caller holds a node id longer than the registry allows.
CREATE FUNCTION idgen.node_lease_interval(lease_ms int) RETURNS interval
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    most interval := (SELECT s.node_lease_max_time FROM idgen.serving_settings() s);
    lease interval := greatest(coalesce(lease_ms, 0), 1000) * interval '1 ms';
BEGIN
    IF lease > most THEN
        RAISE EXCEPTION 'node lease time % is longer than this registry allows', justify_hours(lease)
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('The registry''s idgen.node_lease_max_time is %s.', most),
                  HINT = 'Lower idgen.node_lease_time on the server that asks, or raise idgen.node_lease_max_time on the registry.';
    END IF;
    RETURN lease;
END
$$;
COMMENT ON FUNCTION idgen.node_lease_interval(int) IS
    'Lease time a node registry grants for a request (at least 1 s, at most its idgen.node_lease_max_time)';

-- One row per namespace; node_lease_acquire locks its namespace's row to
-- take one lease at a time.  No other role may read or lock it (unlike an
-- advisory lock, which any role can take).
CREATE TABLE idgen.node_lease_lock (
    namespace text PRIMARY KEY
);
COMMENT ON TABLE idgen.node_lease_lock IS
    'Lock rows of node_lease_acquire, one per namespace: acquisitions in a namespace take one at a time';
REVOKE ALL ON TABLE idgen.node_lease_lock FROM PUBLIC;

-- Node ids leased to servers with idgen.node_id = 'auto' (src/lease.c).
-- Used only in the registry database named by their idgen.node_registry.
-- The functions below are SECURITY DEFINER, so the role servers connect as
-- needs only EXECUTE on them.
-- last_tick is the holder's promise: the highest tick it may use before its
-- lease runs out; the next holder of the id starts above it.
CREATE TABLE idgen.node_lease (
    namespace  text NOT NULL,
    node_id    int NOT NULL CHECK (node_id >= 0),
    instance   text NOT NULL,
    heartbeat  timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    last_tick  bigint NOT NULL,
    PRIMARY KEY (namespace, node_id)
);
COMMENT ON TABLE idgen.node_lease IS
    'Node id leases of servers with idgen.node_id = ''auto''; written by their idgen workers.';
REVOKE ALL ON TABLE idgen.node_lease FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('idgen.node_lease', '');

-- Lease a node id for lease_instance: its own row, else the lowest id whose
-- lease ended more than the registry's guard ago, else the lowest id never
-- leased; leased_node is NULL when every id up to max_node is taken.
-- The registry sets the bounds: the guard time is the registry's own
-- idgen.node_lease_guard (10 s where it is not set), a lease lasts at least
-- a second and is never shortened, and the caller's guard_ms is ignored.
-- So no argument value takes over a live lease.  A server's instance name
-- ends with a random key of its data directory, which callers cannot guess.
CREATE FUNCTION idgen.node_lease_acquire(lease_namespace text,
    lease_instance text, max_node int, lease_ms int, guard_ms int,
    promise_tick bigint,
    OUT leased_node int, OUT previous_instance text,
    OUT previous_last_tick bigint)
    LANGUAGE plpgsql
    SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r record;
    guard interval := (SELECT s.node_lease_guard FROM idgen.serving_settings() s);
    lease interval := idgen.node_lease_interval(lease_ms);
    top int := least(coalesce(max_node, -1), 1048574);
BEGIN
    IF lease_namespace IS NULL OR lease_instance IS NULL THEN
        RAISE EXCEPTION 'node lease namespace and instance cannot be null'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF octet_length(lease_namespace) > 128 THEN
        RAISE EXCEPTION 'node lease namespace is too long'
            USING ERRCODE = 'name_too_long',
                  DETAIL = format('A namespace has at most 128 bytes; this one has %s.',
                                  octet_length(lease_namespace));
    END IF;
    -- One acquisition at a time in a namespace; renewals are not blocked
    INSERT INTO idgen.node_lease_lock AS k (namespace)
    VALUES (lease_namespace) ON CONFLICT DO NOTHING;
    PERFORM FROM idgen.node_lease_lock k
    WHERE k.namespace = lease_namespace FOR UPDATE;

    SELECT l.node_id, l.instance, l.last_tick INTO r
    FROM idgen.node_lease l
    WHERE l.namespace = lease_namespace AND l.node_id <= top
      AND (l.instance = lease_instance OR l.expires_at + guard < now())
    ORDER BY l.instance = lease_instance DESC, l.node_id
    LIMIT 1
    FOR UPDATE;
    IF FOUND THEN
        UPDATE idgen.node_lease l
        SET instance = lease_instance, heartbeat = now(),
            expires_at = CASE WHEN l.instance = lease_instance
                              THEN greatest(l.expires_at, now() + lease)
                              ELSE now() + lease END,
            last_tick = greatest(l.last_tick, promise_tick)
        WHERE l.namespace = lease_namespace AND l.node_id = r.node_id;
        leased_node := r.node_id;
        -- Another server's name without its key (which would let the
        -- caller act as that server); NULL when the row was the caller's
        IF r.instance <> lease_instance THEN
            previous_instance := regexp_replace(r.instance, ' key [0-9a-f]+$', '');
            previous_last_tick := r.last_tick;
        END IF;
        RETURN;
    END IF;

    -- The lowest id never leased: 0, or one above a leased one
    SELECT c.n INTO leased_node
    FROM (SELECT 0 AS n
          UNION ALL
          SELECT l.node_id + 1 FROM idgen.node_lease l
          WHERE l.namespace = lease_namespace) c
    WHERE c.n <= top
      AND NOT EXISTS (SELECT FROM idgen.node_lease l
                      WHERE l.namespace = lease_namespace AND l.node_id = c.n)
    ORDER BY c.n
    LIMIT 1;
    IF leased_node IS NOT NULL THEN
        INSERT INTO idgen.node_lease
            (namespace, node_id, instance, heartbeat, expires_at, last_tick)
        VALUES (lease_namespace, leased_node, lease_instance, now(),
                now() + lease, promise_tick);
    END IF;
END
$$;
COMMENT ON FUNCTION idgen.node_lease_acquire(text, text, int, int, int, bigint) IS
    'Called by the idgen worker of a server with idgen.node_id = ''auto'' to lease a node id';
REVOKE ALL ON FUNCTION idgen.node_lease_acquire(text, text, int, int, int, bigint) FROM PUBLIC;

-- Renew lease_instance's lease of lease_node; false if another holds it
CREATE FUNCTION idgen.node_lease_renew(lease_namespace text,
    lease_node int, lease_instance text, lease_ms int, promise_tick bigint)
    RETURNS boolean
    LANGUAGE plpgsql
    SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    UPDATE idgen.node_lease l
    SET heartbeat = now(),
        expires_at = greatest(l.expires_at,
                              now() + idgen.node_lease_interval(lease_ms)),
        last_tick = greatest(l.last_tick, promise_tick)
    WHERE l.namespace = lease_namespace AND l.node_id = lease_node
      AND l.instance = lease_instance;
    RETURN FOUND;
END
$$;
COMMENT ON FUNCTION idgen.node_lease_renew(text, int, text, int, bigint) IS
    'Called by the idgen worker of a server with idgen.node_id = ''auto'' to renew its lease';
REVOKE ALL ON FUNCTION idgen.node_lease_renew(text, int, text, int, bigint) FROM PUBLIC;

-- This server's side of its lease
CREATE FUNCTION idgen.node_lease_status(
    OUT auto boolean,
    OUT node_id int,
    OUT valid boolean,
    OUT valid_for_ms bigint,
    OUT instance text,
    OUT renewed_at timestamptz,
    OUT taken_over_tick bigint,
    OUT last_error text)
    AS 'MODULE_PATHNAME', 'node_lease_status'
    LANGUAGE C VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION idgen.node_lease_status() IS
    'Node id lease of this server (idgen.node_id = ''auto''): node, validity, last renewal and error';
REVOKE ALL ON FUNCTION idgen.node_lease_status() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idgen.node_lease_status() TO pg_monitor;

-- END node leases

-- BEGIN central segment server

-- Called over libpq by the idgen workers of servers whose
-- idgen.segment_server names this database (src/segment_remote.c): allocate
-- the next segment of tag, of want_step IDs kept between the tag's step and
-- greatest(max_step, step), and commit it durably before answering.
-- known is false for an unknown tag; first_id is NULL when the tag has run
-- out.  SECURITY DEFINER so that issuing servers need only EXECUTE.
-- The largest step is the central server's own idgen.segment_max_step
-- (1,000,000 where it is not set); the caller's max_step is ignored, so no
-- issuer can take more of a tag than the central server allows.
CREATE FUNCTION idgen.segment_allocate(tag text, want_step bigint,
    max_step bigint, OUT known boolean, OUT first_id bigint, OUT len bigint)
    LANGUAGE plpgsql
    SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r record;
    s bigint;
    server_max bigint := (SELECT s.segment_max_step FROM idgen.serving_settings() s);
BEGIN
    PERFORM set_config('synchronous_commit', 'on', true);
    SELECT a.max_id, a.step INTO r
    FROM idgen.segment_alloc a WHERE a.biz_tag = tag FOR UPDATE;
    IF NOT FOUND THEN
        known := false;
        RETURN;
    END IF;
    known := true;
    IF r.max_id >= 9223372036854775807 THEN
        RETURN;
    END IF;
    s := least(greatest(coalesce(want_step, r.step), r.step),
               greatest(server_max, r.step));
    IF r.max_id > 9223372036854775807 - s THEN
        s := 9223372036854775807 - r.max_id;
    END IF;
    UPDATE idgen.segment_alloc a SET max_id = r.max_id + s, update_time = now()
    WHERE a.biz_tag = tag;
    first_id := r.max_id + 1;
    len := s;
END
$$;
COMMENT ON FUNCTION idgen.segment_allocate(text, bigint, bigint) IS
    'Allocate a segment for an issuing server whose idgen.segment_server names this database';
REVOKE ALL ON FUNCTION idgen.segment_allocate(text, bigint, bigint) FROM PUBLIC;

-- END central segment server

-- BEGIN advance

-- A superuser makes every later snowflake and gene ID of this server larger
-- than min_id, durably (state file and reservation row).  It never lifts the
-- refusal of a server started from a backup or after archive recovery with
-- a fixed node id (docs/durability.md, "Restored copies"): only
-- snowflake_resume, whose caller vouches for the original's last ID, does.
CREATE FUNCTION idgen.snowflake_advance(min_id bigint) RETURNS void
    AS 'MODULE_PATHNAME', 'snowflake_advance'
    LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION idgen.snowflake_advance(bigint) IS
    'Make every later snowflake and gene ID of this server larger than min_id (superuser only)';
REVOKE ALL ON FUNCTION idgen.snowflake_advance(bigint) FROM PUBLIC;

CREATE FUNCTION idgen.snowflake_resume(last_id_of_original bigint) RETURNS boolean
    AS 'MODULE_PATHNAME', 'snowflake_resume'
    LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION idgen.snowflake_resume(bigint) IS
    'Lift the refusal of a restored copy: the caller vouches that last_id_of_original is at or above every snowflake ID the original server issued; every later ID is larger (superuser only); false if nothing was refused';
REVOKE ALL ON FUNCTION idgen.snowflake_resume(bigint) FROM PUBLIC;

-- END advance

-- BEGIN adopt
-- idgen.adopt_column (issue 21, point 4; issue 30, points 1, 2 and 4; issue
-- 37): an existing integer key column moves to idgen in one transaction.
--
-- adopt_column (C, src/adopt.c) checks that the caller has the privileges
-- of the table's owner (its owner, a member, or a superuser), then runs
-- adopt_column_body as that owner under a security-restricted operation, as
-- REFRESH MATERIALIZED VIEW does.  adopt_column_body calls the steps below
-- in this order, so that every refusal comes before anything is altered:
--
--   adopt_target        the table and column, as adopt_column may take them
--   adopt_tree          the table and its descendants (partitions and
--                       inheritance children, at any depth)
--   adopt_relations     every relation the change reaches: the tree, the
--                       tables referencing it by a foreign key, transitively,
--                       and their descendants
--   adopt_sequences     the sequences feeding the column anywhere in the tree
--   adopt_check_owners  one owner for all of them, or a refusal naming the
--                       odd one out (then again once they are locked)
--   adopt_floor         the largest value over every row and the sequences'
--                       last values (row security off: refused when it would
--                       hide a row)
--   adopt_snowflake /   the generator above the floor
--   adopt_segment
--   adopt_switch        the identity or default dropped, the sequences that
--                       survive stopped, the columns widened (adopt_widen),
--                       the new default set
--
-- The steps run only inside adopt_column (idgen.adopt_step, C and not
-- STRICT, refuses otherwise, a null table included), so the step functions are granted to PUBLIC harmlessly; what
-- they alter, ALTER TABLE and ALTER SEQUENCE check against the owner
-- themselves.  Running as the owner: another role's code (CHECK
-- constraints, index expressions, ...) never runs at all, as every relation
-- reached has the same owner; the owner's own runs with the owner's rights
-- only, whoever calls.  Identifiers are quoted through regclass output and
-- format's %I, the tag through %L.

-- adopt_snowflake_advance: the snowflake generator above min_id, only while
-- adopt_column adopts tbl (before it alters anything, once), for the owner
-- of tbl, within idgen.max_lead of the clock and never while snowflake IDs
-- are refused (a restored copy, a changed layout).
CREATE FUNCTION idgen.adopt_snowflake_advance(tbl regclass, min_id bigint)
    RETURNS void
    AS 'MODULE_PATHNAME', 'adopt_snowflake_advance'
    LANGUAGE C VOLATILE;
COMMENT ON FUNCTION idgen.adopt_snowflake_advance(regclass, bigint) IS
    'Step of idgen.adopt_column: make every later snowflake ID of this server larger than the adopted column''s largest value, within idgen.max_lead of the clock (refused outside adopt_column)';
GRANT EXECUTE ON FUNCTION idgen.adopt_snowflake_advance(regclass, bigint) TO PUBLIC;

CREATE FUNCTION idgen.adopt_step(tbl regclass, rewrite boolean) RETURNS void
    AS 'MODULE_PATHNAME', 'adopt_step'
    LANGUAGE C VOLATILE;
COMMENT ON FUNCTION idgen.adopt_step(regclass, boolean) IS
    'Refuses unless idgen.adopt_column is adopting tbl; rewrite => true closes its adopt_snowflake_advance';
GRANT EXECUTE ON FUNCTION idgen.adopt_step(regclass, boolean) TO PUBLIC;

-- The table and column: a table (not a partition, not an inheritance
-- child: rows inserted through the parent take the parent's default), owned
-- by the current user, with a column of an integer type
CREATE FUNCTION idgen.adopt_target(tbl regclass, col name, generator text,
    OUT att smallint, OUT ident "char")
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    kind "char";
    owner_id oid;
    parent regclass;
    root regclass;
    typ oid;
BEGIN
    PERFORM idgen.adopt_step(tbl, false);
    SELECT c.relkind, c.relowner INTO kind, owner_id FROM pg_class c WHERE c.oid = tbl;
    IF kind IS NULL OR kind NOT IN ('r', 'p') THEN
        RAISE EXCEPTION '% is not a table', tbl USING ERRCODE = 'wrong_object_type';
    END IF;
    IF owner_id IS DISTINCT FROM (SELECT ro.oid FROM pg_roles ro WHERE ro.rolname = current_user) THEN
        RAISE EXCEPTION 'idgen.adopt_column_body must run as the owner of table %', tbl
            USING ERRCODE = 'insufficient_privilege',
                  HINT = format('Call SELECT idgen.adopt_column(%L, %L, %L);', tbl::text, col, generator);
    END IF;
    SELECT i.inhparent::regclass INTO parent FROM pg_inherits i WHERE i.inhrelid = tbl LIMIT 1;
    IF parent IS NOT NULL THEN
        -- The root of the tree: the table without a parent above it
        root := parent;
        LOOP
            SELECT i.inhparent::regclass INTO parent FROM pg_inherits i WHERE i.inhrelid = root LIMIT 1;
            EXIT WHEN parent IS NULL;
            root := parent;
        END LOOP;
        RAISE EXCEPTION 'cannot adopt column "%" of % %', col,
                CASE WHEN (SELECT c.relispartition FROM pg_class c WHERE c.oid = tbl)
                     THEN 'partition' ELSE 'inheritance child' END, tbl
            USING ERRCODE = 'wrong_object_type',
                  DETAIL = format('Rows inserted through its parent %s take their IDs from that table''s default, so IDs generated for this table alone could repeat them.', root),
                  HINT = format('Adopt the root of the tree, which covers every table below it: SELECT idgen.adopt_column(%L, %L, %L);',
                                root::text, col, generator);
    END IF;
    SELECT a.attnum, a.atttypid, a.attidentity INTO att, typ, ident
      FROM pg_attribute a
     WHERE a.attrelid = tbl AND a.attname = col AND a.attnum > 0 AND NOT a.attisdropped;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'column "%" of relation % does not exist', col, tbl
            USING ERRCODE = 'undefined_column';
    END IF;
    IF typ NOT IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype) THEN
        RAISE EXCEPTION 'column "%" of table % is of type %, not an integer type',
                col, tbl, format_type(typ, NULL)
            USING ERRCODE = 'datatype_mismatch',
                  DETAIL = 'A column of type smallint, integer or bigint can be adopted; it becomes bigint.';
    END IF;
END
$$;
COMMENT ON FUNCTION idgen.adopt_target(regclass, name, text) IS
    'Step of idgen.adopt_column: the table and column it may take (refused outside adopt_column)';

-- The table and every table below it, partitions and inheritance children
-- at any depth
CREATE FUNCTION idgen.adopt_tree(tbl regclass) RETURNS regclass[]
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT idgen.adopt_step(tbl, false);
    WITH RECURSIVE t(rel) AS (
        SELECT tbl::oid
      UNION
        SELECT i.inhrelid FROM t JOIN pg_inherits i ON i.inhparent = t.rel)
    SELECT array_agg(t.rel::regclass ORDER BY t.rel) FROM t
$$;
COMMENT ON FUNCTION idgen.adopt_tree(regclass) IS
    'Step of idgen.adopt_column: the table and every partition and inheritance child below it, at any depth';

-- Every relation the change reaches, with the column it alters there: the
-- tree, the tables whose foreign keys reference the column (only the
-- matching column of a multi-column key), transitively, and every table
-- below each of them (ALTER TABLE recurses into them)
CREATE FUNCTION idgen.adopt_relations(tbl regclass, att smallint,
    OUT rel regclass, OUT attnum smallint)
    RETURNS SETOF record
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT idgen.adopt_step(tbl, false);
    WITH RECURSIVE edges(parent, pattnum, child, cattnum) AS (
        SELECT i.inhparent, pa.attnum, i.inhrelid, ca.attnum
          FROM pg_inherits i
          JOIN pg_attribute pa ON pa.attrelid = i.inhparent AND pa.attnum > 0
          JOIN pg_attribute ca ON ca.attrelid = i.inhrelid AND ca.attname = pa.attname
      UNION ALL
        SELECT c.confrelid, k.confkey, c.conrelid, k.conkey
          FROM pg_constraint c
         CROSS JOIN LATERAL unnest(c.conkey, c.confkey) AS k(conkey, confkey)
         WHERE c.contype = 'f'),
    refs(rel, attnum) AS (
        SELECT tbl::oid, att
      UNION
        SELECT e.child, e.cattnum FROM refs
          JOIN edges e ON e.parent = refs.rel AND e.pattnum = refs.attnum)
    SELECT refs.rel::regclass, refs.attnum FROM refs ORDER BY refs.rel, refs.attnum
$$;
COMMENT ON FUNCTION idgen.adopt_relations(regclass, smallint) IS
    'Step of idgen.adopt_column: every relation the change reaches (descendants, referencing tables, transitively) and the column altered there';

-- The sequences that feed the column anywhere in the tree: a default's
-- nextval, an identity's sequence
CREATE FUNCTION idgen.adopt_sequences(tbl regclass, col name) RETURNS regclass[]
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT idgen.adopt_step(tbl, false);
    WITH tree(rel) AS (SELECT unnest(idgen.adopt_tree(tbl)))
    SELECT coalesce(array_agg(DISTINCT s.seq), '{}') FROM (
        SELECT dep.refobjid::regclass AS seq
          FROM pg_attribute a
          JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
          JOIN pg_depend dep ON dep.classid = 'pg_attrdef'::regclass
               AND dep.objid = d.oid AND dep.refclassid = 'pg_class'::regclass
          JOIN pg_class s ON s.oid = dep.refobjid AND s.relkind = 'S'
         WHERE a.attrelid IN (SELECT rel FROM tree) AND a.attname = col
      UNION
        SELECT dep.objid::regclass
          FROM pg_attribute a
          JOIN pg_depend dep ON dep.classid = 'pg_class'::regclass
               AND dep.refclassid = 'pg_class'::regclass
               AND dep.refobjid = a.attrelid AND dep.refobjsubid = a.attnum
               AND dep.deptype = 'i'
          JOIN pg_class s ON s.oid = dep.objid AND s.relkind = 'S'
         WHERE a.attrelid IN (SELECT rel FROM tree) AND a.attname = col) s
$$;
COMMENT ON FUNCTION idgen.adopt_sequences(regclass, name) IS
    'Step of idgen.adopt_column: the sequences feeding the column anywhere in the table''s tree';

-- One owner for every relation the change reaches and every sequence
-- feeding the column (adopt_column_body runs as that owner: another role's
-- CHECK constraints, index expressions and defaults must not run with its
-- rights), only tables, and only sequences that count up without cycling
CREATE FUNCTION idgen.adopt_check_owners(tbl regclass, col name, att smallint,
    seqs regclass[]) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    owner_id oid := (SELECT c.relowner FROM pg_class c WHERE c.oid = tbl);
    r record;
BEGIN
    PERFORM idgen.adopt_step(tbl, false);
    FOR r IN
        SELECT x.rel, c.relkind, c.relowner::regrole AS relowner,
               CASE WHEN c.relkind = 'S' THEN 'sequence' ELSE 'table' END AS what
          FROM (SELECT rl.rel FROM idgen.adopt_relations(tbl, att) rl
                UNION SELECT unnest(seqs)) x
          JOIN pg_class c ON c.oid = x.rel
         ORDER BY x.rel
    LOOP
        IF r.relowner::oid <> owner_id THEN
            RAISE EXCEPTION 'cannot adopt column "%" of table %: % % is owned by role %, not by %',
                    col, tbl, r.what, r.rel, r.relowner, owner_id::regrole
                USING ERRCODE = 'insufficient_privilege',
                      DETAIL = format('Adopting changes %s %s with the rights of role %s, the owner of table %s, and would run the code of role %s there with them.',
                                      r.what, r.rel, owner_id::regrole, tbl, r.relowner),
                      HINT = format('Give it to the same owner (ALTER %s %s OWNER TO %s), then call adopt_column again.',
                                    upper(r.what), r.rel, owner_id::regrole);
        END IF;
        IF r.relkind NOT IN ('r', 'p', 'S') THEN
            RAISE EXCEPTION 'cannot adopt column "%" of table %: % is not a table', col, tbl, r.rel
                USING ERRCODE = 'feature_not_supported',
                      DETAIL = 'Only tables, partitioned tables and their partitions can be adopted: a foreign table''s rows come from elsewhere.';
        END IF;
    END LOOP;
    SELECT s.seqrelid::regclass AS seq INTO r FROM pg_sequence s
     WHERE s.seqrelid = ANY (seqs) AND (s.seqincrement < 0 OR s.seqcycle)
     ORDER BY 1 LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'cannot adopt column "%" of table %: sequence % counts down or cycles', col, tbl, r.seq
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'The values such a sequence has handed out are not bounded by its last value.';
    END IF;
END
$$;
COMMENT ON FUNCTION idgen.adopt_check_owners(regclass, name, smallint, regclass[]) IS
    'Step of idgen.adopt_column: refuses unless one role owns every relation reached and every sequence feeding the column';

-- The largest value of the column over every row of the tree, and of the
-- sequences' last values if larger (other columns may hold their values),
-- each sequence locked against nextval() first.  Row security off: with FORCE ROW LEVEL SECURITY the owner's read of the
-- table is refused rather than filtered.
CREATE FUNCTION idgen.adopt_floor(tbl regclass, col name, seqs regclass[])
    RETURNS bigint
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
    SET row_security = off
AS $$
DECLARE
    m bigint;
    lv bigint;
    seq regclass;
    seq_max bigint;
    seq_max_name text;
BEGIN
    PERFORM idgen.adopt_step(tbl, false);
    BEGIN
        EXECUTE format('SELECT max(%I)::bigint FROM %s', col, tbl) INTO m;
    EXCEPTION WHEN insufficient_privilege THEN
        RAISE EXCEPTION 'cannot adopt column "%" of table %: row-level security hides rows from its owner', col, tbl
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = format('Table %s forces row-level security on its owner, role %s, so the largest value over every row cannot be read.',
                                  tbl, current_user),
                  HINT = format('Run ALTER TABLE %s NO FORCE ROW LEVEL SECURITY, adopt the column, then FORCE it again.', tbl);
    END;
    FOREACH seq IN ARRAY seqs LOOP
        -- A change that changes nothing (adopt_check_owners refused
        -- cycling sequences), for its lock: nextval() waits for it until
        -- the end of the transaction, so the last value read stays the
        -- last until adopt_switch stops or drops the sequence.  A sequence
        -- that this transaction's snapshot shows but the latest catalog
        -- (pg_table_is_visible's syscache) does not was dropped by a
        -- transaction that committed after the snapshot or while the table
        -- lock was awaited: what was read about the column is stale
        IF pg_table_is_visible(seq::oid) IS NULL THEN
            RAISE EXCEPTION 'could not adopt table %: it changed while adopt_column read it', tbl
                USING ERRCODE = 'serialization_failure',
                      DETAIL = format('A sequence that fed column "%s" (OID %s) was dropped by a transaction that committed meanwhile.', col, seq::oid),
                      HINT = 'Call adopt_column again in a new transaction.';
        END IF;
        EXECUTE format('ALTER SEQUENCE %s NO CYCLE', seq);
        lv := pg_sequence_last_value(seq);   -- null until its first nextval
        IF lv IS NOT NULL AND (seq_max IS NULL OR lv > seq_max) THEN
            seq_max := lv;
            seq_max_name := seq::text;
        END IF;
    END LOOP;
    IF seq_max > coalesce(m, 0) THEN
        RAISE NOTICE 'column "%" of table % continues above %, the last value of sequence %',
                col, tbl, seq_max, seq_max_name
            USING DETAIL = format('The column''s largest value is %s; other columns may hold values the sequence gave them.',
                                  coalesce(m::text, 'null'));
        m := seq_max;
    END IF;
    IF m = 9223372036854775807 THEN
        RAISE EXCEPTION 'cannot adopt column "%" of table %: no bigint is above its largest value', col, tbl
            USING ERRCODE = 'sequence_generator_limit_exceeded',
                  DETAIL = 'Its largest value is 9223372036854775807, the largest bigint, so no generator can make a larger ID.';
    END IF;
    RETURN m;
END
$$;
COMMENT ON FUNCTION idgen.adopt_floor(regclass, name, regclass[]) IS
    'Step of idgen.adopt_column: the column''s largest value over every row, or its sequences'' last value if larger';

-- The snowflake generator above the floor (adopt_snowflake_advance); when
-- it cannot get there, the error says why and, by a heuristic, which
-- preset probably made the IDs
CREATE FUNCTION idgen.adopt_snowflake(tbl regclass, col name, old_max bigint)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    err_msg text;
    err_detail text;
    err_hint text;
    best timestamptz;
    best_presets text[];
    p text;
    t timestamptz;
    hint text;
BEGIN
    PERFORM idgen.adopt_step(tbl, false);
    -- Called even for an empty column (every ID is above 1): it refuses
    -- while snowflake IDs are refused (a restored copy, a changed layout),
    -- which adopting a column never lifts
    PERFORM idgen.adopt_snowflake_advance(tbl, greatest(coalesce(old_max, 1), 1));
EXCEPTION WHEN invalid_parameter_value THEN
    GET STACKED DIAGNOSTICS err_msg = MESSAGE_TEXT,
                            err_detail = PG_EXCEPTION_DETAIL,
                            err_hint = PG_EXCEPTION_HINT;
    -- Heuristic: the presets under which the maximum is a time of the past
    -- closest to now probably made these IDs
    FOREACH p IN ARRAY ARRAY['idgen', 'twitter', 'discord',
            'sonyflake', 'sonyflake_v2', 'pgedge', 'vesta_max_peak',
            'vesta_min_granularity', 'uid_generator',
            'cosid_safe_js_ms', 'cosid_safe_js_s'] LOOP
        BEGIN
            t := idgen.id_timestamp(old_max, p);
        EXCEPTION WHEN invalid_parameter_value
                     OR numeric_value_out_of_range
                     OR datetime_field_overflow THEN
            CONTINUE;   -- an unknown preset, or not its ID
        END;
        IF t <= clock_timestamp() THEN
            IF best IS NULL OR t > best THEN
                best := t;
                best_presets := ARRAY[p];
            ELSIF t = best THEN
                best_presets := best_presets || p;
            END IF;
        END IF;
    END LOOP;
    -- Less than a day ahead: made under this layout, probably, and
    -- idgen.max_lead is what a superuser may raise
    IF coalesce(err_hint, '') ~ 'idgen\.max_lead to at least [0-9]+ ms'
       AND idgen.id_timestamp(old_max) < clock_timestamp() + interval '1 day' THEN
        hint := format('IDs above it are further ahead of the clock than idgen.max_lead allows.  Have a superuser run ALTER SYSTEM SET idgen.max_lead = ''%s ms''; SELECT pg_reload_conf(); then call adopt_column again, or wait until the clock has passed the ID''s time.  Or adopt the column for a segment tag, generator => ''segment:<tag>''.',
                       substring(err_hint FROM 'at least ([0-9]+) ms'));
    ELSIF best_presets IS NOT NULL THEN
        hint := format('Its largest value is a time of the recent past under preset %s, so it was probably made under that layout: a server with idgen.layout = ''%s'' and node ids the old generator never used continues above it. Or adopt the column for a segment tag, generator => ''segment:<tag>''.',
                       (SELECT string_agg(format('"%s"', x), ' or ') FROM unnest(best_presets) x),
                       best_presets[1]);
    ELSE
        hint := concat_ws(' ', err_hint,
                          'Or adopt the column for a segment tag, generator => ''segment:<tag>''.');
    END IF;
    RAISE EXCEPTION 'cannot adopt column "%" of table % for snowflake IDs', col, tbl
        USING ERRCODE = 'invalid_parameter_value',
              DETAIL = concat_ws(' ',
                                 format('Its largest value is %s, and the generator cannot get above it under layout "%s": %s.',
                                        old_max, current_setting('idgen.layout'), err_msg),
                                 err_detail),
              HINT = hint;
END
$$;
COMMENT ON FUNCTION idgen.adopt_snowflake(regclass, name, bigint) IS
    'Step of idgen.adopt_column: the snowflake generator above the floor, or an error naming the preset that probably made the IDs';

-- The segment tag above the floor: created, above the max_id of a dropped
-- tag of that name too, or raised past both the floor and its own max_id,
-- which discards its buffered IDs
CREATE FUNCTION idgen.adopt_segment(tbl regclass, col name, tag text,
    old_max bigint) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    cur_max bigint;
    err_hint text;
BEGIN
    PERFORM idgen.adopt_step(tbl, true);
    -- The tag's max_id, its row locked until the end of the transaction
    -- (segment_export_leaf: Leaf's max_id is one more)
    BEGIN
        SELECT e.max_id - 1 INTO cur_max
          FROM idgen.segment_export_leaf(tag, drop_tag => false) e;
    EXCEPTION
        WHEN undefined_object THEN
            cur_max := NULL;
        WHEN numeric_value_out_of_range THEN
            RAISE EXCEPTION 'cannot adopt column "%" of table % for segment tag "%"', col, tbl, tag
                USING ERRCODE = 'sequence_generator_limit_exceeded',
                      DETAIL = 'The tag has allocated every bigint.';
    END;
    IF cur_max IS NOT NULL THEN
        IF old_max IS NOT NULL THEN
            PERFORM idgen.segment_alter(tag, max_id => greatest(old_max, cur_max + 1));
        END IF;
        RETURN;
    END IF;
    BEGIN
        PERFORM idgen.segment_create(tag, start => greatest(coalesce(old_max, 0), 0) + 1);
    EXCEPTION WHEN invalid_parameter_value THEN
        -- A tag dropped, or kept when the extension was dropped, above the
        -- maximum: created above its old max_id, which the hint of
        -- segment_create (C) and of segment_alloc_guard names ("Create the
        -- tag with a start of N or more.")
        GET STACKED DIAGNOSTICS err_hint = PG_EXCEPTION_HINT;
        IF coalesce(err_hint, '') !~ '^Create the tag with a start of [0-9]+ or more\.$' THEN
            RAISE;
        END IF;
        PERFORM idgen.segment_create(tag, start => substring(err_hint FROM '[0-9]+')::bigint);
    END;
END
$$;
COMMENT ON FUNCTION idgen.adopt_segment(regclass, name, text, bigint) IS
    'Step of idgen.adopt_column: the segment tag created or raised above the floor';

-- Stop a sequence that fed the column and survives the adoption (another
-- column's default, a view, code calling nextval() on it): its next
-- nextval() fails ("reached maximum value") instead of returning a value
-- the new generator may give too
CREATE FUNCTION idgen.adopt_stop_sequence(tbl regclass, col name, seq regclass)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v bigint;
    lo bigint;
    users text;
BEGIN
    PERFORM idgen.adopt_step(tbl, true);
    EXECUTE format('SELECT last_value FROM %s', seq) INTO v;
    SELECT least(s.seqmin, v - 1) INTO lo FROM pg_sequence s WHERE s.seqrelid = seq;
    EXECUTE format('ALTER SEQUENCE %s NO CYCLE MINVALUE %s MAXVALUE %s START WITH %s',
                   seq, lo, v, v);
    PERFORM setval(seq, v, true);
    SELECT string_agg(format('column "%s" of table %s', a.attname, d.adrelid::regclass), ', '
                      ORDER BY d.adrelid, a.attname) INTO users
      FROM pg_depend dep
      JOIN pg_attrdef d ON dep.classid = 'pg_attrdef'::regclass AND dep.objid = d.oid
      JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
     WHERE dep.refclassid = 'pg_class'::regclass AND dep.refobjid = seq;
    RAISE NOTICE 'sequence % is stopped at %: its next nextval() fails', seq, v
        USING DETAIL = concat_ws(' ', format('It fed column "%s" of table %s, whose new IDs may take any value above %s.', col, tbl, v),
                                 CASE WHEN users IS NOT NULL THEN format('It still feeds %s.', users) END),
              HINT = 'Give every column it feeds a generator of its own (adopt it too, for the same segment tag or for snowflake IDs).  Never restart the sequence (ALTER SEQUENCE ... MAXVALUE or RESTART, setval): the values it gave next would repeat IDs.';
END
$$;
COMMENT ON FUNCTION idgen.adopt_stop_sequence(regclass, name, regclass) IS
    'Step of idgen.adopt_column: a sequence that fed the column and survives is stopped, so that its next nextval() fails';

-- Widen the column and, transitively, every column that references it by
-- a foreign key (only the matching column of a multi-column key;
-- partitions' copies of a constraint follow their parent's; ALTER TABLE
-- recurses into the tables below)
CREATE FUNCTION idgen.adopt_widen(tbl regclass, att smallint) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r record;
BEGIN
    PERFORM idgen.adopt_step(tbl, true);
    FOR r IN
        WITH RECURSIVE refs(rel, attnum) AS (
            SELECT tbl::oid, att
          UNION
            SELECT c.conrelid, k.conkey
              FROM refs
              JOIN pg_constraint c ON c.confrelid = refs.rel
                   AND c.contype = 'f' AND c.conparentid = 0
             CROSS JOIN LATERAL unnest(c.conkey, c.confkey) AS k(conkey, confkey)
             WHERE k.confkey = refs.attnum)
        SELECT refs.rel::regclass AS rel,
               string_agg(format('ALTER COLUMN %I TYPE bigint', a.attname), ', '
                          ORDER BY a.attnum) AS alters
          FROM refs
          JOIN pg_attribute a ON a.attrelid = refs.rel AND a.attnum = refs.attnum
         WHERE a.atttypid IN ('int2'::regtype, 'int4'::regtype)
         GROUP BY refs.rel
         ORDER BY refs.rel = tbl::oid DESC, refs.rel
    LOOP
        EXECUTE format('ALTER TABLE %s %s', r.rel, r.alters);
    END LOOP;
END
$$;
COMMENT ON FUNCTION idgen.adopt_widen(regclass, smallint) IS
    'Step of idgen.adopt_column: the column and the columns referencing it, transitively, widened to bigint';

-- Away with the identity (its sequence goes with it) or the default (a
-- serial's owned sequence with it, unless other objects use it), every
-- sequence that fed the column and survives stopped, the columns widened,
-- the new default set
CREATE FUNCTION idgen.adopt_switch(tbl regclass, col name, att smallint,
    ident "char", seqs regclass[], tag text) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    owned regclass;
    owned_name text;
    seq regclass;
BEGIN
    PERFORM idgen.adopt_step(tbl, true);
    IF ident IN ('a', 'd') THEN
        EXECUTE format('ALTER TABLE %s ALTER COLUMN %I DROP IDENTITY', tbl, col);
    ELSE
        -- The sequence owned by the column (serial, bigserial) that its
        -- default draws from
        SELECT dep.objid::regclass INTO owned
          FROM pg_depend dep
          JOIN pg_attrdef d ON d.adrelid = tbl AND d.adnum = att
          JOIN pg_depend used ON used.classid = 'pg_attrdef'::regclass
               AND used.objid = d.oid AND used.refobjid = dep.objid
         WHERE dep.classid = 'pg_class'::regclass
           AND dep.refclassid = 'pg_class'::regclass
           AND dep.refobjid = tbl AND dep.refobjsubid = att AND dep.deptype = 'a';
        EXECUTE format('ALTER TABLE %s ALTER COLUMN %I DROP DEFAULT', tbl, col);
        IF owned IS NOT NULL THEN
            owned_name := owned::text;
            BEGIN
                EXECUTE format('DROP SEQUENCE %s', owned);
            EXCEPTION WHEN dependent_objects_still_exist THEN
                EXECUTE format('ALTER SEQUENCE %s OWNED BY NONE', owned);
                RAISE NOTICE 'sequence % is kept, no longer owned by column "%" of table %',
                        owned_name, col, tbl
                    USING DETAIL = 'Other objects depend on it.';
            END;
        END IF;
    END IF;
    FOREACH seq IN ARRAY seqs LOOP
        IF EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = seq) THEN
            PERFORM idgen.adopt_stop_sequence(tbl, col, seq);
        END IF;
    END LOOP;
    PERFORM idgen.adopt_widen(tbl, att);
    EXECUTE format('ALTER TABLE %s ALTER COLUMN %I SET DEFAULT %s', tbl, col,
                   CASE WHEN tag IS NULL THEN 'idgen.snowflake_nextval()'
                        ELSE format('idgen.segment_nextval(%L::text)', tag) END);
END
$$;
COMMENT ON FUNCTION idgen.adopt_switch(regclass, name, smallint, "char", regclass[], text) IS
    'Step of idgen.adopt_column: identity or default dropped, surviving sequences stopped, columns widened, new default set';

CREATE FUNCTION idgen.adopt_column_body(tbl regclass, col name,
    generator text) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    tag text;
    t record;
    seqs regclass[];
    floor bigint;
BEGIN
    IF tbl IS NULL OR col IS NULL OR generator IS NULL THEN
        RAISE EXCEPTION 'table, column and generator of adopt_column cannot be null'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF generator = 'snowflake' THEN
        tag := NULL;
    ELSIF starts_with(generator, 'segment:') AND length(generator) > 8 THEN
        tag := substr(generator, 9);
    ELSE
        RAISE EXCEPTION 'invalid generator "%"', generator
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'A generator is ''snowflake'' or ''segment:'' followed by a tag, e.g. ''segment:order''.';
    END IF;
    t := idgen.adopt_target(tbl, col, generator);
    seqs := idgen.adopt_sequences(tbl, col);
    -- Owners checked before the locks (a clear refusal rather than LOCK's
    -- permission error), and again once nothing can change them
    PERFORM idgen.adopt_check_owners(tbl, col, t.att, seqs);
    EXECUTE format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', tbl);
    PERFORM idgen.adopt_check_owners(tbl, col, t.att, seqs);
    -- No row can arrive from here on: the maximum stays the maximum
    floor := idgen.adopt_floor(tbl, col, seqs);
    IF tag IS NULL THEN
        PERFORM idgen.adopt_snowflake(tbl, col, floor);
    ELSE
        PERFORM idgen.adopt_segment(tbl, col, tag, floor);
    END IF;
    PERFORM idgen.adopt_switch(tbl, col, t.att, t.ident, seqs, tag);
END
$$;
COMMENT ON FUNCTION idgen.adopt_column_body(regclass, name, text) IS
    'The work of idgen.adopt_column, run by it as the table''s owner (not to be called directly)';
REVOKE ALL ON FUNCTION idgen.adopt_column_body(regclass, name, text) FROM PUBLIC;

CREATE FUNCTION idgen.adopt_column(tbl regclass, col name,
    generator text DEFAULT 'snowflake') RETURNS void
    AS 'MODULE_PATHNAME', 'adopt_column'
    LANGUAGE C VOLATILE;
COMMENT ON FUNCTION idgen.adopt_column(regclass, name, text) IS
    'Move an existing integer key column to idgen in one transaction, as the table''s owner: widen it and the columns referencing it to bigint, drop its identity or sequence default, set a snowflake or segment DEFAULT, and make every later ID greater than its largest value and its sequences'' last values';
GRANT EXECUTE ON FUNCTION idgen.adopt_column(regclass, name, text) TO PUBLIC;
-- END adopt

-- BEGIN monitoring

-- Issue 41: what the files of monitoring/ query, readable by a role with
-- only pg_monitor.  snowflake_status() and node_lease_status() are granted
-- above; segment_status to pg_monitor in the segment section.
-- Which refusals that only a superuser lifts are in force: after a restore
-- or a promotion onto a timeline whose low bits came round
-- (snowflake_resume), or a change of layout or node id
-- (snowflake_accept_layout).
CREATE FUNCTION idgen.snowflake_refusal(OUT restored boolean,
    OUT layout_changed boolean)
    AS 'MODULE_PATHNAME', 'snowflake_refusal'
    LANGUAGE C VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION idgen.snowflake_refusal() IS
    'Whether snowflake IDs are refused until snowflake_resume, because this server was started from a backup or after archive recovery, or was promoted onto a timeline whose low idgen.node_timeline_bits bits an earlier timeline had (restored), or because idgen.layout or idgen.node_id changed (layout_changed)';
REVOKE ALL ON FUNCTION idgen.snowflake_refusal() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idgen.snowflake_refusal() TO pg_monitor;
-- A tag's allocation and settings, for the IDs it has left; not its
-- description or owner
GRANT SELECT (biz_tag, max_id, step, cache) ON idgen.segment_alloc TO pg_monitor;
-- In a node registry: which node ids are leased and until when; not the
-- holders' instance names, whose keys would let a reader act as a holder
GRANT SELECT (namespace, node_id, heartbeat, expires_at) ON idgen.node_lease TO pg_monitor;

-- END monitoring

-- BEGIN tag privileges

-- Issue 37, point 6: a tag has privileges, as a sequence has.  'draw'
-- (segment_nextval, segment_currval) and 'read' (segment_currval, the
-- tag's row of segment_status) are granted and revoked by the tag's owner
-- with segment_grant and segment_revoke, to roles (kept by OID, with the
-- name for pg_dump, as the owner is) or to PUBLIC (the two columns below).
-- The default keeps what every earlier version did: PUBLIC may draw from
-- every tag, and only pg_monitor reads the positions.  The owner, its
-- members and superusers always hold both.
ALTER TABLE idgen.segment_alloc ADD COLUMN public_draw boolean NOT NULL DEFAULT true;
ALTER TABLE idgen.segment_alloc ADD COLUMN public_read boolean NOT NULL DEFAULT false;
COMMENT ON COLUMN idgen.segment_alloc.public_draw IS
    'Whether every role may draw from the tag (segment_nextval): true unless its owner revoked draw from public with idgen.segment_revoke()';
COMMENT ON COLUMN idgen.segment_alloc.public_read IS
    'Whether every role may read the tag''s position (its row of segment_status): false unless its owner granted read to public with idgen.segment_grant()';

CREATE TABLE idgen.segment_privilege (
    biz_tag text NOT NULL,
    privilege text NOT NULL CHECK (privilege IN ('draw', 'read')),
    grantee name NOT NULL,
    grantee_id oid,
    PRIMARY KEY (biz_tag, privilege, grantee)
);
COMMENT ON TABLE idgen.segment_privilege IS
    'Privileges on segment tags granted to roles with idgen.segment_grant(): draw (segment_nextval, segment_currval) and read (segment_status, segment_currval)';
COMMENT ON COLUMN idgen.segment_privilege.grantee_id IS
    'The role granted the privilege (its members have it too); grantee is its name, kept for pg_dump: a restored row whose grantee_id is not the role of that name takes the role of that name, none if there is none';
REVOKE ALL ON TABLE idgen.segment_privilege FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('idgen.segment_privilege',
    'WHERE idgen.dump_role_check(''segment tag'', biz_tag, ''grantee of '' || privilege, grantee, grantee_id)');

-- The grantee is a role: the one idgen.row_role says, as for the owner
-- of a tag; a row that names none grants nothing and is not kept
CREATE FUNCTION idgen.segment_privilege_guard() RETURNS trigger
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
COMMENT ON FUNCTION idgen.segment_privilege_guard() IS
    'Triggers of idgen.segment_privilege (the grantee is the role idgen.row_role says) and idgen.segment_alloc (a dropped tag takes its privileges with it)';
REVOKE ALL ON FUNCTION idgen.segment_privilege_guard() FROM PUBLIC;
CREATE TRIGGER segment_privilege_guard
    BEFORE INSERT OR UPDATE OF grantee, grantee_id ON idgen.segment_privilege
    FOR EACH ROW EXECUTE FUNCTION idgen.segment_privilege_guard();
CREATE TRIGGER segment_privilege_forget
    AFTER DELETE ON idgen.segment_alloc
    FOR EACH ROW EXECUTE FUNCTION idgen.segment_privilege_guard();
CREATE TRIGGER segment_privilege_forget_truncate
    AFTER TRUNCATE ON idgen.segment_alloc
    FOR EACH STATEMENT EXECUTE FUNCTION idgen.segment_privilege_guard();

-- Backends remember what they checked (src/segment_sql.c); a change of a
-- tag's privileges or owner makes them check again once it commits
CREATE FUNCTION idgen.segment_privileges_changed() RETURNS trigger
    AS 'MODULE_PATHNAME', 'segment_privileges_changed'
    LANGUAGE C;
COMMENT ON FUNCTION idgen.segment_privileges_changed() IS
    'Trigger: once the transaction ends, every backend checks its privileges on segment tags again';
REVOKE ALL ON FUNCTION idgen.segment_privileges_changed() FROM PUBLIC;
CREATE TRIGGER segment_privileges_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON idgen.segment_privilege
    FOR EACH STATEMENT EXECUTE FUNCTION idgen.segment_privileges_changed();
CREATE TRIGGER segment_privileges_changed
    AFTER UPDATE OF owner, owner_id, public_draw, public_read ON idgen.segment_alloc
    FOR EACH STATEMENT EXECUTE FUNCTION idgen.segment_privileges_changed();

CREATE FUNCTION idgen.segment_grant(tag text, privilege text, grantee text)
    RETURNS void
    AS 'MODULE_PATHNAME', 'segment_grant'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION idgen.segment_grant(text, text, text) IS
    'Grant draw, read or all on a segment tag to a role or to public: by the tag''s owner or a superuser';
CREATE FUNCTION idgen.segment_revoke(tag text, privilege text, grantee text)
    RETURNS void
    AS 'MODULE_PATHNAME', 'segment_revoke'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION idgen.segment_revoke(text, text, text) IS
    'Revoke draw, read or all on a segment tag from a role or from public: by the tag''s owner or a superuser';
-- As segment_alter: the functions check that the caller owns the tag
REVOKE ALL ON FUNCTION idgen.segment_grant(text, text, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION idgen.segment_revoke(text, text, text) FROM PUBLIC;

-- segment_status shows every tag to pg_monitor and superusers, and to any
-- other role the tags it may read
GRANT EXECUTE ON FUNCTION idgen.segment_status_fn() TO PUBLIC;
GRANT SELECT ON idgen.segment_status TO PUBLIC;

-- END tag privileges

-- BEGIN public id keys

-- Keys of public IDs (src/idkey.c): idgen.id_encrypt(id, key) is NIST SP
-- 800-38G FF1 on AES-256 over [0, 2^width), idgen.id_decrypt its inverse.
-- A key is made inside the server from pg_strong_random() by
-- idgen.id_key_create; its bytes are shown by no view, function or
-- message.  Only superusers read this table (the functions read it as its
-- owner).  A key's bytes, width and name never change and a key is never
-- deleted, so that its functions can be IMMUTABLE; pg_dump keeps the rows
-- (and therefore the keys: pg_dump --exclude-table-data=idgen.id_key leaves
-- them out).
CREATE TABLE idgen.id_key (
    name text PRIMARY KEY CHECK (octet_length(name) BETWEEN 1 AND 63),
    owner name NOT NULL,
    owner_id oid,
    width int NOT NULL CHECK (width BETWEEN 20 AND 63),
    key bytea NOT NULL CHECK (octet_length(key) = 32),
    created timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE idgen.id_key IS
    'Keys of public IDs (idgen.id_encrypt, idgen.id_decrypt): AES-256 keys of FF1 over [0, 2^width); readable by superusers only';
COMMENT ON COLUMN idgen.id_key.owner_id IS
    'Role that owns the key: it, its members and superusers use it and grant its use; owner is its name, kept for pg_dump';
REVOKE ALL ON TABLE idgen.id_key FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('idgen.id_key',
    'WHERE idgen.dump_role_check(''key'', name, ''owner'', owner, owner_id)');

-- Who may use a key besides its owner: granted and revoked by the owner
-- with id_key_grant and id_key_revoke, to a role (kept by OID with the name
-- for pg_dump) or to public (grantee 'public', grantee_id 0)
CREATE TABLE idgen.id_key_privilege (
    key_name text NOT NULL,
    privilege text NOT NULL CHECK (privilege IN ('use')),
    grantee name NOT NULL,
    grantee_id oid,
    PRIMARY KEY (key_name, privilege, grantee)
);
COMMENT ON TABLE idgen.id_key_privilege IS
    'Privileges on keys of public IDs granted with idgen.id_key_grant(): use (id_encrypt, id_decrypt)';
REVOKE ALL ON TABLE idgen.id_key_privilege FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('idgen.id_key_privilege',
    'WHERE idgen.dump_role_check(''key'', key_name, ''grantee of '' || privilege, grantee, grantee_id)');

-- A key never changes: no new name, bytes or width, no delete; the owner
-- and the grantees are the roles idgen.row_role says, as for a tag's
CREATE FUNCTION idgen.id_key_guard() RETURNS trigger
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
COMMENT ON FUNCTION idgen.id_key_guard() IS
    'Trigger of idgen.id_key (a key never changes nor goes) and idgen.id_key_privilege (grantees are the roles idgen.row_role says)';
REVOKE ALL ON FUNCTION idgen.id_key_guard() FROM PUBLIC;
CREATE TRIGGER id_key_guard
    BEFORE INSERT OR UPDATE OR DELETE ON idgen.id_key
    FOR EACH ROW EXECUTE FUNCTION idgen.id_key_guard();
CREATE TRIGGER id_key_guard_truncate
    BEFORE TRUNCATE ON idgen.id_key
    FOR EACH STATEMENT EXECUTE FUNCTION idgen.id_key_guard();
CREATE TRIGGER id_key_privilege_guard
    BEFORE INSERT OR UPDATE OF grantee, grantee_id ON idgen.id_key_privilege
    FOR EACH ROW EXECUTE FUNCTION idgen.id_key_guard();

CREATE VIEW idgen.id_keys AS
    SELECT name, owner, width, created FROM idgen.id_key;
COMMENT ON VIEW idgen.id_keys IS
    'Keys of public IDs: name, owner, width, creation time (never the key bytes)';
GRANT SELECT ON idgen.id_keys TO PUBLIC;

CREATE FUNCTION idgen.id_key_create(name text, width int DEFAULT 63)
    RETURNS void
    AS 'MODULE_PATHNAME', 'id_key_create'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION idgen.id_key_create(text, int) IS
    'Make a key of public IDs from pg_strong_random(): FF1 over [0, 2^width), width 20 to 63; owned by the caller';
REVOKE ALL ON FUNCTION idgen.id_key_create(text, int) FROM PUBLIC;

-- IMMUTABLE: a key's bytes never change under its name.  PARALLEL
-- RESTRICTED: only the leader calls them, so the privilege checked and
-- the key's cipher are the session's, kept until a grant changes.
CREATE FUNCTION idgen.id_encrypt(id bigint, key text) RETURNS bigint
    AS 'MODULE_PATHNAME', 'id_encrypt'
    LANGUAGE C IMMUTABLE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION idgen.id_encrypt(bigint, text) IS
    'Public ID of id under a key: FF1 (AES-256) permutation of [0, 2^width)';
CREATE FUNCTION idgen.id_decrypt(public_id bigint, key text) RETURNS bigint
    AS 'MODULE_PATHNAME', 'id_decrypt'
    LANGUAGE C IMMUTABLE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION idgen.id_decrypt(bigint, text) IS
    'The id whose public ID under a key is public_id (inverse of idgen.id_encrypt)';

CREATE FUNCTION idgen.id_key_grant(key text, privilege text, grantee text)
    RETURNS void
    AS 'MODULE_PATHNAME', 'id_key_grant'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION idgen.id_key_grant(text, text, text) IS
    'Grant use of a key of public IDs to a role or to public: by the key''s owner or a superuser';
CREATE FUNCTION idgen.id_key_revoke(key text, privilege text, grantee text)
    RETURNS void
    AS 'MODULE_PATHNAME', 'id_key_revoke'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION idgen.id_key_revoke(text, text, text) IS
    'Revoke use of a key of public IDs from a role or from public: by the key''s owner or a superuser';
REVOKE ALL ON FUNCTION idgen.id_key_grant(text, text, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION idgen.id_key_revoke(text, text, text) FROM PUBLIC;

-- END public id keys

-- BEGIN segment resume
-- A restored copy, or a former standby started without promotion, hands
-- out no segment ID until a superuser vouches that its original hands out
-- no more (its allocations above the restored segment_alloc would repeat).
CREATE FUNCTION idgen.segment_resume() RETURNS boolean
    AS 'MODULE_PATHNAME', 'segment_resume'
    LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION idgen.segment_resume() IS
    'Lift the refusal of segment IDs on a restored copy: the caller vouches that the original server hands out no more segment IDs (superuser only); false if nothing was refused';
REVOKE ALL ON FUNCTION idgen.segment_resume() FROM PUBLIC;
-- END segment resume

-- BEGIN public id key privileges changed

-- Backends keep a key's privilege answer (src/idkey.c) until the privilege
-- generation moves: a change of a key's grants or owner moves it once its
-- transaction ends, as for segment tags
CREATE TRIGGER id_key_privileges_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON idgen.id_key_privilege
    FOR EACH STATEMENT EXECUTE FUNCTION idgen.segment_privileges_changed();
CREATE TRIGGER id_key_privileges_changed
    AFTER UPDATE OF owner, owner_id ON idgen.id_key
    FOR EACH STATEMENT EXECUTE FUNCTION idgen.segment_privileges_changed();

-- END public id key privileges changed

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

-- END roles of restored rows
