# 060_held_to_clock.pl
#	idgen.max_lead = 0: the generator held to the wall clock (issue 13).
#
# With max_lead 0 an ID's tick is at most one ahead of the wall clock's (the
# next tick may begin once the current one's sequence is used up), so a
# decoded time is never more than one tick ahead of the clock.  At full
# speed the generator is held back (it waits for the clock), and when it
# falls behind the clock after using more than half a tick it may begin the
# current tick at sequence 0; at one ID per tick the sequence still walks on
# by one.  A statement that pauses before drawing at full speed takes the
# ticks that went unused since it began (issue 25); a pause gives back as
# many of them as it lasted, and a process that waited for the clock
# lately begins a tick it falls behind to at sequence 0 (issue 33).
# Outcomes only:
# uniqueness, order, how far ahead or behind a time is, the walk; never how
# fast.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

my $node = idgen_node('held', conf => "idgen.max_lead = 0\n");
start_node($node);
$node->safe_psql('postgres', 'CREATE EXTENSION idgen');
wait_ready($node);
is($node->safe_psql('postgres', 'SHOW idgen.max_lead'), '0', 'max_lead is 0');

# IDs of table (g, id) not above the one drawn before them
sub out_of_order
{
	my ($table) = @_;

	return $node->safe_psql(
		'postgres', qq{
SELECT count(*) FROM (SELECT id, lag(id) OVER (ORDER BY g) AS prev FROM $table) s
WHERE id <= prev});
}

# IDs of table (id, began) whose time is before their statement's start
sub before_start
{
	my ($table) = @_;

	return $node->safe_psql(
		'postgres', qq{
SELECT count(*) FROM $table
WHERE idgen.id_timestamp(id) < date_trunc('milliseconds', began)});
}

# Full speed, one backend: 400,000 IDs (about 100 ticks of the default
# layout's 4,096 IDs), each with the wall clock read right after it
$node->safe_psql(
	'postgres', q{
CREATE TABLE fast AS
SELECT g, id, clock_timestamp() AS after
FROM (SELECT g, idgen.snowflake_nextval() AS id
      FROM (SELECT generate_series(1, 400000) AS g) s) t});
is( $node->safe_psql(
		'postgres', 'SELECT count(*) = count(DISTINCT id) FROM fast'),
	't',
	'full speed: 400,000 IDs, no duplicate');
is(out_of_order('fast'), 0, 'full speed: every ID above the one before');

# How far ahead of the clock read after it an ID's time is: never more than
# one tick (1,000 µs)
my $ahead = $node->safe_psql(
	'postgres', q{
SELECT max(extract(epoch FROM idgen.id_timestamp(id) - after) * 1e6)::bigint
FROM fast});
cmp_ok($ahead, '<=', 1000,
	"full speed: no ID's time more than one tick ahead of the clock ($ahead µs)");

# A statement that draws faster than the layout allows after a pause: a
# materialised FROM generate_series builds its 400,000 rows before the first
# call (tens of ms).  It goes on with the ticks that went unused since it
# began, so it loses none of them: its first ID's time is that of the
# statement's start, more than a few ticks before the clock read after it.
# No ID's time is before the statement's start, none more than one tick
# ahead of the clock; unique and increasing.
$node->safe_psql(
	'postgres', q{
CREATE TABLE plain AS
SELECT g, idgen.snowflake_nextval() AS id, clock_timestamp() AS after,
       statement_timestamp() AS began
FROM generate_series(1, 400000) AS g});
is( $node->safe_psql(
		'postgres', 'SELECT count(*) = count(DISTINCT id) FROM plain'),
	't',
	'materialised loop: 400,000 IDs, no duplicate');
is(out_of_order('plain'), 0, 'materialised loop: every ID above the one before');
is(before_start('plain'), 0,
	"materialised loop: no ID's time before the statement's start");
$ahead = $node->safe_psql(
	'postgres', q{
SELECT max(extract(epoch FROM idgen.id_timestamp(id) - after) * 1e6)::bigint
FROM plain});
cmp_ok($ahead, '<=', 1000,
	"materialised loop: no ID's time more than one tick ahead of the clock ($ahead µs)");
