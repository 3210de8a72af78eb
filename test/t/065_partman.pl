# pg_partman (Debian's postgresql-N-partman) partitions a table by snowflake
# ID into days with the recipe of docs/partitions.md, "pg_partman": the
# page's own SQL block for the installed major version (4.x on PostgreSQL
# 15, 5.x on 17 and 18; issue 29, point 4), read from the page and run as
# it is shown: p_interval := id_interval('1 day'), p_start_partition :=
# id_floor(today).
# Asserts: the partitions' bounds are id_floor of consecutive midnights from
# today, at least p_premake days ahead; rows inserted now (snowflake_nextval
# defaults) land in the partition of their own day, none in the default
# partition; a row made for tomorrow lands in tomorrow's; run_maintenance
# premakes p_premake days ahead of the newest row, and a row for the last
# of those days lands there; a one-day window of IDs scans one partition.
# On 4.x also: the 5.x block fails there with the error the page names.
# Skipped where pg_partman is missing (PostgreSQL 19: no Debian package).
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
my ($major) = $version =~ /^(\d+)\./ or die "pg_partman version \"$version\"";
note "pg_partman $version";

# The page's blocks, one per major version of pg_partman
my $doc = PostgreSQL::Test::Utils::slurp_file(repo_file('docs/partitions.md'));
my %recipe;
while ($doc =~
	/^<!-- example: not run \(needs pg_partman (\d+)\.x: test\/t\/065_partman\.pl runs it\) -->\n```sql\n(.*?)^```$/msg)
{
	$recipe{$1} = $2;
}
ok($recipe{4} && $recipe{5}, 'docs/partitions.md has a pg_partman 4.x and a 5.x block');
my $recipe = $recipe{$major}
  or BAIL_OUT("docs/partitions.md has no block for pg_partman $major.x");
my ($premake) = $recipe =~ /p_premake := (\d+)/ or die "the block sets no p_premake";
note "recipe:\n$recipe";

$node->safe_psql('postgres', 'CREATE EXTENSION idgen');
wait_ready($node);

if ($major == 4)
{
	# What the page says of 4.x and the 5.x block (rolled back)
	my ($rc, $out, $err) =
	  $node->psql('postgres', "BEGIN;\n$recipe{5}\nROLLBACK;", on_error_stop => 1);
	like($err, qr/range is not a valid partitioning type for pg_partman/,
		"pg_partman 4.x refuses the 5.x block's p_type := 'range' as the page says");
}

# Today (UTC), fixed before the block; a run across midnight is skipped
my $utc_day = q{SELECT date_trunc('day', now(), 'UTC') AT TIME ZONE 'UTC'};
my $today = $node->safe_psql('postgres', $utc_day);
note "today: $today";
my ($rc, $out, $err) = $node->psql('postgres', $recipe, on_error_stop => 1);
is($rc, 0, "the page's pg_partman $major.x block runs") or diag($err);
if ($node->safe_psql('postgres', $utc_day) ne $today)
{
	note 'midnight UTC passed while the block ran: nothing more to check';
	done_testing();
	exit 0;
}

$node->safe_psql('postgres', q{
	-- Each partition with its bounds (NULL for the default partition)
	CREATE VIEW parts AS
		SELECT c.relname, b[1]::bigint AS lo, b[2]::bigint AS hi
		FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		LEFT JOIN regexp_match(pg_get_expr(c.relpartbound, c.oid),
		                  'FROM \(''?(\d+)''?\) TO \(''?(\d+)''?\)') b ON true
		WHERE i.inhparent = 'public.bookings'::regclass;
});

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
# The day partitions' first IDs, and those of the days from today to $last
sub bounds
{
	return $node->safe_psql('postgres',
		q{SELECT string_agg(lo::text, ',' ORDER BY lo) FROM parts WHERE lo IS NOT NULL});
}
sub days_from_today
{
	my ($last) = @_;
	return join(',', map { floor_of_day($_) } 0 .. $last);
}
# The partition a row is in (its first ID; NULL: the default partition)
sub partition_of
{
	my ($customer) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT p.lo FROM bookings o JOIN parts p ON p.relname = o.tableoid::regclass::text
		WHERE customer = '$customer'});
}

my $made = $node->safe_psql('postgres', 'SELECT count(*) FROM parts WHERE lo IS NOT NULL');
cmp_ok($made, '>=', $premake + 1,
	"create_parent made today and at least $premake (p_premake) days ahead: $made days");
is(bounds(), days_from_today($made - 1),
	'the partitions are consecutive days from today, each from id_floor of its midnight');
