-- Bad input that once gave wrong results (issue 22): each now gives the
-- right value or the documented SQLSTATE.  After each error,
-- :LAST_ERROR_SQLSTATE shows its SQLSTATE (VERBOSITY verbose would also
-- print the C source line of each error, which changes with every edit).
\set VERBOSITY default
\set SHOW_CONTEXT never

-- Discord's timestamp reaches bit 63: a time from 2084 on would make a
-- negative ID; the friendly form refuses it as id_make does (22008, a time
-- outside the layout's range; 22003 before 0.4.0)
SELECT idgen.id_from_friendly('20880101000000000-0-0', 'discord');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.id_make('2088-01-01', 0, 0, 'discord');
\echo :LAST_ERROR_SQLSTATE
-- so is a time before the epoch (22008, as id_make); a node too large is 22003
SELECT idgen.id_from_friendly('20140831235959990-0-0', 'discord');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.id_make('2014-08-31 23:59:59.99+00', 0, 0, 'discord');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.id_from_friendly('20160430111825796-1024-7', 'discord');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.id_make('2016-04-30 11:18:25.796+00', 1024, 7, 'discord');
\echo :LAST_ERROR_SQLSTATE
-- the last time that fits is read, and is positive
SELECT idgen.id_to_friendly(9223372036850581504, 'discord') AS last_text;
SELECT idgen.id_from_friendly(idgen.id_to_friendly(9223372036850581504, 'discord'), 'discord') AS back;

-- A negative ID has no friendly form under any layout (22003)
SELECT idgen.id_to_friendly(-1, 'discord');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.id_to_friendly(-9223372036854775808, 'idgen');
\echo :LAST_ERROR_SQLSTATE
-- an unknown zone is 22023 on every path: a negative ID, bad text, good text
SELECT idgen.id_to_friendly(-1, 'discord', 'Mars/Olympus');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.id_to_friendly(175928847299117063, 'discord', 'Mars/Olympus');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.id_from_friendly('garbage', 'discord', 'Mars/Olympus');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.id_from_friendly('20880101000000000-0-0', 'discord', 'Mars/Olympus');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.id_from_friendly('20160430111825796-32-7', 'discord', 'Mars/Olympus');
\echo :LAST_ERROR_SQLSTATE

-- A custom layout whose epoch lies within a tick of the year 10000: its
-- only tick is tick 0 (the count of ticks once wrapped around)
SELECT ts, tick FROM idgen.id_decode(0, 'ts=41,node=10,seq=12,unit=1s,epoch=253402300799500');
SELECT idgen.id_timestamp(4194304, 'ts=41,node=10,seq=12,unit=1s,epoch=253402300799500');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.id_to_friendly(4194304, 'ts=41,node=10,seq=12,unit=1s,epoch=253402300799500');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.id_make('9999-12-31 23:59:59.7+00', 1, 1, 'ts=41,node=10,seq=12,unit=1s,epoch=253402300799500');
SELECT idgen.id_make('9999-12-31 23:59:59.9995+00', 1, 1, 'ts=41,node=10,seq=12,unit=1ms,epoch=253402300799999') AS last_ms;

-- Vesta IDs of any method round-trip through id_decode and id_make with
-- the decoded extra; without it, id_make writes the layout's method
SELECT count(*) AS ids,
       count(*) FILTER (WHERE idgen.id_make(d.ts, d.node_id, d.sequence, 'vesta_max_peak', d.extra) = i.id) AS round_trip,
       count(*) FILTER (WHERE idgen.id_make(d.ts, d.node_id, d.sequence, 'vesta_max_peak') = i.id) AS without_extra
FROM (SELECT idgen.id_make(timestamptz '2015-01-01 00:00:00+08' + g * interval '37 s', g % 1024, g * 7919 % 1048576,
                           'vesta_max_peak,method=' || (g % 3)) AS id
      FROM generate_series(0, 2999) g) i,
     LATERAL idgen.id_decode(i.id, 'vesta_max_peak') d;
SELECT idgen.id_make(d.ts, d.node_id, d.sequence, 'vesta_min_granularity', d.extra) = i.id AS min_granularity
FROM (SELECT idgen.id_make('2020-01-01', 5, 9, 'vesta_min_granularity,method=2') AS id) i,
     LATERAL idgen.id_decode(i.id, 'vesta_min_granularity') d;
-- a method the layout cannot hold (22003), a part that disagrees with the node (22023)
SELECT idgen.id_make('2016-01-01', 1, 1, 'vesta_max_peak', '{"method": 3}');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.id_make('2016-01-01', 1, 1, 'vesta_max_peak', '{"method": "two"}');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.id_make('2016-01-01', 1, 1, 'vesta_max_peak', '{"method": -1}');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.id_make('2016-01-01', 1, 1, 'vesta_max_peak', '{"method": 64}');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.id_make('-infinity', 1, 1, 'vesta_max_peak', '{"method": 2}');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.id_make('-infinity', 0, 0);
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.id_make('2016-04-30 11:18:25.796+00', 32, 7, 'discord', '{"worker": 1, "process": 0}') AS discord;
SELECT idgen.id_make('2016-04-30 11:18:25.796+00', 32, 7, 'discord', '{"worker": 2}');
\echo :LAST_ERROR_SQLSTATE
-- keys that are no field of the layout are ignored
SELECT idgen.id_make('2016-04-30 11:18:25.796+00', 32, 7, 'discord', '{}') = 175928847299117063 AS empty_extra;

-- Re-importing a stale Leaf row of a tag that allocated up to the largest
-- bigint: 22023, not an overflow in the error's own detail
SELECT idgen.segment_create('bad_top', 9223372036854775800, 100);
SELECT idgen.segment_nextval('bad_top') AS first_of_top;
SELECT max_id FROM idgen.segment_alloc WHERE biz_tag = 'bad_top';
SELECT idgen.segment_import_leaf('bad_top', 5, 100);
\echo :LAST_ERROR_SQLSTATE
SELECT idgen.segment_drop('bad_top');

-- segment_export_leaf checks the tag as segment_nextval does
SELECT * FROM idgen.segment_export_leaf('');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM idgen.segment_export_leaf(repeat('x', 129));
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM idgen.segment_export_leaf(repeat('x', 128));
\echo :LAST_ERROR_SQLSTATE

-- node_lease_acquire checks its namespace and instance first
SELECT * FROM idgen.node_lease_acquire(NULL, 'i', 1023, 30000, 0, 0);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM idgen.node_lease_acquire('default', NULL, 1023, 30000, 0, 0);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM idgen.node_lease_acquire(repeat('n', 1000000), 'i', 1023, 30000, 0, 0);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM idgen.node_lease_acquire(repeat('n', 129), 'i', 1023, 30000, 0, 0);
\echo :LAST_ERROR_SQLSTATE

-- The friendly form in a zone reads local times as CosId does (Java's
-- ZonedDateTime.of).  A repeated hour (America/New_York, 2020-11-01 01:00
-- to 02:00 happens twice): the earlier offset, EDT.
SET TimeZone = 'UTC';
SELECT idgen.id_timestamp(idgen.id_from_friendly('20201101010000000-6-146', 'twitter', 'America/New_York'), 'twitter') AS repeated_hour;
SELECT idgen.id_timestamp(idgen.id_from_friendly('20201101015959999-0-0', 'twitter', 'America/New_York'), 'twitter') AS end_of_repeated;
SELECT idgen.id_timestamp(idgen.id_from_friendly('20201101020000000-0-0', 'twitter', 'America/New_York'), 'twitter') AS after_it;
SELECT idgen.id_timestamp(idgen.id_from_friendly('20201101005959999-0-0', 'twitter', 'America/New_York'), 'twitter') AS before_it;
-- the second pass's text reads back as the first pass's ID, as in CosId
SELECT idgen.id_to_friendly(idgen.id_make('2020-11-01 06:30+00', 6, 146, 'twitter'), 'twitter', 'America/New_York') AS second_pass,
       idgen.id_timestamp(idgen.id_from_friendly(idgen.id_to_friendly(idgen.id_make('2020-11-01 06:30+00', 6, 146, 'twitter'), 'twitter', 'America/New_York'), 'twitter', 'America/New_York'), 'twitter') AS read_back;
-- a gap (2020-03-08 02:00 to 03:00 is skipped): moved forward by its length
SELECT idgen.id_timestamp(idgen.id_from_friendly('20200308023000000-0-0', 'twitter', 'America/New_York'), 'twitter') AS in_gap;
SELECT idgen.id_to_friendly(idgen.id_from_friendly('20200308023000000-0-0', 'twitter', 'America/New_York'), 'twitter', 'America/New_York') AS shown;
-- a half-hour change (Australia/Lord_Howe, 2020-04-05 01:30-02:00 twice,
-- 2020-10-04 02:00-02:30 skipped), and the southern hemisphere
SELECT idgen.id_timestamp(idgen.id_from_friendly('20200405014500000-0-0', 'twitter', 'Australia/Lord_Howe'), 'twitter') AS lord_howe_repeated;
SELECT idgen.id_timestamp(idgen.id_from_friendly('20201004021500000-0-0', 'twitter', 'Australia/Lord_Howe'), 'twitter') AS lord_howe_gap;
SELECT idgen.id_timestamp(idgen.id_from_friendly('20200405023000000-0-0', 'twitter', 'Australia/Sydney'), 'twitter') AS sydney_repeated;
-- fixed offsets and abbreviations have no repeated time
SELECT idgen.id_timestamp(idgen.id_from_friendly('20201101013000000-0-0', 'twitter', 'EST'), 'twitter') AS est;
SELECT idgen.id_timestamp(idgen.id_from_friendly('20201101013000000-0-0', 'twitter', '+05:30'), 'twitter') AS posix_offset;
-- every ID of a day with a repeated hour, shown in the zone and read back:
-- only the second pass (3600 s) reads as another ID, one hour earlier
SELECT count(*) AS ids,
       count(*) FILTER (WHERE back = id) AS same,
       count(*) FILTER (WHERE back <> id AND idgen.id_timestamp(id, 'twitter') - idgen.id_timestamp(back, 'twitter') = interval '1 hour') AS hour_earlier
FROM (SELECT id, idgen.id_from_friendly(idgen.id_to_friendly(id, 'twitter', 'America/New_York'), 'twitter', 'America/New_York') AS back
      FROM (SELECT idgen.id_make(timestamptz '2020-11-01 00:00+00' + g * interval '10 s', 1, 1, 'twitter') AS id
            FROM generate_series(0, 8639) g) s) t;
RESET TimeZone;