my $behind = $node->safe_psql(
	'postgres', q{
SELECT (extract(epoch FROM after - idgen.id_timestamp(id)) * 1e6)::bigint
FROM plain WHERE g = 1});
cmp_ok($behind, '>', 5000,
	"materialised loop: the first ID took a tick of the pause before it, not the clock's ($behind µs behind)");

# A pause in such a statement gives back as many of its ticks as it lasted,
# not all of them: one statement sleeps 0.5 s (its lag), draws three IDs,
# pauses a few ms, draws three more, then pauses until longer than the lag
# could be and draws three more.  With the internal clock reading of each
# call between its before and after, the lag only shrinking by a pause's
# length bounds each ID's step over the one before: at most twice the time
# between them plus two ticks (a reset to the clock's tick would jump by the
# whole lag after the short pause).  After the long pause the lag is gone:
# the clock's tick.  Outcomes of the rule; the pauses' lengths do not matter.
$node->safe_psql(
	'postgres', q{
CREATE TABLE paused (g int, part int, before timestamptz, id bigint,
                     after timestamptz, began timestamptz);
DO $$
DECLARE
  i int := 0;
  first_after timestamptz;
  last_after timestamptz;
BEGIN
  PERFORM pg_sleep(0.5);
  FOR part IN 1..3 LOOP
    IF part = 2 THEN
      PERFORM pg_sleep(0.005);
    ELSIF part = 3 THEN
      SELECT min(after) FILTER (WHERE g = 1), max(after)
        INTO first_after, last_after FROM paused;
      WHILE clock_timestamp() < last_after + (first_after - statement_timestamp()) + interval '2 ms' LOOP
        PERFORM pg_sleep(0.05);
      END LOOP;
    END IF;
    FOR k IN 1..3 LOOP
      i := i + 1;
      INSERT INTO paused
      VALUES (i, part, clock_timestamp(), idgen.snowflake_nextval(), clock_timestamp(),
              statement_timestamp());
    END LOOP;
  END LOOP;
END $$});
is($node->safe_psql('postgres', 'SELECT count(DISTINCT id) FROM paused'),
	'9', 'paused statement: 9 IDs, no duplicate');
is(out_of_order('paused'), 0, 'paused statement: every ID above the one before');
is(before_start('paused'), 0,
	"paused statement: no ID's time before the statement's start");
is( $node->safe_psql(
		'postgres', q{
SELECT string_agg(g::text, ',') FROM (
  SELECT g, idgen.id_timestamp(id) AS t, after,
         lag(idgen.id_timestamp(id)) OVER (ORDER BY g) AS prev_t,
         lag(before) OVER (ORDER BY g) AS prev_before
  FROM paused) s
WHERE t > prev_t + 2 * (after - prev_before) + interval '2 ms'}),
	'',
	'paused statement: no ID steps further over the one before than twice the time between them plus two ticks');
my ($short_behind, $could_tell) = split /\|/, $node->safe_psql(
	'postgres', q{
SELECT extract(epoch FROM p.before - idgen.id_timestamp(p.id)) * 1000,
       date_trunc('milliseconds', p.before) >
         idgen.id_timestamp(q.id) + 2 * (p.after - q.before) + interval '2 ms'
FROM paused p JOIN paused q ON q.g = p.g - 1 WHERE p.g = 4});
SKIP:
{
	skip "the short pause took too long to tell a kept lag from the clock's tick ($short_behind ms behind)", 1
	  unless $could_tell eq 't';
	cmp_ok($short_behind, '>=', 1,
		"paused statement: the ID after the short pause still a tick or more behind the clock ($short_behind ms)");
}
is( $node->safe_psql(
		'postgres', q{
SELECT count(*) FROM paused
WHERE part = 3 AND idgen.id_timestamp(id) < date_trunc('milliseconds', before)}),
	'0',
	"paused statement: after a pause longer than the lag, the clock's tick");

