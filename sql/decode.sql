-- id_decode, id_make, id_timestamp over every preset and custom layouts
SET timezone = 'UTC';

-- Round trip for every preset: make -> decode -> make gives the ID back
WITH presets(layout, ts, node, seq) AS (VALUES
  ('idgen', timestamptz '2025-06-01 12:34:56.789+00', 1023, 4095),
  ('twitter', timestamptz '2023-01-02 03:04:05.678+00', 31 * 32 + 17, 4095),
  ('discord', timestamptz '2021-01-01 00:00:00.001+00', 1023, 7),
  ('sonyflake', timestamptz '2024-02-29 23:59:59.99+00', 65535, 255),
  ('vesta_max_peak', timestamptz '2030-12-31 23:59:59+00', 1023, 1048575),
  ('vesta_min_granularity', timestamptz '2020-05-05 05:05:05.005+00', 1023, 1023),
  ('uid_generator', timestamptz '2022-07-07 07:07:07+00', 4194303, 8191),
  ('pgedge', timestamptz '2024-12-31 23:59:59.999+00', 1023, 4095),
  ('sonyflake_v2', timestamptz '2026-02-28 23:59:59.99+00', 4660, 1))
SELECT p.layout, m.id, d.ts = p.ts AS ts_ok, d.node_id = p.node AS node_ok,
       d.sequence = p.seq AS seq_ok,
       idgen.id_make(d.ts, d.node_id, d.sequence, p.layout) = m.id AS round_trip,
       idgen.id_timestamp(m.id, p.layout) = p.ts AS timestamp_ok
FROM presets p,
     LATERAL (SELECT idgen.id_make(p.ts, p.node, p.seq, p.layout) AS id) m,
     LATERAL idgen.id_decode(m.id, p.layout) d
ORDER BY 1;

-- Extra fields: Twitter's datacenter/worker, Discord's worker/process,
-- Vesta's constant method/type/version bits
SELECT layout, (idgen.id_decode(idgen.id_make('2024-01-01', 37, 0, layout), layout)).extra
FROM unnest(ARRAY['twitter', 'discord', 'vesta_max_peak', 'vesta_min_granularity', 'idgen']) layout;

-- Discord's documented example: 175928847299117063 is 2016-04-30
-- 11:18:25.796 UTC, internal worker 1, process 0, increment 7
SELECT ts, node_id, sequence, extra FROM idgen.id_decode(175928847299117063, 'discord');
SELECT idgen.id_make('2016-04-30 11:18:25.796+00', 32, 7, 'discord') = 175928847299117063 AS discord_make;

-- pgEdge's snowflake.c: its int64FromSnowflake macro with sf_msec =
-- (tv_sec - 1672531200) * 1000 + tv_nsec / 1000000 gives these IDs
-- (2025-11-25 12:00 UTC, node 1, count 7; 2023-11-14 22:13:20.123 UTC,
-- node 42, count 3); idgen's default layout makes the first one a year later
SELECT idgen.id_make('2025-11-25 12:00+00', 1, 7, 'pgedge') = 383949943603204103 AS pgedge_make,
       idgen.id_make('2023-11-14 22:13:20.123456+00', 42, 3, 'pgedge') = 115212498231271427 AS pgedge_make_ms,
       idgen.id_make('2026-11-25 12:00+00', 1, 7) = 383949943603204103 AS idgen_a_year_later;
SELECT ts, node_id, sequence FROM idgen.id_decode(383949943603204103, 'pgedge');
SELECT ts, node_id, sequence FROM idgen.id_decode(264905529753599999, 'pgedge');

