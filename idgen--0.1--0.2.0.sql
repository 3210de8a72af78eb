/* idgen--0.1--0.2.0.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION idgen UPDATE TO '0.2.0'" to load this file. \quit

-- BEGIN snowflake

-- The durable high-water mark now lives first in the data directory's
-- idgen.state file (src/reservation.c); the table row carries it to
-- standbys and through pg_upgrade.  It is the server's state, not data to
-- dump: a restored old row must never meet the live one.  Dropping the
-- table from the extension and adding it back removes it from the tables
-- pg_dump dumps.
ALTER EXTENSION idgen DROP TABLE idgen.snowflake_reservation;
ALTER EXTENSION idgen ADD TABLE idgen.snowflake_reservation;
COMMENT ON TABLE idgen.snowflake_reservation IS
    'Copy of the snowflake high-water mark for standbys and pg_upgrade; written by the idgen worker, which keeps the mark itself in the data directory''s idgen.state file';

-- One more column: durable_until, the reservation in the state file
DROP FUNCTION idgen.snowflake_status();
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
    OUT durable_until timestamptz)
    AS 'MODULE_PATHNAME', 'snowflake_status'
    LANGUAGE C VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION idgen.snowflake_status() IS
    'State of this server''s snowflake generator: node, layout, last tick, lead, reservation, counters';

-- After a change of idgen.layout or idgen.node_id that could make new IDs
-- smaller than issued ones, snowflake IDs are refused until a superuser
-- accepts the change with this function.
CREATE FUNCTION idgen.snowflake_accept_layout() RETURNS boolean
    AS 'MODULE_PATHNAME', 'snowflake_accept_layout'
    LANGUAGE C VOLATILE;
COMMENT ON FUNCTION idgen.snowflake_accept_layout() IS
    'Superuser only: accept a change of idgen.layout or idgen.node_id under which new snowflake IDs may be smaller than issued ones; false if nothing was refused';
REVOKE ALL ON FUNCTION idgen.snowflake_accept_layout() FROM PUBLIC;

-- END snowflake

-- BEGIN decode and make

COMMENT ON FUNCTION idgen.id_decode(bigint) IS
    'Timestamp, node, sequence, tick and extra fields of an ID under the server''s idgen.layout';
COMMENT ON FUNCTION idgen.id_decode(bigint, text) IS
    'Timestamp, node, sequence, tick and extra fields of an ID under the given layout';
COMMENT ON FUNCTION idgen.id_timestamp(bigint) IS
    'Time of an ID under the server''s idgen.layout';
COMMENT ON FUNCTION idgen.id_timestamp(bigint, text) IS
    'Time of an ID under the given layout';
COMMENT ON FUNCTION idgen.id_make(timestamptz, bigint, bigint) IS
    'Build an ID from its time, node and sequence under the server''s idgen.layout';
COMMENT ON FUNCTION idgen.id_make(timestamptz, bigint, bigint, text) IS
    'Build an ID from its time, node and sequence under the given layout';

-- END decode and make

-- BEGIN segment

-- Tag administration needs only EXECUTE: the functions run as the
-- extension's owner, with a pinned search_path, and never move max_id
-- backwards.  A role needs no privilege on idgen.segment_alloc.
ALTER FUNCTION idgen.segment_create(text, bigint, int, text) SECURITY DEFINER;
ALTER FUNCTION idgen.segment_alter(text, int, text, bigint) SECURITY DEFINER;
ALTER FUNCTION idgen.segment_drop(text) SECURITY DEFINER;

COMMENT ON FUNCTION idgen.segment_status_fn() IS
    'Rows of the idgen.segment_status view: segment tags in shared memory';

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
-- backwards, a tag is never renamed, and a deleted or truncated tag leaves
-- its max_id in idgen.segment_dropped.
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
COMMENT ON FUNCTION idgen.segment_alloc_guard() IS
    'Trigger of idgen.segment_alloc: max_id never moves backwards, dropped tags are remembered';
REVOKE ALL ON FUNCTION idgen.segment_alloc_guard() FROM PUBLIC;

CREATE TRIGGER segment_alloc_guard
    BEFORE INSERT OR UPDATE OR DELETE ON idgen.segment_alloc
    FOR EACH ROW EXECUTE FUNCTION idgen.segment_alloc_guard();
CREATE TRIGGER segment_alloc_guard_truncate
    BEFORE TRUNCATE ON idgen.segment_alloc
    FOR EACH STATEMENT EXECUTE FUNCTION idgen.segment_alloc_guard();

-- END segment

-- BEGIN node leases

-- The registry sets the bounds: the guard time is the registry's own
-- idgen.node_lease_guard (10 s where it is not set), a lease lasts at least
-- a second and is never shortened, and the caller's guard_ms is ignored.
-- So no argument value takes over a live lease.  A server's instance name
-- ends with a random key of its data directory, which callers cannot guess.
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
    guard interval := coalesce(current_setting('idgen.node_lease_guard', true)::interval,
                               interval '10 s');
    lease interval := greatest(coalesce(lease_ms, 0), 1000) * interval '1 ms';
    top int := least(coalesce(max_node, -1), 1048574);
BEGIN
    -- One acquisition at a time in a namespace; renewals are not blocked
    PERFORM pg_advisory_xact_lock(hashtext('idgen.node_lease'),
                                  hashtext(lease_namespace));

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

CREATE OR REPLACE FUNCTION idgen.node_lease_renew(lease_namespace text,
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
                              now() + greatest(coalesce(lease_ms, 0), 1000) * interval '1 ms'),
        last_tick = greatest(l.last_tick, promise_tick)
    WHERE l.namespace = lease_namespace AND l.node_id = lease_node
      AND l.instance = lease_instance;
    RETURN FOUND;
END
$$;

-- END node leases

-- BEGIN central segment server

-- The largest step is the central server's own idgen.segment_max_step
-- (1,000,000 where it is not set); the caller's max_step is ignored, so no
-- issuer can take more of a tag than the central server allows.
CREATE OR REPLACE FUNCTION idgen.segment_allocate(tag text, want_step bigint,
    max_step bigint, OUT known boolean, OUT first_id bigint, OUT len bigint)
    LANGUAGE plpgsql
    SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r record;
    s bigint;
    server_max bigint := coalesce(nullif(current_setting('idgen.segment_max_step', true), '')::bigint,
                                  1000000);
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

-- END central segment server
