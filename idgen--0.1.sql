/* idgen--0.1.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION idgen" to load this file. \quit

-- Generators need only EXECUTE: let every role reach the schema
GRANT USAGE ON SCHEMA idgen TO PUBLIC;

-- BEGIN snowflake

-- The durable high-water mark of the snowflake generator: one row, written
-- only by the idgen worker (see src/reservation.c)
CREATE TABLE idgen.snowflake_reservation (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    reserved_until timestamptz NOT NULL
);
COMMENT ON TABLE idgen.snowflake_reservation IS
    'Snowflake IDs are issued only up to reserved_until; written by the idgen worker.';
REVOKE ALL ON TABLE idgen.snowflake_reservation FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('idgen.snowflake_reservation', '');

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
    OUT worker_running boolean)
    AS 'MODULE_PATHNAME', 'snowflake_status'
    LANGUAGE C VOLATILE PARALLEL SAFE;

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

CREATE FUNCTION idgen.id_timestamp(id bigint) RETURNS timestamptz
    AS 'MODULE_PATHNAME', 'id_timestamp'
    LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION idgen.id_timestamp(id bigint, layout text) RETURNS timestamptz
    AS 'MODULE_PATHNAME', 'id_timestamp'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION idgen.id_make(ts timestamptz, node_id bigint, sequence bigint)
    RETURNS bigint
    AS 'MODULE_PATHNAME', 'id_make'
    LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION idgen.id_make(ts timestamptz, node_id bigint, sequence bigint,
    layout text) RETURNS bigint
    AS 'MODULE_PATHNAME', 'id_make'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- END decode and make

-- BEGIN segment

-- Leaf's allocation table: max_id is the last ID given to a segment of the
-- tag.  Allocations are written only by the idgen worker (src/segment_worker.c);
-- segment_create/alter/drop change rows, never moving max_id backwards.
CREATE TABLE idgen.segment_alloc (
    biz_tag text PRIMARY KEY
        CHECK (octet_length(biz_tag) BETWEEN 1 AND 128),
    max_id bigint NOT NULL,
    step int NOT NULL CHECK (step > 0),
    description text,
    update_time timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE idgen.segment_alloc IS
    'Segment tags (Leaf): IDs up to max_id have been allocated; step is the smallest step';
REVOKE ALL ON TABLE idgen.segment_alloc FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('idgen.segment_alloc', '');

CREATE FUNCTION idgen.segment_nextval(tag text) RETURNS bigint
    AS 'MODULE_PATHNAME', 'segment_nextval'
    LANGUAGE C VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION idgen.segment_nextval(text) IS
    'Next ID of a segment tag, from the shared segment cache';

CREATE FUNCTION idgen.segment_create(tag text, start bigint DEFAULT 1,
    step int DEFAULT 1000, description text DEFAULT NULL) RETURNS void
    AS 'MODULE_PATHNAME', 'segment_create'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION idgen.segment_create(text, bigint, int, text) IS
    'Create a segment tag whose first ID is start';

CREATE FUNCTION idgen.segment_alter(tag text, step int DEFAULT NULL,
    description text DEFAULT NULL, max_id bigint DEFAULT NULL) RETURNS void
    AS 'MODULE_PATHNAME', 'segment_alter'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION idgen.segment_alter(text, int, text, bigint) IS
    'Change the step or description of a segment tag, or move its max_id forward';

CREATE FUNCTION idgen.segment_drop(tag text) RETURNS void
    AS 'MODULE_PATHNAME', 'segment_drop'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION idgen.segment_drop(text) IS
    'Drop a segment tag';

REVOKE ALL ON FUNCTION idgen.segment_create(text, bigint, int, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION idgen.segment_alter(text, int, text, bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION idgen.segment_drop(text) FROM PUBLIC;

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
    OUT epoch bigint)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'segment_status_fn'
    LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE VIEW idgen.segment_status AS
    SELECT * FROM idgen.segment_status_fn();
COMMENT ON VIEW idgen.segment_status IS
    'Segment tags in shared memory: current and next segment, dynamic step, allocations and waits';
REVOKE ALL ON FUNCTION idgen.segment_status_fn() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idgen.segment_status_fn() TO pg_monitor;
GRANT SELECT ON idgen.segment_status TO pg_monitor;

-- END segment
