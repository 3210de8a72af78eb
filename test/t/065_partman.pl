# pg_partman (5.x, Debian's postgresql-N-partman) partitions a table by
# snowflake ID into days, with the recipe of docs/partitions.md:
# p_interval := id_interval('1 day'), p_start_partition := id_floor(today).
# Asserts: the partitions' bounds are id_floor of consecutive midnights; rows
# inserted now (snowflake_nextval defaults) land in the partition of their
# own day, none in the default partition; a row made for tomorrow lands in
# tomorrow's; run_maintenance premakes days ahead of the newest row, and a
# row for the last premade day lands there; a one-day window of IDs scans
# one partition.  Skipped where pg_partman is missing or older than 5.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

my $node = idgen_node('partman', node_id => 3);
$node->start;

my $version = $node->safe_psql('postgres',
	q{SELECT default_version FROM pg_available_extensions WHERE name = 'pg_partman'});
if ($version eq '')
{
	plan skip_all => 'pg_partman is not installed (Debian: postgresql-'
	  . $node->pg_version->major . '-partman)';
}
elsif ($version !~ /^(\d+)\./ || $1 < 5)
{
	plan skip_all => "pg_partman $version is older than 5.0 (create_parent's 5.x signature)";
}
note "pg_partman $version";

$node->safe_psql('postgres', q{
	CREATE EXTENSION idgen;
	CREATE SCHEMA partman;
	CREATE EXTENSION pg_partman SCHEMA partman;
	CREATE TABLE public.orders (
		id bigint NOT NULL DEFAULT idgen.snowflake_nextval(),
		note text,
		PRIMARY KEY (id)
	) PARTITION BY RANGE (id);
	-- Each partition with its bounds (NULL for the default partition)
	CREATE VIEW parts AS
		SELECT c.relname, b[1]::bigint AS lo, b[2]::bigint AS hi
		FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid,
		     regexp_match(pg_get_expr(c.relpartbound, c.oid),
		                  'FROM \(''?(\d+)''?\) TO \(''?(\d+)''?\)') b
		WHERE i.inhparent = 'public.orders'::regclass;
});
wait_ready($node);

# Today (UTC), fixed once, so a run across midnight checks what it made
my $today = $node->safe_psql('postgres',
	q{SELECT date_trunc('day', now(), 'UTC') AT TIME ZONE 'UTC'});
note "today: $today";
sub day
{
	my ($k) = @_;
	return "(timestamp '$today' + interval '$k days') AT TIME ZONE 'UTC'";
}
sub floor_of_day
{
	my ($k) = @_;
	return $node->safe_psql('postgres', 'SELECT idgen.id_floor(' . day($k) . ')');
}

$node->safe_psql('postgres', q{
	SELECT partman.create_parent(
		p_parent_table := 'public.orders',
		p_control := 'id',
		p_interval := idgen.id_interval('1 day')::text,
		p_type := 'range',
		p_premake := 2,
		p_start_partition := idgen.id_floor(} . day(0) . q{)::text);
});

my $width = $node->safe_psql('postgres', q{SELECT idgen.id_interval('1 day')});
is($width, '362387865600000', "a day is 86,400,000 ms << 22 = $width IDs");
is($node->safe_psql('postgres',
		q{SELECT string_agg(lo::text, ',' ORDER BY lo) FROM parts WHERE lo IS NOT NULL}),
	join(',', map { floor_of_day($_) } 0 .. 2),
	'create_parent made today and 2 days ahead, each from id_floor of its midnight');
is($node->safe_psql('postgres',
		q{SELECT count(*) FROM parts WHERE lo IS NOT NULL AND hi - lo <> idgen.id_interval('1 day')}),
	'0', 'every partition is exactly one day of IDs');
is($node->safe_psql('postgres', q{SELECT count(*) FROM parts WHERE lo IS NULL}),
	'1', 'and a default partition');

