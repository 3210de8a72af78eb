--
-- Text forms of IDs: fixed-width base62 and yyyyMMddHHmmssSSS-node-sequence
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

--
-- Base62: 11 characters from 0-9A-Za-z, zero-padded
--
SELECT id, idgen.id_to_base62(id) AS b62,
       idgen.id_from_base62(idgen.id_to_base62(id)) = id AS round_trip
FROM (VALUES (0::bigint), (1), (61), (62), (3843), (3844), (99158770),
             (175928847299117063), (9223372036854775807)) AS v(id);

-- Text order under COLLATE "C" is numeric order, over many magnitudes
SELECT setseed(0.42);
CREATE TEMP TABLE b AS
SELECT (random() * 2 ^ (random() * 63))::bigint AS id
FROM generate_series(1, 5000);
INSERT INTO b VALUES (0), (9223372036854775807), (61), (62);
SELECT count(*) AS misordered
FROM (SELECT id,
             row_number() OVER (ORDER BY id) AS by_number,
             row_number() OVER (ORDER BY idgen.id_to_base62(id) COLLATE "C")
                 AS by_text
      FROM (SELECT DISTINCT id FROM b) AS d) AS s
WHERE by_number <> by_text;
SELECT count(*) AS not_inverse
FROM b WHERE idgen.id_from_base62(idgen.id_to_base62(id)) <> id;
SELECT count(*) FILTER (WHERE length(idgen.id_to_base62(id)) <> 11)
       AS wrong_width
FROM b;
-- snowflake IDs too
SELECT count(*) AS misordered
FROM (SELECT g, lag(b62) OVER (ORDER BY g) AS prev, b62
      FROM (SELECT g, idgen.id_to_base62(idgen.snowflake_nextval()) AS b62
            FROM generate_series(1, 1000) AS g) AS s) AS t
WHERE b62 COLLATE "C" <= prev COLLATE "C";

SELECT idgen.id_to_base62(NULL) IS NULL AS a,
       idgen.id_from_base62(NULL) IS NULL AS b;

--
-- Friendly form, in UTC, under the server's layout or a given one
--
-- Discord's documented example: 2016-04-30 11:18:25.796 UTC, worker 1,
-- process 0 (node 32), increment 7
SELECT idgen.id_to_friendly(175928847299117063, 'discord') AS discord,
       idgen.id_from_friendly('20160430111825796-32-7', 'discord') AS id;