-- Made by pgEdge's snowflake 2.6.0 itself (built from its source, node 7):
-- three IDs of its nextval() and four fixed values, with what its
-- get_epoch, get_node and get_count said of each (t/084 compares the two on
-- 40,000 IDs where pgEdge's extension is installed)
SELECT v.id,
       d.ts = to_timestamp(v.p_epoch) AND d.node_id = v.p_node AND d.sequence = v.p_count AS same_fields,
       idgen.id_make(to_timestamp(v.p_epoch), v.p_node, v.p_count, 'pgedge') = v.id AS makes_it_back
FROM (VALUES (516614997359489024, 1795701813.613, 7, 0),
             (516614997359489025, 1795701813.613, 7, 1),
             (516614997359489026, 1795701813.613, 7, 2),
             (383949943603204103, 1764072000.000, 1, 7),
             (9223372036854775807, 3871554455.551, 1023, 4095),
             (4194304, 1672531200.001, 0, 0),
             (1234567890123456789, 1966875122.167, 664, 277))
     AS v(id, p_epoch, p_node, p_count),
     LATERAL idgen.id_decode(v.id, 'pgedge') d;

-- Sonyflake v2's Compose with its defaults (39 bits of 10 ms since
-- 2025-01-01 UTC, 8 sequence, 16 machine): time 2838240000, sequence 7,
-- machine 1; and 2026-02-28 23:59:59.99 UTC, sequence 1, machine 4660
SELECT idgen.id_make('2025-11-25 12:00+00', 1, 7, 'sonyflake_v2') = 47617765540298753 AS sonyflake_v2_make,
       idgen.id_make('2025-01-01 00:00:00.01+00', 1, 0, 'sonyflake_v2') = 16777217 AS sonyflake_v2_first_tick,
       idgen.id_make('2025-11-25 12:00+00', 1, 7, 'sonyflake') = 47617765540298753 AS same_as_v1;
SELECT ts, node_id, sequence FROM idgen.id_decode(61460981989052980, 'sonyflake_v2');

-- The server's layout is the default
SELECT idgen.id_make('2024-01-01 00:00:00.001+00', 7, 1) AS first_ms_of_idgen_epoch;
SELECT * FROM idgen.id_decode(4194304 + 7 * 4096 + 1);
SELECT idgen.id_timestamp(4194304);

-- id_make rounds down to the tick, so time ranges map to ID ranges
SELECT idgen.id_make('2024-01-01 00:00:00.0019+00', 0, 0) = idgen.id_make('2024-01-01 00:00:00.001+00', 0, 0) AS floors;

-- Custom layouts
SELECT * FROM idgen.id_decode(idgen.id_make('2025-01-01 00:00:10+00', 5, 9,
  'ts=40,node=8,seq=15,unit=10ms,epoch=2025-01-01'), 'ts=40,node=8,seq=15,unit=10ms,epoch=2025-01-01');
SELECT idgen.id_make('2025-01-01 00:00:10+00', 5, 9, 'ts=40,seq=15,node=8,unit=1s,epoch=1735689600000');

-- Errors
SELECT idgen.id_decode(-1);
SELECT idgen.id_make('2024-01-01', 1024, 0);
SELECT idgen.id_make('2024-01-01', -1, 0);
SELECT idgen.id_make('2024-01-01', 0, 4096);
SELECT idgen.id_make('2023-12-31 23:59:59+00', 0, 0);
SELECT idgen.id_make('infinity', 0, 0);
SELECT idgen.id_make('2200-01-01', 0, 0);
SELECT idgen.id_make('2300-01-01', 0, 0, 'discord');
SELECT idgen.id_decode(1, 'snowflake');
SELECT idgen.id_decode(1, '');
SELECT idgen.id_decode(1, 'ts=41,node=10,seq=12,unit=1ms');
SELECT idgen.id_decode(1, 'ts=41,node=10,seq=13,unit=1ms,epoch=2024-01-01');
SELECT idgen.id_decode(1, 'node=10,ts=41,seq=12,unit=1ms,epoch=2024-01-01');
SELECT idgen.id_decode(1, 'ts=41,node=10,seq=12,unit=1fortnight,epoch=2024-01-01');
SELECT idgen.id_decode(1, 'ts=41,node=10,seq=12,unit=1ms,epoch=2024-13-01');
SELECT idgen.id_decode(1, 'ts=41,ts=10,seq=12,unit=1ms,epoch=2024-01-01');
SELECT idgen.id_decode(1, 'ts=41,node=10,seq=12,unit=1ms,epoch=2024-01-01,color=red');

-- NULL in, NULL out
SELECT idgen.id_decode(NULL) IS NULL AS null_decode, idgen.id_make(NULL, 1, 1) IS NULL AS null_make;

-- Times past the year 9999 are refused, so decoding never overflows; Unix
-- milliseconds, 0 included, are an epoch
SELECT idgen.id_decode(9223372036854775807, 'ts=50,node=1,seq=12,unit=1s,epoch=2024-01-01');
SELECT idgen.id_timestamp(9223372036854775807, 'ts=50,node=1,seq=12,unit=1s,epoch=2024-01-01');
SELECT ts FROM idgen.id_decode(idgen.id_make('9999-12-31 23:59:59+00', 1, 2, 'ts=50,node=1,seq=12,unit=1s,epoch=2024-01-01'), 'ts=50,node=1,seq=12,unit=1s,epoch=2024-01-01');
SELECT idgen.id_make('10000-01-01 00:00:00+00', 1, 2, 'ts=50,node=1,seq=12,unit=1s,epoch=2024-01-01');
SELECT idgen.id_decode(1, 'ts=41,node=10,seq=12,unit=1ms,epoch=10000-01-01');
SELECT ts FROM idgen.id_decode(1000::bigint << 22, 'ts=41,node=10,seq=12,unit=1ms,epoch=0');
SELECT ts FROM idgen.id_decode(9223372036854775807, 'ts=41,node=10,seq=12,unit=1ms,epoch=0');

