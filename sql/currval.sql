-- snowflake_currval and segment_currval: the last ID this session drew
-- (like a sequence's currval), an error before the first draw
SELECT idgen.snowflake_currval();
SELECT idgen.segment_currval('currval_a');
SELECT idgen.segment_create('currval_a', 1000, 10);
SELECT idgen.segment_create('currval_b', 5000, 10);
-- the tag exists but this session has not drawn from it
SELECT idgen.segment_currval('currval_a');
SELECT idgen.segment_nextval('currval_a') AS a1 \gset
SELECT idgen.segment_currval('currval_a') = :a1 AS same;
SELECT idgen.segment_nextval('currval_b') AS b1 \gset
SELECT idgen.segment_nextval('currval_a') AS a2 \gset
-- each tag its own
SELECT idgen.segment_currval('currval_a') = :a2 AS a_is_a2,
       idgen.segment_currval('currval_b') = :b1 AS b_is_b1,
       :a2 > :a1 AS a_grows;
-- within one statement, the last one drawn
SELECT max(idgen.segment_nextval('currval_a')) = idgen.segment_currval('currval_a') AS last_of_many
  FROM generate_series(1, 25);
-- a tag read from a table (stored with a one-byte header) is the same tag
-- as the literal, for both
CREATE TEMP TABLE currval_tags (tag text);
INSERT INTO currval_tags VALUES ('currval_a');
SELECT idgen.segment_nextval(tag) AS a_col FROM currval_tags \gset
SELECT :a_col > :a2 AS a_grows,
       idgen.segment_currval('currval_a') = :a_col AS same_tag,
       (SELECT idgen.segment_currval(tag) FROM currval_tags) = :a_col AS by_column;
SELECT idgen.segment_nextval('currval_a') > :a_col AS literal_continues;
SELECT idgen.segment_currval(NULL);
-- its tag is checked as segment_nextval checks it
SELECT idgen.segment_currval('');
SELECT idgen.segment_currval(repeat('x', 129));
SELECT idgen.snowflake_nextval() AS s1 \gset
SELECT idgen.snowflake_currval() = :s1 AS same;
-- gene_id counts as a snowflake draw
SELECT idgen.gene_id('alice', 4) AS g1 \gset
SELECT idgen.snowflake_currval() = :g1 AS gene_counts;
-- a failed draw keeps the old values
SELECT idgen.segment_currval('currval_a') AS a_last \gset
SELECT idgen.segment_nextval('currval_missing');
SELECT idgen.segment_currval('currval_a') = :a_last AS unchanged;
SELECT idgen.segment_currval('currval_missing');
-- DISCARD SEQUENCES and DISCARD ALL forget both, as a sequence's currval;
-- DISCARD PLANS and DISCARD TEMP do not
SELECT idgen.segment_nextval('currval_a') AS a3 \gset
SELECT idgen.snowflake_nextval() AS s2 \gset
DISCARD PLANS;
DISCARD TEMP;
SELECT idgen.snowflake_currval() = :s2 AS kept, idgen.segment_currval('currval_a') = :a3 AS kept;
DISCARD SEQUENCES;
SELECT idgen.snowflake_currval();
SELECT idgen.segment_currval('currval_a');
SELECT idgen.segment_currval('currval_b');
SELECT idgen.segment_nextval('currval_a') AS a4 \gset
SELECT idgen.snowflake_nextval() AS s3 \gset
SELECT idgen.snowflake_currval() = :s3 AS again, idgen.segment_currval('currval_a') = :a4 AS again;
-- DISCARD ALL in a transaction block fails, and forgets nothing
BEGIN;
DISCARD ALL;
ROLLBACK;
SELECT idgen.snowflake_currval() = :s3 AS kept, idgen.segment_currval('currval_a') = :a4 AS kept;
DISCARD ALL;
SELECT idgen.snowflake_currval();
SELECT idgen.segment_currval('currval_a');
-- Draws made by parallel workers count: after the statement, currval is
-- the largest ID it drew in any process, the last one (IDs increase).
-- These hold whether or not workers are launched (the server running
-- installcheck may have none to give); t/067_currval_parallel.pl asserts
-- them with workers proven launched and drawing
CREATE TABLE currval_par AS SELECT g FROM generate_series(1, 100000) g;
ANALYZE currval_par;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF) SELECT max(idgen.snowflake_nextval()) FROM currval_par;
SELECT max(idgen.snowflake_nextval()) AS pmax FROM currval_par \gset
SELECT idgen.snowflake_currval() = :pmax AS largest_of_workers;
SELECT max(idgen.segment_nextval('currval_b')) AS pseg FROM currval_par \gset
SELECT idgen.segment_currval('currval_b') = :pseg AS largest_of_workers;
-- the leader's own next draw is the last again
SELECT idgen.snowflake_nextval() AS s4 \gset
SELECT idgen.snowflake_currval() = :s4 AND :s4 > :pmax AS own_draw_after;
-- a statement run in a worker alone (by the leader if none is launched)
SELECT CASE WHEN current_setting('server_version_num')::int >= 160000
  THEN 'debug_parallel_query' ELSE 'force_parallel_mode' END AS force_parallel \gset
SET :force_parallel = on;
SELECT idgen.snowflake_nextval() AS s5 \gset
SELECT idgen.segment_nextval('currval_b') AS b5 \gset
RESET :force_parallel;
SELECT idgen.snowflake_currval() = :s5 AS worker_draw,
       idgen.segment_currval('currval_b') = :b5 AS worker_draw;
-- DISCARD forgets what workers reported too
SELECT max(idgen.snowflake_nextval()) FROM currval_par \gset
DISCARD SEQUENCES;
SELECT idgen.snowflake_currval();
RESET parallel_leader_participation;
RESET max_parallel_workers_per_gather;
RESET min_parallel_table_scan_size;
RESET parallel_tuple_cost;
RESET parallel_setup_cost;
DROP TABLE currval_par;
-- An AFTER INSERT trigger that draws for another table: snowflake_currval
-- is the session's last draw, the trigger's, as lastval() would be
CREATE TABLE currval_t (id bigint PRIMARY KEY DEFAULT idgen.snowflake_nextval(), v text);
CREATE TABLE currval_log (id bigint PRIMARY KEY DEFAULT idgen.snowflake_nextval(), t_id bigint);
CREATE FUNCTION currval_log_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO currval_log (t_id) VALUES (NEW.id);
  RETURN NULL;
END $$;
CREATE TRIGGER currval_log_after AFTER INSERT ON currval_t
  FOR EACH ROW EXECUTE FUNCTION currval_log_row();
INSERT INTO currval_t (v) VALUES ('x');
SELECT idgen.snowflake_currval() = (SELECT id FROM currval_log) AS the_triggers_id,
       idgen.snowflake_currval() <> (SELECT id FROM currval_t) AS not_the_rows_id;
DROP TABLE currval_t, currval_log;
DROP FUNCTION currval_log_row();
SELECT idgen.segment_drop('currval_a');
SELECT idgen.segment_drop('currval_b');
