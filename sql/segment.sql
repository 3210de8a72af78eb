--
-- Segment IDs (Leaf): API, privileges and every error.
-- After each error, :LAST_ERROR_SQLSTATE shows its SQLSTATE.  Filling
-- idgen.segment_max_tags is TAP test 033's (it sets the setting).
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS idgen;
RESET client_min_messages;

-- The table is kept by pg_dump
SELECT 'idgen.segment_alloc'::regclass = ANY (extconfig) AS dumped
  FROM pg_extension WHERE extname = 'idgen';

-- Create tags; max_id is the last ID allocated (start - 1)
SELECT idgen.segment_create('order', step => 10);
SELECT idgen.segment_create('user', 1000, 5, 'user ids');
SELECT biz_tag, max_id, step, description, update_time IS NOT NULL AS has_time
  FROM idgen.segment_alloc ORDER BY biz_tag;

-- IDs of one tag follow each other across segment switches
SELECT array_agg(id ORDER BY n) AS ids
  FROM (SELECT n, idgen.segment_nextval('order') AS id
          FROM generate_series(1, 25) n) s;
SELECT idgen.segment_nextval('user') AS first_user_id;

-- The first segment had the tag's step (10), the next one twice that,
-- because it was allocated soon after the first (dynamic step)
SELECT biz_tag, state, cur_value, cur_max, cur_step, fetches >= 2 AS refilled,
       last_fetch <= clock_timestamp() AS fetched_before
  FROM idgen.segment_status WHERE biz_tag = 'order';
SELECT max_id >= 30 AS allocated_ahead FROM idgen.segment_alloc
 WHERE biz_tag = 'order';

-- A rolled-back transaction never gives IDs back
BEGIN;
SELECT idgen.segment_nextval('user') FROM generate_series(1, 3);
ROLLBACK;
SELECT idgen.segment_nextval('user') AS after_rollback;

-- alter: step and description; max_id only forward, and the buffered IDs
-- below the new max_id are dropped
SELECT idgen.segment_alter('order', step => 50, description => 'orders');
SELECT step, description FROM idgen.segment_alloc WHERE biz_tag = 'order';
SELECT idgen.segment_alter('order', max_id => 100000);
SELECT idgen.segment_nextval('order') AS after_max_id_moved;
SELECT max_id >= 100050 AS allocated_with_new_step
  FROM idgen.segment_alloc WHERE biz_tag = 'order';
SELECT idgen.segment_alter('order', max_id => 5);
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.segment_alter('order', step => 0);
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.segment_alter('nosuchtag', step => 5);
\echo :LAST_ERROR_SQLSTATE
-- max_id set to what it is already: nothing moves, and the IDs already
-- buffered are kept (no jump); a step this large allocates nothing more
SELECT idgen.segment_create('same_max', 1, 1000000);
SELECT idgen.segment_nextval('same_max') AS same_first \gset
SELECT max_id AS same_max FROM idgen.segment_alloc WHERE biz_tag = 'same_max' \gset
SELECT idgen.segment_alter('same_max', max_id => :same_max);
SELECT idgen.segment_nextval('same_max') = :same_first + 1 AS buffered_kept,
       max_id = :same_max AS max_id_unchanged
  FROM idgen.segment_alloc WHERE biz_tag = 'same_max';
SELECT idgen.segment_drop('same_max');

