-- Snowflake generator: API, ordering, spread, parallel use, errors
--
-- Runs on any server with idgen preloaded and idgen.node_id set (make
-- installcheck), or on make check's instance (test/regress.conf).  The
-- worker keeps its reservation in idgen.database: the extension must exist
-- there for IDs to be issued, as the README's set-up says; create it if it
-- is missing (first test of the schedule).
SELECT current_database() AS regress_db,
       current_setting('idgen.database') AS idgen_db \gset
\c :idgen_db
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS idgen;
\c :regress_db
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS idgen;
RESET client_min_messages;

-- Node and layout are the server's settings (layout: the default)
SELECT node_id = current_setting('idgen.node_id')::int AS node_is_setting,
       layout
FROM idgen.snowflake_status();

-- 10,000 IDs in one statement: unique and strictly increasing
CREATE TEMP TABLE ids AS
SELECT g, idgen.snowflake_nextval() AS id FROM generate_series(1, 10000) g;
SELECT count(*) AS n, count(DISTINCT id) AS distinct_ids,
       bool_and(id > 0) AS all_positive
FROM ids;
SELECT count(*) AS out_of_order
FROM (SELECT id, lag(id) OVER (ORDER BY g) AS prev FROM ids) s
WHERE id <= prev;

-- Every ID carries this server's node and a time close to now
SELECT count(*) FILTER (WHERE d.node_id <> current_setting('idgen.node_id')::int)
         AS wrong_node,
       count(*) FILTER (WHERE d.ts < now() - interval '1 minute'
                          OR d.ts > clock_timestamp() + interval '6 seconds') AS wrong_time
FROM ids, LATERAL idgen.id_decode(ids.id) d;

-- The sequence keeps counting across ticks: consecutive IDs differ by one
-- in the sequence field (mod 4096), even when the tick changes; or by two
-- where a call had to wait for the worker's reservation (its first value
-- is skipped, never issued: under Valgrind the worker renews late)
SELECT count(*) AS seq_jumps
FROM (SELECT d.sequence AS seq, lag(d.sequence) OVER (ORDER BY g) AS prev
      FROM ids, LATERAL idgen.id_decode(ids.id) d) s
WHERE seq <> (prev + 1) % 4096 AND seq <> (prev + 2) % 4096;

-- The worker runs and has published a reservation (whether the first call
-- had to wait for it depends on how long the server has been up; TAP tests
-- 050 and 074 count the waits)
SELECT worker_running, reserved_until IS NOT NULL AS reserved
FROM idgen.snowflake_status();

-- issued counts every ID
CREATE TEMP TABLE before AS SELECT issued FROM idgen.snowflake_status();
SELECT count(idgen.snowflake_nextval()) FROM generate_series(1, 1234);
SELECT s.issued - b.issued AS issued_delta FROM idgen.snowflake_status() s, before b;

-- Later calls in later statements are larger still
SELECT idgen.snowflake_nextval() > (SELECT max(id) FROM ids) AS larger;

-- At about one ID per tick, id % 4 over 1,000 IDs is even (within 30%);
-- a classic snowflake would put every one of them in residue 0
CREATE TEMP TABLE slow (g int, id bigint);
DO $$
BEGIN
  FOR i IN 1..1000 LOOP
    PERFORM pg_sleep(0.0011);
    INSERT INTO slow VALUES (i, idgen.snowflake_nextval());
  END LOOP;
END $$;
SELECT count(DISTINCT (d.tick)) > 900 AS about_one_per_tick
FROM slow, LATERAL idgen.id_decode(slow.id) d;
SELECT id % 4 AS residue, count(*) BETWEEN 175 AND 325 AS within_30pct
FROM slow GROUP BY 1 ORDER BY 1;
SELECT count(*) FILTER (WHERE id % 4 = 0) < 1000 AS not_all_in_zero FROM slow;

-- Parallel workers share the generator
CREATE TABLE par AS SELECT g FROM generate_series(1, 200000) g;
ANALYZE par;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT count(DISTINCT idgen.snowflake_nextval()) FROM par;
SELECT count(*) AS n, count(DISTINCT id) AS distinct_ids
FROM (SELECT idgen.snowflake_nextval() AS id FROM par) s;
-- force_parallel_mode is debug_parallel_query since PostgreSQL 16
SELECT CASE WHEN current_setting('server_version_num')::int >= 160000
  THEN 'debug_parallel_query' ELSE 'force_parallel_mode' END AS force_parallel \gset