my $width = $node->safe_psql('postgres', q{SELECT idgen.id_interval('1 day')});
is($width, '362387865600000', "a day is 86,400,000 ms << 22 = $width IDs");
is($node->safe_psql('postgres',
		q{SELECT count(*) FROM parts WHERE lo IS NOT NULL AND hi - lo <> idgen.id_interval('1 day')}),
	'0', 'every partition is exactly one day of IDs');
is($node->safe_psql('postgres', q{SELECT count(*) FROM parts WHERE lo IS NULL}),
	'1', 'and a default partition');
is($node->safe_psql('postgres',
		q{SELECT count(*) FROM parts WHERE lo IS NOT NULL AND relname <> 'bookings_p' || lo}),
	'0', 'each day partition is named by its first ID (bookings_p<first ID>), as the page says');

# Rows inserted now, by the column default
$node->safe_psql('postgres', q{
	INSERT INTO bookings (customer) SELECT 'now ' || g FROM generate_series(1, 1000) g;
});
my $placed = q{
	SELECT count(*) FILTER (WHERE p.lo = idgen.id_floor(date_trunc('day', idgen.id_timestamp(o.id), 'UTC'))),
	       count(*) FILTER (WHERE p.lo IS NULL),
	       count(*)
	FROM bookings o JOIN parts p ON p.relname = o.tableoid::regclass::text};
is($node->safe_psql('postgres', $placed), '1000|0|1000',
	"1,000 rows inserted now are each in their own day's partition, none in the default");
my $in_today = $node->safe_psql('postgres', q{
	SELECT count(*) FROM bookings o JOIN parts p ON p.relname = o.tableoid::regclass::text
	WHERE p.lo = } . floor_of_day(0));
diag("$in_today of 1,000 rows in today's partition (the rest: made after midnight UTC)")
  if $in_today != 1000;
cmp_ok($in_today + 0, '>', 0, "today's partition holds the rows made today");

# A row made for tomorrow noon
$node->safe_psql('postgres',
	'INSERT INTO bookings VALUES (idgen.id_make(' . day(1) . q{ + interval '12 hours', 3, 0), 'tomorrow')});
is(partition_of('tomorrow'), floor_of_day(1), "a row made for tomorrow is in tomorrow's partition");

# run_maintenance premakes p_premake days ahead of the newest row: a row
# made in the last premade day
my $last = $made - 1;
$node->safe_psql('postgres',
	'INSERT INTO bookings VALUES (idgen.id_make(' . day($last) . q{ + interval '6 hours', 3, 0), 'last day')});
is(partition_of('last day'), floor_of_day($last),
	"a row made in the last premade day ($last days ahead) is in its partition");
$node->safe_psql('postgres', q{SELECT partman.run_maintenance('public.bookings')});
my $far = $last + $premake;
is(bounds(), days_from_today($far),
	"run_maintenance made the days up to $premake (p_premake) ahead of that newest row");
$node->safe_psql('postgres',
	'INSERT INTO bookings VALUES (idgen.id_make(' . day($far) . q{ + interval '23 hours', 3, 0), 'far')});
is(partition_of('far'), floor_of_day($far),
	"a row made $far days ahead is in the partition run_maintenance made");
is($node->safe_psql('postgres', $placed), '1003|0|1003',
	"every row is in its own day's partition, none in the default");

# A one-day window of IDs scans one partition: with a named layout
# (IMMUTABLE, pruned while planning) and with the server's (STABLE, pruned
# when the query starts)
my $tomorrow_part = $node->safe_psql('postgres',
	'SELECT relname FROM parts WHERE lo = ' . floor_of_day(1));
for my $layout (q{, 'idgen'}, '')
{
	my $window = 'FROM bookings WHERE id >= idgen.id_floor(' . day(1)
	  . "$layout) AND id < idgen.id_floor(" . day(2) . "$layout)";
	my $plan = $node->safe_psql('postgres', "EXPLAIN (COSTS OFF) SELECT count(*) $window");
	my %scanned = map { $_ => 1 } grep { !/_pkey$/ } ($plan =~ /\bon (bookings_\w+)/g);
	is(join(',', sort keys %scanned), $tomorrow_part,
		'a day of IDs scans only that day\'s partition ('
		  . ($layout ? 'named layout' : "server's layout") . ')')
	  or diag($plan);
	is($node->safe_psql('postgres', "SELECT count(*) $window"),
		$node->safe_psql('postgres', "SELECT count(*) FROM $tomorrow_part"),
		'and finds the rows of that partition');
}

$node->stop;
done_testing();
