-- id_floor and id_interval: partitioning a table by ID, by time
-- (docs/partitions.md)
CREATE EXTENSION IF NOT EXISTS idgen;
SET timezone = 'UTC';

-- The default layout: a day is 86,400,000 ms << 22, and the epoch
-- (2024-01-01 00:00 UTC) is midnight, so day bounds are multiples of it
SELECT idgen.id_interval('1 day') AS day,
       idgen.id_interval('1 day') = (86400000::bigint << 22) AS day_ok,
       idgen.id_interval('1 hour') AS hour,
       idgen.id_interval('24 hours') = idgen.id_interval('1 day') AS hours_ok,
       idgen.id_interval('1 ms') = 1 << 22 AS tick_ok;
SELECT idgen.id_floor('2024-01-01 00:00+00') AS epoch,
       idgen.id_floor('2026-11-25 00:00+00') AS day_floor,
       idgen.id_floor('2026-11-25 00:00+00') % idgen.id_interval('1 day') AS day_aligned,
       idgen.id_floor('2026-11-26 00:00+00') - idgen.id_floor('2026-11-25 00:00+00')
         = idgen.id_interval('1 day') AS width_ok;

-- id_floor is id_make(ts, 0, 0); the last ID of a day is just below the
-- next day's floor, its first ID is on its own floor
SELECT idgen.id_floor(ts) = idgen.id_make(ts, 0, 0) AS floor_is_make,
       idgen.id_make(ts - interval '1 ms', 1023, 4095) + 1 = idgen.id_floor(ts) AS last_below,
       idgen.id_floor(ts - interval '0.5 ms') = idgen.id_floor(ts - interval '1 ms') AS rounds_down
FROM (VALUES (timestamptz '2026-11-26 00:00+00')) v(ts);

-- Every preset, with its own layout: one day's width, and the floor of the
-- next day is today's floor plus it
SELECT l AS layout, idgen.id_interval('1 day', l) AS day,
       idgen.id_floor('2026-11-26 00:00+00', l) - idgen.id_floor('2026-11-25 00:00+00', l)
         = idgen.id_interval('1 day', l) AS width_ok,
       idgen.id_floor('2026-11-25 00:00+00', l) % idgen.id_interval('1 day', l) = 0 AS multiple_of_day
FROM unnest(ARRAY['idgen', 'twitter', 'discord', 'sonyflake', 'vesta_max_peak',
                  'vesta_max_peak,method=1', 'vesta_min_granularity',
                  'cosid_safe_js_ms', 'cosid_safe_js_s', 'pgedge', 'sonyflake_v2']) l
ORDER BY 1;
-- uid_generator's 28 bits of seconds ran out in 2024; its width still is
SELECT idgen.id_interval('1 day', 'uid_generator') = (86400::bigint << 35) AS uid_day;

-- A custom layout with its epoch at midnight UTC
SELECT idgen.id_interval('1 day', 'ts=41,node=10,seq=12,unit=1ms,epoch=2025-01-01') AS day,
       idgen.id_floor('2025-01-02 00:00+00', 'ts=41,node=10,seq=12,unit=1ms,epoch=2025-01-01') AS day2;

-- Refused: not a whole number of ticks (Sonyflake's 10 ms, Vesta's 1 s),
-- months, zero, negative, longer than the timestamp field
SELECT idgen.id_interval('5 ms', 'sonyflake');
SELECT idgen.id_interval('1.5 s', 'vesta_max_peak');
SELECT idgen.id_interval('1 microsecond');
SELECT idgen.id_interval('1 month');
SELECT idgen.id_interval('0');
SELECT idgen.id_interval('-1 day');
SELECT idgen.id_interval('30000 days');
SELECT idgen.id_interval('100 years');
-- Discord's 42-bit timestamp reaches bit 63: a span the field holds but a
-- positive bigint does not (2^41 ms is about 25,451 days)
SELECT idgen.id_interval('25000 days', 'discord') > 0 AS fits;
SELECT idgen.id_interval('30000 days', 'discord');
-- past int64 microseconds: too long, or not positive, whatever the tick
SELECT idgen.id_interval('2000000000 days');
SELECT idgen.id_interval('-2000000000 days');
SELECT idgen.id_interval('2000000000 days', 'sonyflake');
-- days that fit int64 microseconds, with hours that do not
SELECT idgen.id_interval('106751991 days 5 hours');
SELECT idgen.id_interval('-106751991 days -5 hours');
-- a layout of 100-microsecond ticks names its tick in microseconds
SELECT idgen.id_interval('150 microseconds', 'ts=40,node=0,seq=8,unit=100us,epoch=1700000000123');
SELECT idgen.id_interval('200 microseconds', 'ts=40,node=0,seq=8,unit=100us,epoch=1700000000123') = 2 << 8 AS two_ticks;
SELECT idgen.id_interval('1 day', 'no_such_layout');
-- Times the layout cannot hold
SELECT idgen.id_floor('2023-12-31 23:59:59+00');
SELECT idgen.id_floor('infinity');

-- Partitions by day with id_floor bounds: rows land by the time in their ID
CREATE TABLE part_orders (id bigint PRIMARY KEY, note text)
    PARTITION BY RANGE (id);
CREATE TABLE part_orders_20261125 PARTITION OF part_orders
    FOR VALUES FROM (idgen.id_floor('2026-11-25 00:00+00'))
    TO (idgen.id_floor('2026-11-26 00:00+00'));
CREATE TABLE part_orders_20261126 PARTITION OF part_orders
    FOR VALUES FROM (idgen.id_floor('2026-11-26 00:00+00'))
    TO (idgen.id_floor('2026-11-27 00:00+00'));
INSERT INTO part_orders VALUES
    (idgen.id_make('2026-11-25 00:00+00', 0, 0), 'first of the 25th'),
    (idgen.id_make('2026-11-25 23:59:59.999+00', 1023, 4095), 'last of the 25th'),
    (idgen.id_make('2026-11-26 00:00+00', 0, 0), 'first of the 26th'),
    (idgen.id_make('2026-11-26 12:00+00', 7, 1), 'noon of the 26th');
SELECT tableoid::regclass AS partition, note, idgen.id_timestamp(id) AS ts
FROM part_orders ORDER BY id;
-- A day's window scans one partition (plain scans, so the plan is the same
-- on every version)
SET enable_bitmapscan = off;
SET enable_indexscan = off;
SET enable_indexonlyscan = off;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM part_orders
WHERE id >= idgen.id_floor('2026-11-26 00:00+00', 'idgen')
  AND id < idgen.id_floor('2026-11-27 00:00+00', 'idgen');
RESET enable_bitmapscan;
RESET enable_indexscan;
RESET enable_indexonlyscan;
DROP TABLE part_orders;
