# 066_spin_bounded.pl
#	Every wait for the clock is bounded (issue 22, point 4), and a server
#	with fsync = off says that the high-water mark is not durable (point 6).
#
# A layout with a 4-bit sequence (16 IDs per millisecond) and
# idgen.max_lead = 0: at full speed nearly every call that used up its tick
# waits on the CPU for the next one.  The clock (test/fakeclock.c) steps back one
# hour while a long query and two background sessions draw IDs.  The calls
# then fail with the clock error (58000), the long query's backend is idle
# afterwards (not spinning), and no ID was returned twice.  Outcomes only,
# never how long anything took.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use IPC::Run;
use IdgenTest;

my $node = idgen_node(
	'spin',
	faketime => 1,
	conf => "idgen.layout = 'ts=41,node=10,seq=4,unit=1ms,epoch=2024-01-01'\n"
	  . "idgen.max_lead = 0\n"
	  . "idgen.clock_wait_timeout = '1s'\n");
start_node($node);
$node->safe_psql('postgres',
	'CREATE EXTENSION idgen; CREATE TABLE idgen_test_stop (stop boolean);');
wait_ready($node);

# Point 6: the test framework runs servers with fsync = off; the idgen
# worker says at start that the high-water mark is not durable
is($node->safe_psql('postgres', 'SHOW fsync'), 'off', 'the server runs with fsync = off');
ok( $node->poll_query_until(
		'postgres', q{SELECT count(*) > 0 FROM pg_stat_activity WHERE backend_type = 'idgen worker'}),
	'the idgen worker runs');
like(
	slurp_file($node->logfile),
	qr/WARNING:  idgen's snowflake high-water mark is not durable because fsync is off/,
	'fsync = off: the log says the high-water mark is not durable');

# One value of idgen.snowflake_status()
sub status
{
	my ($col) = @_;

	return $node->safe_psql('postgres',
		"SELECT $col FROM idgen.snowflake_status()");
}

my @fg = @{ draw_ids($node, 2000) };
is(first_disorder(\@fg), -1, 'before the step: IDs increase');

# Background load: two sessions at full speed
my @drawers = map {
	start_drawer(
		$node,
		name => "session$_",
		sql => 'SELECT idgen.snowflake_nextval() FROM generate_series(1, 500);',
		batches => 3000)
} 1 .. 2;
cmp_ok(wait_drawn($_, 0), '>', 0, "$_->{name} draws IDs before the step") for @drawers;

# Several sessions at full speed without any step: no clock step counted
# (a call that read the clock before another and was slower to note it is
# not a step)
is(status('clock_back_events'), '0',
	'several sessions, no step of the clock: clock_back_events is 0');

# A long query drawing IDs: far more than it can draw before the step
my $tag = 'spin' . int(rand(1_000_000_000));
my ($out, $err) = ('', '');
my $script = $PostgreSQL::Test::Utils::tmp_check . '/spin_long.sql';
open my $fh, '>', $script or die "could not write $script: $!";
print $fh "SELECT pg_backend_pid();\n";
print $fh "/* $tag */ SELECT count(idgen.snowflake_nextval()) FROM generate_series(1, 100000000);\n";
print $fh "\\echo DONE\n";
# Stay connected, idle, until the test has looked at the backend
print $fh "\\! sleep 600\n";
close $fh;
my $h = IPC::Run::start(
	[
		'psql', '-XAtq', '-v', 'VERBOSITY=verbose', '-d',
		$node->connstr('postgres'), '-f', $script
	],
	'<', \undef, '>', \$out, '2>', \$err);

# While it runs, a backend drawing IDs reports a wait event (the wait for
# the next tick, on the CPU).  Sampled many times per query, each sample
# with a fresh view of pg_stat_activity, until seen.
$node->safe_psql(
	'postgres', q{
CREATE FUNCTION seen_tick_wait(tag text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1..5000 LOOP
    PERFORM pg_stat_clear_snapshot();
    IF EXISTS (SELECT FROM pg_stat_activity
               WHERE state = 'active' AND wait_event_type = 'Extension'
                 AND query LIKE '%' || tag || '%'
                 AND query NOT LIKE '%seen_tick_wait%') THEN
      RETURN true;
    END IF;
  END LOOP;
  RETURN false;
END $$});
ok($node->poll_query_until('postgres', "SELECT seen_tick_wait('$tag')"),
	'a backend waiting for the next tick reports a wait event');

# Step back one hour while the long query draws
set_clock($node, '-1h');

# The long query fails with the clock error and its backend is idle
# (waited for: the test's own timeout is the only bound)
my $t = IPC::Run::timer($PostgreSQL::Test::Utils::timeout_default);
$t->start;
while ($out !~ /DONE/ && $t->check)
{
	$h->pump_nb;
	usleep(50_000);
}
like($out, qr/DONE/, 'the long query ended while the clock is one hour back');
like($err, clock_error_re(), 'the long query failed with the clock error (58000)');
my ($pid) = $out =~ /^(\d+)$/m;
ok( $node->poll_query_until(
		'postgres', "SELECT state FROM pg_stat_activity WHERE pid = $pid", 'idle'),
	'the backend of the failed query is idle, not spinning');
is( $node->safe_psql(
		'postgres', "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%$tag%' AND query NOT LIKE '%pg_stat_activity%' AND state = 'active'"),
	'0',
	'no backend still runs the failed query');
$h->kill_kill;
$h->finish;

cmp_ok(status('clock_back_events'), '>', 0, 'the generator saw the clock step back');

# While the clock is an hour back, every call fails with the clock error
my ($ret, $o, $e) = try_sql($node, 'SELECT idgen.snowflake_nextval()');
like($e, clock_error_re(), 'clock one hour back: a new call fails with 58000');

# The clock returns; the sessions draw again, and stop
set_clock($node, '+0');
my @after = @{ draw_ids($node, 2000) };
is(first_disorder(\@after), -1, 'after the clock returned: IDs increase');
cmp_ok($after[0], '>', $fg[-1], 'after the clock returned: IDs above those before');
# (the sessions may have used up their batches on the clock error already)
stop_drawers($node);

my @all = (\@fg, \@after);
my $clock_errors = 0;
for my $d (@drawers)
{
	my ($ids, $derr, $end) = finish_drawer($d);
	my @errors = grep { /ERROR/ } split /\n/, $derr;
	my @unexpected = grep { $_ !~ clock_error_re() } @errors;

	$clock_errors += @errors - @unexpected;
	is(first_disorder($ids), -1, "$d->{name} received increasing IDs");
	is(scalar @unexpected, 0, "$d->{name} saw no error but the clock error")
	  or diag join("\n", @unexpected[0 .. ($#unexpected > 4 ? 4 : $#unexpected)]);
	push @all, $ids;
}
note "background sessions: $clock_errors clock errors";
my @dups = duplicates(@all);
is(scalar @dups, 0, 'no ID returned twice across the step')
  or diag "duplicates: @dups[0 .. ($#dups > 9 ? 9 : $#dups)]";

# With fsync on, no such warning
my $log_offset = -s $node->logfile;
$node->append_conf('postgresql.conf', "fsync = on\n");
$node->stop;
start_node($node);
wait_ready($node);
is($node->safe_psql('postgres', 'SHOW fsync'), 'on', 'restarted with fsync = on');
unlike(
	slurp_file($node->logfile, $log_offset),
	qr/high-water mark is not durable/,
	'fsync = on: no warning about durability');

$node->stop;
no_unexpected_errors($node);
done_testing();