-- Epochs must be real dates and times.  An impossible one is
-- datetime_field_overflow (22008), as '2024-02-31'::date is; a malformed
-- one, like any other bad spec, is invalid_parameter_value (22023)
SELECT idgen.id_decode(1, 'ts=41,node=10,seq=12,unit=1ms,epoch=2024-02-31');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT idgen.id_decode(1, 'ts=41,node=10,seq=12,unit=1ms,epoch=2023-02-29');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT idgen.id_decode(1, 'ts=41,node=10,seq=12,unit=1ms,epoch=2024-00-10');
SELECT idgen.id_make('2024-03-01', 0, 0, 'ts=41,node=10,seq=12,unit=1ms,epoch=2024-01-01T24:00:00Z');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT idgen.id_timestamp(1, 'ts=41,node=10,seq=12,unit=1ms,epoch=2024-01-01 23:60:00');
SELECT idgen.id_timestamp(1, 'ts=41,node=10,seq=12,unit=1ms,epoch=2024-01-01T23:59:60.000Z');
SELECT idgen.id_decode(1, 'ts=41,node=10,seq=12,unit=1ms,epoch=2024-01-01T00:00:00+08:00');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT idgen.id_decode(1, 'ts=41,node=10,seq=12,unit=1ms,epoch=2024-13-01');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
-- real leap days and the last second of a day are accepted
SELECT idgen.id_timestamp(0, 'ts=41,node=10,seq=12,unit=1ms,epoch=2024-02-29') AS leap_2024,
       idgen.id_timestamp(0, 'ts=41,node=10,seq=12,unit=1ms,epoch=2000-02-29') AS leap_2000,
       idgen.id_timestamp(0, 'ts=41,node=10,seq=12,unit=1ms,epoch=1900-02-28') AS not_leap_1900,
       idgen.id_timestamp(0, 'ts=41,node=10,seq=12,unit=1ms,epoch=2023-12-31T23:59:59.999Z') AS last_ms;
SELECT idgen.id_decode(1, 'ts=41,node=10,seq=12,unit=1ms,epoch=1900-02-29');

-- Vesta's constant fields hold what Vesta can write: method 0 (embedded),
-- 1 (central server) or 2 (REST), never 3 ("reserved, unused"); the
-- preset's own type; version 0.  Other IDs are refused (22003), naming each
-- impossible field, by id_decode, id_timestamp and id_to_friendly alike
SELECT idgen.id_decode(9223372036854775807, 'vesta_max_peak');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT idgen.id_timestamp(9223372036854775807, 'vesta_max_peak');
SELECT idgen.id_to_friendly(9223372036854775807, 'vesta_max_peak');
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT idgen.id_decode(9223372036854775807, 'vesta_min_granularity');
SELECT idgen.id_decode(idgen.id_make('2024-01-01', 1, 2, 'vesta_max_peak') | (3::bigint << 60), 'vesta_max_peak');
SELECT idgen.id_decode(idgen.id_make('2024-01-01', 1, 2, 'vesta_min_granularity'), 'vesta_max_peak');
SELECT idgen.id_timestamp(idgen.id_make('2024-01-01', 1, 2, 'vesta_max_peak'), 'vesta_min_granularity');
SELECT idgen.id_decode(-1, 'vesta_max_peak');
-- methods 1 and 2 are Vesta's own and decode like method 0
SELECT layout, m AS method, d.ts, d.node_id, d.sequence, d.extra,
       idgen.id_timestamp(id, layout) = d.ts AS timestamp_ok
FROM unnest(ARRAY['vesta_max_peak', 'vesta_min_granularity']) layout,
     generate_series(0, 2) m,
     LATERAL (SELECT idgen.id_make('2024-05-06 07:08:09+00', 5, 6, layout) | (m::bigint << 60) AS id) i,
     LATERAL idgen.id_decode(id, layout) d
ORDER BY 1, 2;
