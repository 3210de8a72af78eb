/* idgen--0.3.0--0.4.0.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION idgen UPDATE TO '0.4.0'" to load this file. \quit

-- Each change of 0.4.0 has its own section below, headed "-- BEGIN <feature>"
-- and ended by "-- END <feature>", so that parallel work merges cleanly.
-- Every new function, table and view gets a COMMENT (t/095_upgrade.pl checks).

-- BEGIN serving bounds

-- The bounds a node registry and a central segment server enforce, read
-- from the serving server's own configuration.  Calling this function loads
-- the library, which defines both settings (also without the preload) as
-- reload-only: a caller's SET, set_config or ALTER ROLE/DATABASE ... SET
-- cannot change them, only postgresql.conf or ALTER SYSTEM can.
CREATE FUNCTION idgen.serving_settings(OUT node_lease_guard interval,
    OUT segment_max_step bigint)
    RETURNS record
    LANGUAGE C STABLE PARALLEL RESTRICTED
    AS 'MODULE_PATHNAME', 'serving_settings';
COMMENT ON FUNCTION idgen.serving_settings() IS
    'Bounds this server enforces as node registry (idgen.node_lease_guard) and central segment server (idgen.segment_max_step), from its own configuration only';

-- One row per namespace; node_lease_acquire locks its namespace's row to
-- take one lease at a time.  No other role may read or lock it (unlike an
-- advisory lock, which any role can take).
CREATE TABLE idgen.node_lease_lock (
    namespace text PRIMARY KEY
);
COMMENT ON TABLE idgen.node_lease_lock IS
    'Lock rows of node_lease_acquire, one per namespace: acquisitions in a namespace take one at a time';
REVOKE ALL ON TABLE idgen.node_lease_lock FROM PUBLIC;

-- The guard time is the registry's own idgen.node_lease_guard
-- (idgen.serving_settings; 10 s where it is not set), a lease lasts at least
-- a second and is never shortened, and the caller's guard_ms is ignored.
CREATE OR REPLACE FUNCTION idgen.node_lease_acquire(lease_namespace text,
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
    lease interval := greatest(coalesce(lease_ms, 0), 1000) * interval '1 ms';
    top int := least(coalesce(max_node, -1), 1048574);
BEGIN
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
        previous_instance := r.instance;
        previous_last_tick := r.last_tick;
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

-- The largest step is the central server's own idgen.segment_max_step
-- (idgen.serving_settings; 1,000,000 where it is not set); the caller's
-- max_step is ignored.  The tag's row lock serializes allocations; only
-- roles with UPDATE on idgen.segment_alloc (none but its owner) can take it.
CREATE OR REPLACE FUNCTION idgen.segment_allocate(tag text, want_step bigint,
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

-- END serving bounds