# Rows inserted now, by the column default
$node->safe_psql('postgres', q{
	INSERT INTO orders (note) SELECT 'now ' || g FROM generate_series(1, 1000) g;
});
my $placed = q{
	SELECT count(*) FILTER (WHERE p.lo = idgen.id_floor(date_trunc('day', idgen.id_timestamp(o.id), 'UTC'))),
	       count(*) FILTER (WHERE p.lo IS NULL),
	       count(*)
	FROM orders o JOIN parts p ON p.relname = o.tableoid::regclass::text};
is($node->safe_psql('postgres', $placed), '1000|0|1000',
	"1,000 rows inserted now are each in their own day's partition, none in the default");
my $in_today = $node->safe_psql('postgres', q{
	SELECT count(*) FROM orders o JOIN parts p ON p.relname = o.tableoid::regclass::text
	WHERE p.lo = } . floor_of_day(0));
diag("$in_today of 1,000 rows in today's partition (the rest: made after midnight UTC)")
  if $in_today != 1000;
cmp_ok($in_today + 0, '>', 0, "today's partition holds the rows made today");

# A row made for tomorrow noon
$node->safe_psql('postgres',
	'INSERT INTO orders VALUES (idgen.id_make(' . day(1) . q{ + interval '12 hours', 3, 0), 'tomorrow')});
is($node->safe_psql('postgres', q{
		SELECT p.lo FROM orders o JOIN parts p ON p.relname = o.tableoid::regclass::text
		WHERE note = 'tomorrow'}),
	floor_of_day(1), "a row made for tomorrow is in tomorrow's partition");

# run_maintenance premakes 2 days ahead of the newest row (tomorrow)
$node->safe_psql('postgres', q{SELECT partman.run_maintenance('public.orders')});
is($node->safe_psql('postgres',
		q{SELECT string_agg(lo::text, ',' ORDER BY lo) FROM parts WHERE lo IS NOT NULL}),
	join(',', map { floor_of_day($_) } 0 .. 3),
	'run_maintenance made the day after the premade ones: 2 days ahead of tomorrow');
$node->safe_psql('postgres',
	'INSERT INTO orders VALUES (idgen.id_make(' . day(3) . q{ + interval '6 hours', 3, 0), 'in 3 days')});
is($node->safe_psql('postgres', q{
		SELECT p.lo FROM orders o JOIN parts p ON p.relname = o.tableoid::regclass::text
		WHERE note = 'in 3 days'}),
	floor_of_day(3), 'a row made in 3 days is in the partition run_maintenance made');
is($node->safe_psql('postgres', $placed), '1002|0|1002',
	"every row is in its own day's partition, none in the default");

# A one-day window of IDs scans one partition: with a named layout
# (IMMUTABLE, pruned while planning) and with the server's (STABLE, pruned
# when the query starts)
my $tomorrow_part = $node->safe_psql('postgres',
	'SELECT relname FROM parts WHERE lo = ' . floor_of_day(1));
for my $layout (q{, 'idgen'}, '')
{
	my $plan = $node->safe_psql('postgres', 'EXPLAIN (COSTS OFF) SELECT count(*) FROM orders WHERE id >= idgen.id_floor('
		  . day(1) . "$layout) AND id < idgen.id_floor(" . day(2) . "$layout)");
	my %scanned = map { $_ => 1 } grep { !/_pkey$/ } ($plan =~ /\bon (orders_\w+)/g);
	is(join(',', sort keys %scanned), $tomorrow_part,
		'a day of IDs scans only that day\'s partition ('
		  . ($layout ? 'named layout' : "server's layout") . ')')
	  or diag($plan);
	is($node->safe_psql('postgres', 'SELECT count(*) FROM orders WHERE id >= idgen.id_floor('
			  . day(1) . "$layout) AND id < idgen.id_floor(" . day(2) . "$layout)"),
		$node->safe_psql('postgres', "SELECT count(*) FROM $tomorrow_part"),
		'and finds the rows of that partition');
}

$node->stop;
done_testing();
