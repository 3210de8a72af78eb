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