-- Errors of segment_nextval
SELECT idgen.segment_nextval(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.segment_nextval('nosuchtag');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.segment_nextval('');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.segment_nextval(repeat('x', 129));
\echo :LAST_ERROR_SQLSTATE
-- A tag of exactly 128 bytes is fine
SELECT idgen.segment_create(repeat('x', 128), 7);
SELECT idgen.segment_nextval(repeat('x', 128)) AS long_tag_id;
SELECT idgen.segment_drop(repeat('x', 128));

-- Unknown tags do not stay in shared memory
SELECT count(*) AS unknown_slots FROM idgen.segment_status
 WHERE state = 'unknown';

-- A tag asked for before it existed works once created
SELECT idgen.segment_nextval('late');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.segment_create('late', 42);
SELECT idgen.segment_nextval('late') AS late_id;

-- Errors of segment_create
SELECT idgen.segment_create('order');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.segment_create(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.segment_create('bad', start => 0);
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.segment_create('bad', step => 0);
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.segment_create('bad', step => NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.segment_create('bad', start => NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.segment_create('');
\echo :LAST_ERROR_SQLSTATE

-- drop: the tag is gone from the table and from shared memory
SELECT idgen.segment_drop('late');
SELECT idgen.segment_nextval('late');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS late_rows FROM idgen.segment_alloc WHERE biz_tag = 'late';
SELECT idgen.segment_drop('late');
\echo :LAST_ERROR_SQLSTATE

-- A tag that reaches the largest bigint: the last segment is short, then
-- the tag is used up
SELECT idgen.segment_create('edge', 9223372036854775800, 5);
SELECT idgen.segment_nextval('edge') FROM generate_series(1, 8);
SELECT idgen.segment_nextval('edge');
\echo :LAST_ERROR_SQLSTATE
SELECT max_id FROM idgen.segment_alloc WHERE biz_tag = 'edge';
SELECT state FROM idgen.segment_status WHERE biz_tag = 'edge';
SELECT idgen.segment_drop('edge');

-- Privileges: EXECUTE on segment_nextval (PUBLIC has it) is enough to draw
-- from a tag whose owner has not revoked draw from public
-- (segment_privilege.sql), not to create, alter or drop tags or to write
-- the table; segment_status shows such a role no tag (it reads none)
CREATE ROLE regress_idgen_segment;
SET ROLE regress_idgen_segment;
SELECT idgen.segment_nextval('user') > 1000 AS can_draw;
SELECT idgen.segment_create('mine');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.segment_alter('user', max_id => 99999999);
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.segment_drop('user');
\echo :LAST_ERROR_SQLSTATE
UPDATE idgen.segment_alloc SET max_id = 0;
\echo :LAST_ERROR_SQLSTATE
INSERT INTO idgen.segment_alloc VALUES ('mine', 0, 1);
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS tags_seen FROM idgen.segment_status;
DO $$
DECLARE
    failed int := 0;
BEGIN
    FOR i IN 1..100 LOOP
        BEGIN
            PERFORM idgen.segment_nextval('junk' || i);
        EXCEPTION WHEN undefined_object THEN
            failed := failed + 1;
        END;
    END LOOP;
    RAISE NOTICE '% calls for unknown tags failed with 42704', failed;
END
$$;
RESET ROLE;
-- Calls for tags that do not exist take no slot in shared memory
SELECT count(*) AS junk_slots FROM idgen.segment_status WHERE biz_tag LIKE 'junk%';
-- EXECUTE on the admin functions is all a tag administrator needs: they
-- run as the extension's owner, the table itself stays closed
GRANT EXECUTE ON FUNCTION idgen.segment_create(text, bigint, int, text, int),
    idgen.segment_alter(text, int, text, bigint, int), idgen.segment_drop(text)
    TO regress_idgen_segment;
SET ROLE regress_idgen_segment;
SELECT idgen.segment_create('mine', 1, 1000);
SELECT idgen.segment_nextval('mine');
SELECT idgen.segment_alter('mine', step => 20, description => 'mine, bigger');
SELECT idgen.segment_alter('mine', max_id => 0);
\echo :LAST_ERROR_SQLSTATE
UPDATE idgen.segment_alloc SET max_id = 0;
\echo :LAST_ERROR_SQLSTATE
-- Dropped and created again: never below what was allocated before
SELECT idgen.segment_drop('mine');
SELECT idgen.segment_create('mine', 1, 1000);
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.segment_create('mine', 1001, 1000);
SELECT idgen.segment_nextval('mine');
RESET ROLE;
-- Even writers of the table cannot move max_id back or rename a tag, and a
-- deleted or truncated tag is remembered
UPDATE idgen.segment_alloc SET max_id = 0 WHERE biz_tag = 'mine';
\echo :LAST_ERROR_SQLSTATE
UPDATE idgen.segment_alloc SET biz_tag = 'yours' WHERE biz_tag = 'mine';
\echo :LAST_ERROR_SQLSTATE
BEGIN;
DELETE FROM idgen.segment_alloc WHERE biz_tag = 'mine';
INSERT INTO idgen.segment_alloc (biz_tag, max_id, step) VALUES ('mine', 0, 10);
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
BEGIN;
TRUNCATE idgen.segment_alloc;
SELECT max_id >= 20 AS mine_kept FROM idgen.segment_dropped WHERE biz_tag = 'mine';
ROLLBACK;
SELECT idgen.segment_drop('mine');
REVOKE EXECUTE ON FUNCTION idgen.segment_create(text, bigint, int, text, int),
    idgen.segment_alter(text, int, text, bigint, int), idgen.segment_drop(text)
    FROM regress_idgen_segment;
DROP ROLE regress_idgen_segment;

-- Another database has tags of its own: the same name is another tag,
-- with its own numbering; DROP DATABASE stops that database's segment
-- worker and drops it at once
SELECT current_database() AS regress_db \gset
SELECT idgen.segment_nextval('user') AS user_here \gset
CREATE DATABASE regress_idgen_other;
\c regress_idgen_other
SET client_min_messages = warning;
CREATE EXTENSION idgen;
RESET client_min_messages;
SELECT idgen.segment_nextval('user');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.segment_create('user', 500000);
SELECT idgen.segment_nextval('user'), idgen.segment_nextval('user');
SELECT biz_tag, max_id >= 500001 AS own_numbering FROM idgen.segment_alloc;
\c :regress_db
SELECT idgen.segment_nextval('user') > :user_here AS here_continues;
DROP DATABASE regress_idgen_other;

-- Clean up
SELECT idgen.segment_drop('order');
SELECT idgen.segment_drop('user');
SELECT count(*) AS tags_left FROM idgen.segment_status;
