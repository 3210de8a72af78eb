/* idgen--0.3.0--0.4.0.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION idgen UPDATE TO '0.4.0'" to load this file. \quit

-- Each change of 0.4.0 has its own section below, headed "-- BEGIN <feature>"
-- and ended by "-- END <feature>", so that parallel work merges cleanly.
-- Every new function, table and view gets a COMMENT (t/095_upgrade.pl checks).

-- BEGIN advance

-- A superuser makes every later snowflake and gene ID of this server larger
-- than min_id, durably (state file and reservation row); it also lifts the
-- refusal of a server started from a backup or after archive recovery with
-- a fixed node id (docs/durability.md, "Restored copies").
CREATE FUNCTION idgen.snowflake_advance(min_id bigint) RETURNS void
    AS 'MODULE_PATHNAME', 'snowflake_advance'
    LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION idgen.snowflake_advance(bigint) IS
    'Make every later snowflake and gene ID of this server larger than min_id (superuser only)';
REVOKE ALL ON FUNCTION idgen.snowflake_advance(bigint) FROM PUBLIC;

-- END advance

-- BEGIN keep tags

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

-- The guard of 0.2.0, and: an inserted row is raised to its tag's floor
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
        RETURN NEW;
    ELSIF TG_OP = 'UPDATE' THEN
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

-- END keep tags