# A process that waited for the clock a few ticks ago draws faster than the
# layout allows, so when the state falls behind the clock it continues at
# sequence 0, not mid-sequence (the values below would be lost).  One DO
# block: statements of 10,000 IDs at full speed until one of them waited
# for the clock (clock_waits moved; only this backend draws here), a pause
# of 2 ms (the state, at most one tick ahead of the clock, is then behind
# it), one more ID.  The wait began after that statement's start, so where
# the clock read after the next ID is less than 10 ticks past that start,
# the wait was recent when the next ID was drawn, and its sequence is 0.
# A slower run (the wait earlier, a longer pause) is skipped, not failed.
$node->safe_psql(
	'postgres', q{
CREATE TABLE burst (k text, v bigint, t timestamptz);
DO $$
DECLARE
  w0 bigint;
  w1 bigint;
  m bigint;
  t0 timestamptz;
  tries int := 0;
BEGIN
  LOOP
    tries := tries + 1;
    SELECT clock_waits INTO w0 FROM idgen.snowflake_status();
    t0 := clock_timestamp();
    SELECT max(x) INTO m
    FROM (SELECT idgen.snowflake_nextval() AS x FROM (SELECT generate_series(1, 10000)) g) s;
    SELECT clock_waits INTO w1 FROM idgen.snowflake_status();
    EXIT WHEN w1 > w0 OR tries = 50;
  END LOOP;
  PERFORM pg_sleep(0.002);
  INSERT INTO burst VALUES ('last', m, t0), ('waits', w1 - w0, NULL),
                           ('next', idgen.snowflake_nextval(), NULL);
  UPDATE burst SET t = clock_timestamp() WHERE k = 'next';
END $$});
my ($waits, $since_ms, $moved, $next_seq) = split /\|/, $node->safe_psql(
	'postgres', q{
SELECT w.v, extract(epoch FROM n.t - l.t) * 1000,
       (idgen.id_decode(n.v)).tick > (idgen.id_decode(l.v)).tick,
       (idgen.id_decode(n.v)).sequence
FROM burst w, burst l, burst n WHERE w.k = 'waits' AND l.k = 'last' AND n.k = 'next'});
SKIP:
{
	skip "no statement waited for the clock ($waits waits), the next ID came $since_ms ms after the waiting statement began or stayed in its tick", 1
	  unless $waits > 0 && $since_ms < 10 && $moved eq 't';
	is($next_seq, 0,
		"after a statement that waited for the clock and a pause, $since_ms ms after that statement began, the next tick begins at sequence 0");
}

# Two backends at full speed for 3 s, each transaction 20,000 IDs into a
# table: unique across both
$node->safe_psql('postgres', 'CREATE TABLE both_ids (id bigint)');
my $pgb = start_pgbench(
	$node,
	'INSERT INTO both_ids SELECT idgen.snowflake_nextval() FROM (SELECT generate_series(1, 20000)) s;',
	clients => 2,
	jobs => 2,
	seconds => 3);
my ($out, $err, $rc) = finish_pgbench($pgb);
is($rc, 0, 'two backends at full speed: pgbench ran without errors')
  or diag($err);
is( $node->safe_psql(
		'postgres',
		'SELECT count(*) > 0 AND count(*) = count(DISTINCT id) FROM both_ids'),
	't',
	'two backends at full speed: no duplicate');
is( $node->safe_psql(
		'postgres', q{
SELECT count(*) FROM both_ids b, LATERAL idgen.id_decode(b.id) d
WHERE d.ts > clock_timestamp()}),
	'0',
	'two backends: no ID has a time ahead of the clock now');

# About one ID per tick: the sequence walks on by one (mod 4,096), so IDs
# spread over every residue of id % 2^k even when held to the clock
$node->safe_psql(
	'postgres', q{
CREATE TABLE slow (g int, id bigint);
DO $$
BEGIN
  FOR i IN 1..500 LOOP
    PERFORM pg_sleep(0.0011);
    INSERT INTO slow VALUES (i, idgen.snowflake_nextval());
  END LOOP;
END $$});
is( $node->safe_psql(
		'postgres', q{
SELECT count(*) FROM (
  SELECT d.sequence AS seq, lag(d.sequence) OVER (ORDER BY g) AS prev
  FROM slow, LATERAL idgen.id_decode(slow.id) d) s
WHERE seq <> (prev + 1) % 4096}),
	'0',
	'one ID per tick: the sequence walks on by one');
is(out_of_order('slow'), 0, 'one ID per tick: every ID above the one before');
cmp_ok(
	$node->safe_psql('postgres', 'SELECT min(id) FROM slow'),
	'>',
	$node->safe_psql('postgres', 'SELECT max(id) FROM fast'),
	'later IDs are above the full-speed ones');

$node->stop;
done_testing();
