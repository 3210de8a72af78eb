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
    'Inverse of id_to_base62';

CREATE FUNCTION idgen.id_to_friendly(id bigint) RETURNS text
    AS 'MODULE_PATHNAME', 'id_to_friendly'
    LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION idgen.id_to_friendly(id bigint, layout text) RETURNS text
    AS 'MODULE_PATHNAME', 'id_to_friendly'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION idgen.id_to_friendly(bigint) IS
    'yyyyMMddHHmmssSSS-node-sequence (UTC) under the server''s idgen.layout';
COMMENT ON FUNCTION idgen.id_to_friendly(bigint, text) IS
    'yyyyMMddHHmmssSSS-node-sequence (UTC) under the given layout';
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

-- END gene and codec functions

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

-- BEGIN node leases

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
-- lease ended more than guard_ms ago, else the lowest id never leased.
-- leased_node is NULL when every id up to max_node is taken.
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
BEGIN
    -- One acquisition at a time in a namespace; renewals are not blocked
    PERFORM pg_advisory_xact_lock(hashtext('idgen.node_lease'),
                                  hashtext(lease_namespace));

    SELECT l.node_id, l.instance, l.last_tick INTO r
    FROM idgen.node_lease l
    WHERE l.namespace = lease_namespace AND l.node_id <= max_node
      AND (l.instance = lease_instance
           OR l.expires_at + guard_ms * interval '1 ms' < now())
    ORDER BY l.instance = lease_instance DESC, l.node_id
    LIMIT 1
    FOR UPDATE;
    IF FOUND THEN
        UPDATE idgen.node_lease l
        SET instance = lease_instance, heartbeat = now(),
            expires_at = now() + lease_ms * interval '1 ms',
            last_tick = greatest(l.last_tick, promise_tick)
        WHERE l.namespace = lease_namespace AND l.node_id = r.node_id;
        leased_node := r.node_id;
        previous_instance := r.instance;
        previous_last_tick := r.last_tick;
        RETURN;
    END IF;

    SELECT g.g INTO leased_node
    FROM generate_series(0, max_node) AS g(g)
    WHERE NOT EXISTS (SELECT FROM idgen.node_lease l
                      WHERE l.namespace = lease_namespace AND l.node_id = g.g)
    ORDER BY g.g
    LIMIT 1;
    IF leased_node IS NOT NULL THEN
        INSERT INTO idgen.node_lease
            (namespace, node_id, instance, heartbeat, expires_at, last_tick)
        VALUES (lease_namespace, leased_node, lease_instance, now(),
                now() + lease_ms * interval '1 ms', promise_tick);
    END IF;
END
$$;
COMMENT ON FUNCTION idgen.node_lease_acquire(text, text, int, int, int, bigint) IS
    'Called by the idgen worker of a server with idgen.node_id = ''auto'' to lease a node id';
REVOKE ALL ON FUNCTION idgen.node_lease_acquire(text, text, int, int, int, bigint) FROM PUBLIC;

-- Renew lease_instance's lease of lease_node; false if another holds it
CREATE FUNCTION idgen.node_lease_renew(lease_namespace text, lease_node int,
    lease_instance text, lease_ms int, promise_tick bigint)
    RETURNS boolean
    LANGUAGE plpgsql
    SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    UPDATE idgen.node_lease l
    SET heartbeat = now(), expires_at = now() + lease_ms * interval '1 ms',
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
CREATE FUNCTION idgen.segment_allocate(tag text, want_step bigint,
    max_step bigint, OUT known boolean, OUT first_id bigint, OUT len bigint)
    LANGUAGE plpgsql
    SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r record;
    s bigint;
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
    s := least(greatest(want_step, r.step), greatest(max_step, r.step));
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
