--
-- A segment tag's cache (issue 33, point 1): each backend takes that many
-- IDs of the shared segment at once and hands them out itself.  Its
-- arguments and errors; in one session the IDs stay consecutive.  Order
-- across backends and gaps are TAP test 040's.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS idgen;
RESET client_min_messages;

-- Off (1) unless asked for; the column's CHECK allows 1 to 10000
SELECT idgen.segment_create('plain_c', step => 20);
SELECT idgen.segment_create('cached', step => 20, cache => 5);
SELECT biz_tag, step, cache FROM idgen.segment_alloc
 WHERE biz_tag IN ('plain_c', 'cached') ORDER BY biz_tag;

-- One session alone: consecutive IDs, across the ends of cache runs and
-- of segments (step 20, cache 5)
SELECT array_agg(id ORDER BY n) AS ids
  FROM (SELECT n, idgen.segment_nextval('cached') AS id
          FROM generate_series(1, 30) n) s;
SELECT idgen.segment_currval('cached') AS currval;

-- The same cache again changes nothing: the next cached ID follows
SELECT idgen.segment_alter('cached', cache => 5);
SELECT idgen.segment_nextval('cached') AS next_after_same_cache;

-- A new cache drops what is cached and buffered: the next ID is the first
-- one allocated after the change
BEGIN;
SELECT max_id AS max_before FROM idgen.segment_alloc
 WHERE biz_tag = 'cached' FOR UPDATE \gset
SELECT idgen.segment_alter('cached', cache => 1000);
COMMIT;
SELECT idgen.segment_nextval('cached') = :max_before + 1 AS first_after_change;
SELECT idgen.segment_nextval('cached') = :max_before + 2 AS consecutive_after;

-- Other changes keep the cache
SELECT idgen.segment_alter('cached', step => 30, description => 'cached ids');
SELECT step, cache, description FROM idgen.segment_alloc WHERE biz_tag = 'cached';
SELECT idgen.segment_alter('plain_c', cache => 10000);
SELECT cache FROM idgen.segment_alloc WHERE biz_tag = 'plain_c';

-- Errors: out of range (22023), null at creation (22004), the column's
-- CHECK for any other writer (23514)
SELECT idgen.segment_create('bad_c', cache => 0);
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.segment_create('bad_c', cache => 10001);
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.segment_create('bad_c', cache => NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.segment_alter('cached', cache => -1);
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.segment_alter('cached', cache => 10001);
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY terse
UPDATE idgen.segment_alloc SET cache = 0 WHERE biz_tag = 'cached';
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS bad_tags FROM idgen.segment_alloc WHERE biz_tag = 'bad_c';

-- The old call forms still work, and the cache is the owner's to change
-- like the rest of the tag (42501 for another role)
CREATE ROLE regress_idgen_cache;
GRANT EXECUTE ON FUNCTION idgen.segment_create(text, bigint, int, text, int),
    idgen.segment_alter(text, int, text, bigint, int), idgen.segment_drop(text)
    TO regress_idgen_cache;
SET ROLE regress_idgen_cache;
SELECT idgen.segment_create('theirs_c', 1, 100, 'old form');
SELECT idgen.segment_alter('theirs_c', 50, 'old form, altered');
SELECT idgen.segment_alter('theirs_c', cache => 20);
SELECT idgen.segment_alter('cached', cache => 2);
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default
RESET ROLE;
SELECT biz_tag, step, cache, description FROM idgen.segment_alloc
 WHERE biz_tag IN ('theirs_c', 'cached') ORDER BY biz_tag;

SELECT idgen.segment_drop('theirs_c');
SELECT idgen.segment_drop('cached');
SELECT idgen.segment_drop('plain_c');
REVOKE EXECUTE ON FUNCTION idgen.segment_create(text, bigint, int, text, int),
    idgen.segment_alter(text, int, text, bigint, int), idgen.segment_drop(text)
    FROM regress_idgen_cache;
DROP ROLE regress_idgen_cache;

-- The end of a tag's range with a cache (issue 37, point 8): the last 251
-- IDs, up to the largest bigint, all reach the one session drawing them
-- (a run cached up to the largest bigint lost its end before), then 2200H
SELECT idgen.segment_create('at_end', start => 9223372036854775807 - 250,
                            step => 1000, cache => 100);
DO $$
DECLARE
    got bigint[] := '{}';
BEGIN
    LOOP
        BEGIN
            got := got || idgen.segment_nextval('at_end');
        EXCEPTION WHEN sequence_generator_limit_exceeded THEN
            EXIT;
        END;
        EXIT WHEN cardinality(got) > 300;
    END LOOP;
    RAISE NOTICE 'drew %, distinct %, first %, last %', cardinality(got),
        (SELECT count(DISTINCT x) FROM unnest(got) x), got[1], got[cardinality(got)];
END
$$;
SELECT idgen.segment_drop('at_end');
