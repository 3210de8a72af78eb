--
-- Gene IDs: gene_of, gene_id, gene_decode, and sharding by a key other than
-- the ID (a table partitioned by id % 8, looked up by user name)
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS idgen;
RESET client_min_messages;

-- Wait (a minute or so at most) until the idgen worker has made its first
-- reservation, so this file also runs on its own right after CREATE EXTENSION
DO $$
BEGIN
    FOR i IN 1..60 LOOP
        BEGIN
            PERFORM idgen.snowflake_nextval();
            RETURN;
        EXCEPTION WHEN OTHERS THEN
            PERFORM pg_sleep(0.5);
        END;
    END LOOP;
    RAISE EXCEPTION 'the idgen worker made no reservation in time';
END $$;

-- SQLSTATE and message of a statement, or 'ok'
CREATE FUNCTION pg_temp.try(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE q;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

-- Text keys hash like Java's String.hashCode(); these genes are
-- hashCode() & mask as OpenJDK computes them
SELECT k, idgen.gene_of(k, 3) AS g3, idgen.gene_of(k, 16) AS g16,
       idgen.gene_of(k, 31) AS g31
FROM (VALUES (''), ('hello'), ('testroy'), ('Aa'), ('BB'),
             ('polygenelubricants'), ('é'), ('Zürich'), ('日本語'),
             ('😀'), ('a😀b'), ('user_123')) AS v(k);

-- Integer keys use their own low bits; negative ones in two's complement
SELECT k, idgen.gene_of(k, 3) AS g3, idgen.gene_of(k, 31) AS g31
FROM (VALUES (0::bigint), (12345), (-1), (-8), (9223372036854775807),
             (-9223372036854775808)) AS v(k);

-- The seed vector: origin 12394846, key 'testroy', 3 bits -> 99158770
SELECT idgen.gene_of('testroy', 3) AS gene,
       idgen.gene_id(12394846, 'testroy', 3) AS id;
SELECT * FROM idgen.gene_decode(99158770, 3);
SELECT idgen.gene_id(1000, 12345::bigint, 4) AS id,
       (idgen.gene_decode(idgen.gene_id(1000, 12345::bigint, 4), 4)).*;
SELECT idgen.gene_id(0, 'testroy', 31) AS id,
       idgen.gene_id(4294967295, 'hello', 31) AS id2;
-- the largest origin for 3 bits, and one too many
SELECT idgen.gene_id(1152921504606846975, 'testroy', 3);
SELECT idgen.gene_id(1152921504606846976, 'testroy', 3);
SELECT idgen.gene_id(-1, 'testroy', 3);

-- NULL in, NULL out
SELECT idgen.gene_of(NULL::text, 3) IS NULL AS a,
       idgen.gene_of('x', NULL) IS NULL AS b,
       idgen.gene_id(NULL, 'x', 3) IS NULL AS c,
       idgen.gene_id(NULL::text, 3) IS NULL AS d,
       idgen.gene_decode(NULL, 3) IS NULL AS e;

-- Every error path, with its SQLSTATE
SELECT q, pg_temp.try(q) AS result FROM (VALUES
    ($$SELECT idgen.gene_of('x', 0)$$),
    ($$SELECT idgen.gene_of('x', 32)$$),
    ($$SELECT idgen.gene_of('x', -1)$$),
    ($$SELECT idgen.gene_of(1::bigint, 0)$$),
    ($$SELECT idgen.gene_of(1::bigint, 32)$$),
    ($$SELECT idgen.gene_id(1, 'x', 0)$$),
    ($$SELECT idgen.gene_id(1, 1::bigint, 32)$$),
    ($$SELECT idgen.gene_id(4294967296, 'x', 31)$$),
    ($$SELECT idgen.gene_id(-5, 7::bigint, 3)$$),
    ($$SELECT idgen.gene_id('x', 0)$$),
    ($$SELECT idgen.gene_id('x', 13)$$),
    ($$SELECT idgen.gene_id(7::bigint, 32)$$),
    ($$SELECT idgen.gene_decode(1, 0)$$),
    ($$SELECT idgen.gene_decode(1, 32)$$),
    ($$SELECT idgen.gene_decode(-1, 3)$$)
) AS v(q);

-- Messages in full
SELECT idgen.gene_of('x', 32);
SELECT idgen.gene_id(4294967296, 'x', 31);
SELECT idgen.gene_decode(-1, 3);

--
-- Snowflake IDs carrying a gene: unique, increasing with the plain
-- snowflake IDs they are interleaved with, and id % 2^k = gene % 2^k for
-- every k up to the gene bits
--
CREATE TEMP TABLE g AS
SELECT n, 'key_' || n AS k,
       CASE WHEN n % 5 = 0 THEN idgen.snowflake_nextval()
            WHEN n % 5 = 1 THEN idgen.gene_id('key_' || n, 12)
            ELSE idgen.gene_id('key_' || n, 3) END AS id
FROM generate_series(1, 3000) AS n;
SELECT count(*) AS ids, count(DISTINCT id) AS distinct_ids FROM g;
SELECT count(*) AS not_increasing
FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev FROM g) AS s
WHERE id <= prev;
SELECT k_bits, count(*) FILTER (WHERE id % (1 << k_bits)
                                   <> idgen.gene_of(k, 3) % (1 << k_bits))
       AS wrong
