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
SELECT idgen.segment_currval(NULL);
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
SELECT idgen.segment_drop('currval_a');
SELECT idgen.segment_drop('currval_b');
