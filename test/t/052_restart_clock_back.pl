# 052_restart_clock_back.pl
#	Restarts with the clock set back (issue 5, test c).
#
# The server is stopped (cleanly or by SIGKILL), its clock set back and the
# server started again.  Without the durable reservation the generator would
# start from the wall clock and repeat IDs; with it, it starts above every ID
# issued before.  Set back further than idgen.max_lead, calls get the
# documented clock error until the clock catches up or max_lead is raised.
#
# The clock offsets are large enough that how long a restart takes on a
# busy machine cannot change what the test sees; where it could (7 s back,
# just past max_lead), the test asserts what is allowed either way: a call
# fails with the clock error or returns an ID above every earlier one.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);
use IdgenTest;

my $node = idgen_node('restart', faketime => 1);
start_node($node);
$node->safe_psql(
	'postgres', q{
	CREATE EXTENSION idgen;
	CREATE TABLE ids (id bigint PRIMARY KEY DEFAULT idgen.snowflake_nextval(),
		src text NOT NULL);
});
wait_ready($node);

# Every ID received so far, and the largest
my @all;
my $max = 0;

# Note IDs as issued; returns them
sub issued
{
	my ($ids) = @_;

	push @all, @$ids;
	$max = max_of($max, @$ids);
	return $ids;
}

# Draw IDs with snowflake_nextval and through a DEFAULT; both must be
# greater than every ID issued before
sub draw_checked
{
	my ($label) = @_;
	my $before = $max;
	my $ids = draw_ids($node, 2000);
	my $rows = [ map { $_ + 0 } split /\n/,
		  $node->safe_psql('postgres',
			"INSERT INTO ids (src) SELECT '$label' FROM generate_series(1, 500) RETURNING id"
		  ) ];

	is(first_disorder($ids), -1, "$label: IDs increase");
	cmp_ok(min_of(@$ids, @$rows), '>', $before,
		"$label: every ID is greater than every ID issued before");
	issued($ids);
	issued($rows);
	return;
}

# Does a call fail with the clock error?
sub clock_error_now
{
	my ($label) = @_;
	my ($ret, $out, $err) = try_sql($node, 'SELECT idgen.snowflake_nextval()');

	isnt($ret, 0, "$label: snowflake_nextval fails");
	like($err, clock_error_re(), "$label: with the clock error");
	($ret, $out, $err) =
	  try_sql($node, "INSERT INTO ids (src) VALUES ('$label')");
	like($err, clock_error_re(), "$label: a DEFAULT fails the same way");
	return;
}

# Set the reload-able idgen.max_lead and wait for it
sub set_max_lead
{
	my ($value) = @_;
	my $sql = defined $value
	  ? "ALTER SYSTEM SET idgen.max_lead = '$value'"
	  : 'ALTER SYSTEM RESET idgen.max_lead';

	$node->safe_psql('postgres', "$sql; SELECT pg_reload_conf();");
	$value //= '5s';
	$node->poll_query_until('postgres',
		"SELECT current_setting('idgen.max_lead') = '$value'")
	  or die "idgen.max_lead did not become $value";
	return;
}

draw_checked('before any restart');

# Clean stop, clock 10 minutes back, start: the clock error, not an old ID
$node->stop;
set_clock($node, '-10m');
start_node($node);
wait_ready($node);
is( $node->safe_psql('postgres',
		"SELECT clock_timestamp() < idgen.id_timestamp($max)"),
	't',
	'after the restart the wall clock is below the last ID issued');
is( $node->safe_psql('postgres',
		"SELECT last_tick >= idgen.id_timestamp($max) FROM idgen.snowflake_status()"),
	't',
	'after the restart the generator starts above the reservation, at or above the last ID issued');
clock_error_now('clock 10 minutes back after a restart');
is( $node->safe_psql(
		'postgres', "SELECT count(*) FROM ids WHERE src LIKE 'clock%'"),
	'0',
	'no row was inserted while the clock was behind');

# Raising idgen.max_lead lets IDs flow, above every earlier one
set_max_lead('20min');
draw_checked('clock 10 minutes back, idgen.max_lead 20min');

# Default max_lead again, restart with the clock still back: the error
# again, until the clock is set forward
set_max_lead(undef);
$node->stop;
start_node($node);
wait_ready($node);
clock_error_now('second restart, clock still 10 minutes back');
set_clock($node, '+0');
draw_checked('clock set forward again');

# Crash, clock 7 s back (past max_lead), start: calls fail with the clock
# error until the clock has caught up (how many do depends on how long the
# restart took, so it is not counted), then the first ID is greater than
# all before
crash_node($node);
set_clock($node, '-7');
start_node($node);
wait_ready($node);
my ($errors, $other, $first, $behind) = wait_for_clock($node, 60);
note "crash, clock 7 s back: $errors calls failed before IDs flowed";
is($other, 0, 'crash, clock 7 s back: every failure was the clock error');
is(scalar(grep { $_ <= 5000 } @$behind),
	0, 'crash, clock 7 s back: every clock error was past idgen.max_lead');
ok(defined $first, 'crash, clock 7 s back: IDs flow once the clock caught up');
cmp_ok($first // 0, '>', $max,
	'the first ID after waiting is greater than all before');
issued([$first]) if defined $first;
draw_checked('after waiting for the clock');

# Crash, clock 30 s back, within idgen.max_lead (1 min here): IDs at once,
# from the logical clock -- the window in which other generators repeat IDs
set_clock($node, '+0');
set_max_lead('1min');
draw_checked('clock at the real time');
crash_node($node, all => 1);
set_clock($node, '-30');
start_node($node);
wait_ready($node);
is( $node->safe_psql('postgres',
		"SELECT clock_timestamp() < idgen.id_timestamp($max)"),
	't',
	'crash, clock 30 s back: the wall clock is below the last ID issued');
draw_checked('crash, clock 30 s back');

my @dups = duplicates(\@all);
is(scalar @dups, 0, 'no ID issued twice over all the restarts');
note scalar(@all) . " IDs checked";

$node->stop;
no_unexpected_errors($node);
done_testing();