FROM g, generate_series(1, 3) AS k_bits
WHERE n % 5 NOT IN (0, 1)
GROUP BY k_bits ORDER BY k_bits;
SELECT count(*) FILTER (WHERE id % 4096 <> idgen.gene_of(k, 12)) AS wrong12
FROM g WHERE n % 5 = 1;
-- gene IDs decode like other snowflake IDs, and their gene comes back
SELECT count(*) FILTER (WHERE (idgen.gene_decode(id, 3)).gene
                              <> idgen.gene_of(k, 3)) AS wrong_gene,
       count(*) FILTER (WHERE (idgen.id_decode(id)).node_id
                              <> current_setting('idgen.node_id')::int)
         AS wrong_node
FROM g WHERE n % 5 NOT IN (0, 1);
-- integer keys
SELECT count(*) FILTER (WHERE idgen.gene_id(n::bigint, 5) % 32 <> n % 32)
       AS wrong
FROM generate_series(1, 500) AS n;

--
-- Sharding by user name: 8 partitions by id % 8, ids carry the gene of the
-- user name, so the name alone says which partition holds the user
--
CREATE TABLE users (
    id bigint NOT NULL,
    name text NOT NULL
) PARTITION BY LIST ((id % 8));
SELECT format('CREATE TABLE users_%s PARTITION OF users FOR VALUES IN (%s)',
              p, p)
FROM generate_series(0, 7) AS p \gexec
CREATE INDEX ON users (name);

INSERT INTO users (id, name)
SELECT idgen.gene_id(name, 3), name
FROM (SELECT CASE n % 4 WHEN 0 THEN 'user_' || n
                        WHEN 1 THEN 'José_' || n
                        WHEN 2 THEN '用户' || n
                        ELSE 'emoji😀' || n END AS name
      FROM generate_series(1, 10000) AS n) AS s;
ANALYZE users;

SELECT count(*) AS users, count(DISTINCT id) AS ids FROM users;
-- every partition holds users
SELECT tableoid::regclass AS partition, count(*) AS users
FROM users GROUP BY 1 ORDER BY 1;
-- every user is in the partition its name's gene names
SELECT count(*) AS misplaced
FROM users
WHERE tableoid::regclass::text <> 'users_' || idgen.gene_of(name, 3);
-- and a lookup by name alone, through its one partition, finds every user
SELECT count(*) AS not_found
FROM users AS u
WHERE NOT EXISTS (SELECT 1 FROM users AS v
                  WHERE v.name = u.name
                    AND v.id % 8 = idgen.gene_of(u.name, 3) % 8);

-- A lookup by name touches one partition, pruned at plan time ...
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF)
SELECT * FROM users
WHERE name = 'José_41' AND id % 8 = idgen.gene_of('José_41', 3) % 8;
SELECT name, id % 8 AS shard FROM users
WHERE name = 'José_41' AND id % 8 = idgen.gene_of('José_41', 3) % 8;
-- ... or at run time, when the name is a parameter
PREPARE by_name(text) AS
SELECT name, id % 8 AS shard FROM users
WHERE name = $1 AND id % 8 = idgen.gene_of($1, 3) % 8;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE by_name('user_4244');
EXECUTE by_name('user_4244');
RESET plan_cache_mode;
RESET enable_seqscan;
RESET enable_bitmapscan;
DEALLOCATE by_name;

DROP TABLE users;
