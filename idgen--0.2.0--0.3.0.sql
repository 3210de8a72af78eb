/* idgen--0.2.0--0.3.0.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION idgen UPDATE TO '0.3.0'" to load this file. \quit

-- Each change of 0.3.0 has its own section below, headed "-- BEGIN <feature>"
-- and ended by "-- END <feature>", so that parallel work merges cleanly.
-- Every new function, table and view gets a COMMENT (t/095_upgrade.pl checks).

-- BEGIN arrivals

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
COMMENT ON FUNCTION idgen.id_from_base62(text) IS
    'Inverse of id_to_base62: 1 to 11 base62 characters, padded or not';

-- The friendly form in a time zone: PostgreSQL's timezone() rules, so any
-- zone name, abbreviation or offset it knows.  Without a zone: UTC.
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
COMMENT ON FUNCTION idgen.id_to_friendly(bigint) IS
    'yyyyMMddHHmmssSSS-node-sequence (yyyyMMddHHmmss for layouts of whole seconds, time in UTC) under the server''s idgen.layout';
COMMENT ON FUNCTION idgen.id_to_friendly(bigint, text) IS
    'yyyyMMddHHmmssSSS-node-sequence (yyyyMMddHHmmss for layouts of whole seconds, time in UTC) under the given layout';

-- Moving a tag between Leaf's leaf_alloc and idgen.segment_alloc (issue 14,
-- point 3).  Leaf's max_id is the next unused ID (its segments are
-- [max_id - step, max_id)); idgen's is the last allocated one.  Like
-- segment_create, these run as the extension's owner with a pinned
-- search_path, need only EXECUTE, and go through segment_create, segment_alter
-- and segment_drop, so the segment_alloc_guard trigger and the tombstones in
-- idgen.segment_dropped apply: an import never goes below a dropped tag.
CREATE FUNCTION idgen.segment_import_leaf(biz_tag text, max_id bigint,
    step int, description text DEFAULT NULL) RETURNS void
    LANGUAGE plpgsql
    SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    cur bigint;
BEGIN
    IF segment_import_leaf.biz_tag IS NULL OR segment_import_leaf.max_id IS NULL
       OR segment_import_leaf.step IS NULL THEN
        RAISE EXCEPTION 'biz_tag, max_id and step of a Leaf row cannot be null'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF segment_import_leaf.max_id < 1 THEN
        RAISE EXCEPTION 'Leaf max_id % of segment tag "%" is out of range',
                segment_import_leaf.max_id, segment_import_leaf.biz_tag
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'Leaf''s max_id is the next ID it would hand out, at least 1.';
    END IF;
    SELECT a.max_id INTO cur
    FROM idgen.segment_alloc a WHERE a.biz_tag = segment_import_leaf.biz_tag
    FOR UPDATE;
    IF NOT FOUND THEN
        -- Leaf hands out max_id next: that is the tag's start
        PERFORM idgen.segment_create(segment_import_leaf.biz_tag,
                                     segment_import_leaf.max_id,
                                     segment_import_leaf.step,
                                     segment_import_leaf.description);
        RETURN;
    END IF;
    IF segment_import_leaf.max_id - 1 < cur THEN
        RAISE EXCEPTION 'cannot import Leaf max_id % of segment tag "%"',
                segment_import_leaf.max_id, segment_import_leaf.biz_tag
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('idgen has allocated IDs up to %s for the tag, so Leaf''s next ID must be %s or more.', cur, cur + 1),
                  HINT = 'Import the tag''s current leaf_alloc row.';
    END IF;
    PERFORM idgen.segment_alter(segment_import_leaf.biz_tag,
                                segment_import_leaf.step,
                                segment_import_leaf.description,
                                CASE WHEN segment_import_leaf.max_id - 1 > cur
                                     THEN segment_import_leaf.max_id - 1 END);
END
$$;
COMMENT ON FUNCTION idgen.segment_import_leaf(text, bigint, int, text) IS
    'Create a segment tag from a row of Leaf''s leaf_alloc (max_id = next unused ID), or move an existing tag forward to it';
REVOKE ALL ON FUNCTION idgen.segment_import_leaf(text, bigint, int, text) FROM PUBLIC;

CREATE FUNCTION idgen.segment_export_leaf(tag text, drop_tag boolean DEFAULT true,
    OUT biz_tag text, OUT max_id bigint, OUT step int, OUT description text,
    OUT update_time timestamptz)
    LANGUAGE plpgsql
    SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r record;
BEGIN
    IF tag IS NULL OR drop_tag IS NULL THEN
        RAISE EXCEPTION 'segment tag and drop_tag cannot be null'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    SELECT a.biz_tag, a.max_id, a.step, a.description INTO r
    FROM idgen.segment_alloc a WHERE a.biz_tag = tag FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'segment tag "%" does not exist', tag
            USING ERRCODE = 'undefined_object';
    END IF;
    IF r.max_id = 9223372036854775807 THEN
        RAISE EXCEPTION 'cannot export segment tag "%" to Leaf', tag
            USING ERRCODE = 'numeric_value_out_of_range',
                  DETAIL = 'Every bigint of the tag has been allocated; Leaf''s next ID would not fit a bigint.';
    END IF;
    -- Dropping forgets the tag's buffered IDs and keeps its tombstone, so
    -- idgen hands out no more of it and never re-creates it below max_id
    IF drop_tag THEN
        PERFORM idgen.segment_drop(tag);
    END IF;
    biz_tag := r.biz_tag;
    max_id := r.max_id + 1;
    step := r.step;
    description := r.description;
    update_time := now();
END
$$;
COMMENT ON FUNCTION idgen.segment_export_leaf(text, boolean) IS
    'A segment tag as a row of Leaf''s leaf_alloc (max_id = next unused ID); drops the tag unless drop_tag is false';
REVOKE ALL ON FUNCTION idgen.segment_export_leaf(text, boolean) FROM PUBLIC;

-- END arrivals

-- BEGIN currval
-- The last ID this session drew, as a sequence's currval: for code written
-- for sequences (and pgEdge's snowflake.currval) that reads the ID just
-- drawn instead of using RETURNING.  Process-local, so PARALLEL RESTRICTED.
CREATE FUNCTION idgen.snowflake_currval()
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_currval'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION idgen.snowflake_currval() IS
    'The last snowflake ID this session drew with snowflake_nextval() or gene_id(key, bits); error 55000 before the first, as a sequence''s currval';

CREATE FUNCTION idgen.segment_currval(tag text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'segment_currval'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION idgen.segment_currval(text) IS
    'The last ID this session drew from the tag with segment_nextval(tag); error 55000 before the first, as a sequence''s currval';
-- END currval

-- BEGIN chain
-- A chain of segments ready ahead per tag (issue 13, point 3): the status
-- shows its length and how many segments are ready.  The view is created
-- again over the function, with pg_monitor's grants as before.
DROP VIEW idgen.segment_status;
DROP FUNCTION idgen.segment_status_fn();
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
    OUT segments_ready int)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'segment_status_fn'
    LANGUAGE C VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION idgen.segment_status_fn() IS
    'Rows of the idgen.segment_status view: segment tags in shared memory';
CREATE VIEW idgen.segment_status AS
    SELECT * FROM idgen.segment_status_fn();
COMMENT ON VIEW idgen.segment_status IS
    'Segment tags in shared memory: current and next segment, dynamic step, chain of segments ready ahead, allocations and waits';
REVOKE ALL ON FUNCTION idgen.segment_status_fn() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idgen.segment_status_fn() TO pg_monitor;
GRANT SELECT ON idgen.segment_status TO pg_monitor;
-- END chain