SET :force_parallel = on;
EXPLAIN (COSTS OFF) SELECT idgen.snowflake_nextval();
SELECT idgen.snowflake_nextval() > (SELECT max(id) FROM ids) AS larger_in_worker;
RESET :force_parallel;
RESET max_parallel_workers_per_gather;
DROP TABLE par;

-- Declared properties
SELECT proname, provolatile, proparallel
FROM pg_proc WHERE pronamespace = 'idgen'::regnamespace
  AND proname IN ('snowflake_nextval', 'snowflake_status')
ORDER BY 1;

-- Settings are reserved under the idgen prefix
SET idgen.no_such_setting = 1;
-- and idgen.node_id cannot change at run time
SET idgen.node_id = 1;

-- The worker's reservation is ahead of the last ID, and is a table only the
-- owner may touch
SELECT reserved_until >= last_tick AS reserved_ahead FROM idgen.snowflake_status();
CREATE ROLE idgen_nobody;
SET ROLE idgen_nobody;
SELECT idgen.snowflake_nextval() > 0 AS plain_role_can_generate;
SELECT * FROM idgen.snowflake_reservation;
UPDATE idgen.snowflake_reservation SET reserved_until = now();
RESET ROLE;
DROP ROLE idgen_nobody;

-- snowflake_advance: every later ID above the given one, at once and
-- durably; refused when that is further ahead of the clock than max_lead
SELECT idgen.id_make(now() + interval '2 s', 1023, 4095) AS ahead \gset
SELECT idgen.snowflake_advance(:ahead);
SELECT idgen.snowflake_nextval() > :ahead AS above_advanced;
SELECT idgen.snowflake_advance(idgen.snowflake_nextval() - 1000) AS behind_is_fine;
SELECT idgen.id_make(now() + interval '1 hour', 0, 0) AS far \gset
-- (the messages name IDs and times: only the SQLSTATE is shown)
\set VERBOSITY sqlstate
SELECT idgen.snowflake_advance(:far);
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.snowflake_advance(9223372036854775807);
\echo :LAST_ERROR_SQLSTATE
-- no ID is below 1: an argument below 1 is a mistake (22023)
SELECT idgen.snowflake_advance(-1);
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.snowflake_advance(0);
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.snowflake_resume(-9223372036854775808);
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default
SELECT idgen.snowflake_nextval() < :far AS far_not_taken;
-- snowflake_resume on a server that refuses nothing advances and says false
SELECT idgen.snowflake_resume(idgen.snowflake_nextval()) AS lifted_a_refusal;
CREATE ROLE idgen_nobody;
GRANT EXECUTE ON FUNCTION idgen.snowflake_advance(bigint) TO idgen_nobody;
SET ROLE idgen_nobody;
SELECT idgen.snowflake_advance(1);
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
GRANT EXECUTE ON FUNCTION idgen.snowflake_resume(bigint) TO idgen_nobody;
SET ROLE idgen_nobody;
SELECT idgen.snowflake_resume(1);
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
REVOKE EXECUTE ON FUNCTION idgen.snowflake_resume(bigint) FROM idgen_nobody;
REVOKE EXECUTE ON FUNCTION idgen.snowflake_advance(bigint) FROM idgen_nobody;
SET ROLE idgen_nobody;
SELECT idgen.snowflake_advance(1);
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
DROP ROLE idgen_nobody;
-- snowflake_refusal() (since 0.4.0, monitoring/): nothing is refused here;
-- pg_monitor reads it and the monitoring columns of segment_alloc, not the
-- others; a role without pg_monitor reads neither
SELECT * FROM idgen.snowflake_refusal();
CREATE ROLE idgen_watcher IN ROLE pg_monitor;
CREATE ROLE idgen_nobody;
SET ROLE idgen_watcher;
SELECT * FROM idgen.snowflake_refusal();
SELECT count(biz_tag) + count(max_id) + count(step) + count(cache) >= 0 AS reads_columns
FROM idgen.segment_alloc;
SELECT count(description) FROM idgen.segment_alloc;
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SET ROLE idgen_nobody;
SELECT * FROM idgen.snowflake_refusal();
\echo :LAST_ERROR_SQLSTATE
SELECT count(max_id) FROM idgen.segment_alloc;
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
DROP ROLE idgen_watcher, idgen_nobody;