-- A tweet created "Wed Oct 10 20:19:24 +0000 2018" (Twitter's docs):
-- datacenter 10, worker 27 (node 347)
SELECT idgen.id_to_friendly(1050118621198921728, 'twitter') AS twitter;
-- Vesta time 12758739 = "Thu May 28 16:05:39 CST 2015", machine 1022
SELECT idgen.id_to_friendly(13699591685800958, 'vesta_max_peak') AS vesta;
-- Tick 0 of every preset is its epoch (Vesta's min-granularity IDs carry
-- type bit 62)
SELECT p, idgen.id_to_friendly(CASE p WHEN 'vesta_min_granularity'
                                      THEN 1::bigint << 62 ELSE 0 END, p)
          AS epoch
FROM unnest(ARRAY['idgen', 'twitter', 'discord', 'sonyflake',
                  'vesta_max_peak', 'vesta_min_granularity',
                  'uid_generator', 'pgedge', 'sonyflake_v2']) AS p;
SELECT idgen.id_to_friendly(idgen.id_make('2025-06-01 12:34:56.789+00', 5, 17),
                            'ts=41,node=10,seq=12,unit=1ms,epoch=2024-01-01')
       AS custom;

-- Exact inverses under the server's layout (idgen) and node
CREATE TEMP TABLE f AS
SELECT idgen.snowflake_nextval() AS id FROM generate_series(1, 2000);
SELECT count(*) AS not_inverse
FROM f WHERE idgen.id_from_friendly(idgen.id_to_friendly(id)) <> id;
SELECT count(*) FILTER (WHERE idgen.id_to_friendly(id)
                         !~ ('^\d{17}-' || current_setting('idgen.node_id') || '-\d+$'))
       AS bad_shape,
       count(*) FILTER (WHERE left(idgen.id_to_friendly(id), 17)
                              <> to_char((idgen.id_decode(id)).ts
                                         AT TIME ZONE 'UTC',
                                         'YYYYMMDDHH24MISSMS'))
       AS wrong_time
FROM f;
-- and under every preset (2024-01-01 to 2024-09-07: after idgen's epoch,
-- before uid_generator's 28 bits run out)
SELECT p, count(*) FILTER (WHERE idgen.id_from_friendly(
                                     idgen.id_to_friendly(id, p), p) <> id)
          AS not_inverse
FROM unnest(ARRAY['idgen', 'twitter', 'discord', 'sonyflake',
                  'vesta_max_peak', 'vesta_min_granularity',
                  'uid_generator', 'pgedge']) AS p,
     LATERAL (SELECT idgen.id_make(timestamptz '2024-01-01 00:00:00+00'
                                   + n * interval '3 hours 1.01 seconds',
                                   n % 1000, n % 256, p) AS id
              FROM generate_series(0, 2000) AS n) AS ids
GROUP BY p ORDER BY p;

SELECT idgen.id_to_friendly(NULL) IS NULL AS a,
       idgen.id_to_friendly(1, NULL) IS NULL AS b,
       idgen.id_from_friendly(NULL) IS NULL AS c,
       idgen.id_from_friendly('20240101000000000-0-0', NULL) IS NULL AS d;

--
-- Bad text is an error that quotes it, never a wrong number
--
SELECT q, pg_temp.try(q) AS result FROM (VALUES
    ($$SELECT idgen.id_from_base62('')$$),
    ($$SELECT idgen.id_from_base62('a_c')$$),
    ($$SELECT idgen.id_from_base62('000000000000')$$),
    ($$SELECT idgen.id_from_base62(' 0000000000')$$),
    ($$SELECT idgen.id_from_base62('00000-00000')$$),
    ($$SELECT idgen.id_from_base62('0000000000é')$$),
    ($$SELECT idgen.id_from_base62('AzL8n0Y58m8')$$),
    ($$SELECT idgen.id_from_base62('zzzzzzzzzzz')$$),
    ($$SELECT idgen.id_to_base62(-1)$$),
    ($$SELECT idgen.id_from_friendly('')$$),
    ($$SELECT idgen.id_from_friendly('20240101000001000-1-5x')$$),
    ($$SELECT idgen.id_from_friendly(' 20240101000001000-1-5')$$),
    ($$SELECT idgen.id_from_friendly('20240101000001000-0x-5')$$),
    ($$SELECT idgen.id_from_friendly('20240101000001000-1')$$),
    ($$SELECT idgen.id_from_friendly('2024-01-01 00:00:01-1-5')$$),
    ($$SELECT idgen.id_from_friendly('20240230000001000-1-5')$$),
    ($$SELECT idgen.id_from_friendly('20240101240000000-1-5')$$),
    ($$SELECT idgen.id_from_friendly('20231231235959999-1-5')$$),
    ($$SELECT idgen.id_from_friendly('20240101000001000-1024-5')$$),
    ($$SELECT idgen.id_from_friendly('20240101000001000-1-4096')$$),
    ($$SELECT idgen.id_from_friendly('20240101000001000-1-99999999999999999999999')$$),
    ($$SELECT idgen.id_from_friendly('99991231235959999-0-0')$$),
    ($$SELECT idgen.id_from_friendly('20230901000000001-1-0', 'sonyflake')$$),
    ($$SELECT idgen.id_from_friendly('20240101000000000-0-0', 'ts=40,node=10,seq=12,unit=100us,epoch=2024-01-01')$$),
    ($$SELECT idgen.id_from_friendly('20240101000000000-0-0', 'nosuch')$$),
    ($$SELECT idgen.id_to_friendly(-1)$$),
    ($$SELECT idgen.id_to_friendly(13699591685800958 | (2::bigint << 60), 'vesta_max_peak')$$),
    ($$SELECT idgen.id_to_friendly(0, 'ts=40,node=10,seq=12,unit=100us,epoch=2024-01-01')$$),
    ($$SELECT idgen.id_to_friendly(0, 'nosuch')$$),
    ($$SELECT idgen.id_to_friendly(0, 'vesta_min_granularity')$$)
) AS v(q);

-- Messages in full
SELECT idgen.id_from_base62('0000000000-');
SELECT idgen.id_from_base62('zzzzzzzzzzz');
SELECT idgen.id_to_base62(-1);
SELECT idgen.id_from_friendly('20240101000001000-1-5 ');
SELECT idgen.id_from_friendly('20240230000001000-1-5');
SELECT idgen.id_from_friendly('20240101000001000-1024-5');
SELECT idgen.id_from_friendly('20230901000000001-1-0', 'sonyflake');
SELECT idgen.id_to_friendly(-1);
SELECT idgen.id_to_friendly(0, 'ts=40,node=10,seq=12,unit=100us,epoch=2024-01-01');
