# 113_async_failover.pl
#	Segment IDs through hard failovers under asynchronous replication
#	(issue 38, points 2 and 3).
#
# A primary and a streaming standby made by pg_basebackup, asynchronous (no
# synchronous_standby_names), promoted with plain pg_ctl promote.  Tag
# "orders" is held at step 10 (idgen.segment_step_grow_after = 0, a chain
# of one), so that a client drawing at full speed makes the worker allocate
# many times a second, and allocations fall inside the WAL a failover
# loses.  One client draws segment IDs, another snowflake IDs; each writes
# down every ID it receives.
#
# Three hard failovers, each: the primary's walsender stopped (SIGSTOP) for
# 1 s, and until the primary's snowflake IDs are a second past the last
# reservation the standby replayed, so that what the primary writes from
# then on never reaches the standby, then kill -9 of the primary's
# postmaster and every child of it; the standby, its clock 30 s behind the
# primary's (test/fakeclock.c), is promoted; once it has issued its first
# IDs its clock is set right again (so that its generator, which started
# ahead of its clock, runs with the clock and the next failover's IDs pass
# the standby's reservation within seconds), a new standby is made from it
# with pg_basebackup, 30 s behind, and the clients go on drawing from it.
#
# Asserted: no segment ID received twice across the failovers, the first
# segment IDs of each new primary above every one received before it, no
# call failed with an error of idgen.  Before point 2 the promoted standby
# allocated again the ranges the old primary had handed out during the
# lost WAL: the same scenario with idgen.segment_standby_wait = 0, one
# failover, is asserted to repeat segment IDs (a run by hand of all three
# failovers without the wait repeated 28,401 of 78,533).
# With idgen.node_timeline_bits = 2 the same single failover without the
# wait repeats nothing: each timeline allocates only IDs congruent to it
# modulo 4, so the lost allocations of timeline 1 and the new primary's
# are disjoint.
# IDGEN_T113_STANDBY_WAIT=0 runs the main scenario without the wait too
# (it is then expected to fail).
# The snowflake client's IDs are under idgen.node_timeline_bits = 2 (issue
# 38, point 1): each promotion issues under a node id of its own, so none
# is received twice either (timelines 1 to 4: no low bits come round).
#
# Then idgen.segment_standby_wait's bound: with the standby's walsender
# stopped and the bound at 300 ms, draws succeed, a WARNING names the
# standby and segment_status.standby_timeouts counts the allocations.
# And clock steps while a call waits for such an allocation: an hour
# forward, the call gets its IDs once the standby has flushed (no error, no
# WARNING, nothing handed out early); an hour back, after the bound with
# the WARNING, not an hour later.
#
# PostgreSQL 15 lane only (IDGEN_NEIGHBOURS_MAJOR), as t/110 to t/112.
# Outcomes only: no duration is asserted.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use IdgenTest;

neighbours_version();

my $wait = $ENV{IDGEN_T113_STANDBY_WAIT} // '10s';

# A new asynchronous standby of $p, its clock $behind s behind, streaming
sub make_standby
{
	my ($p, $name, $behind) = @_;
	my $s = idgen_standby($p, $name, faketime => 1);
	set_clock($s, "-$behind");
	start_node($s);
	$p->poll_query_until('postgres', q{
		SELECT count(*) = 1 FROM pg_stat_replication WHERE state = 'streaming'})
	  or die "standby $name does not stream";
	$p->wait_for_catchup($s);
	return $s;
}

# The clients: segment and snowflake IDs, 10 a batch, at full speed
sub start_clients
{
	my ($n) = @_;
	return (
		start_drawer($n, name => 'segment',
			sql => q{SELECT idgen.segment_nextval('orders') FROM generate_series(1, 10);}),
		start_drawer($n, name => 'snowflake'));
}

# What a client received, into $r (segment or snowflake IDs, and the
# errors of idgen of the segment client); returns the IDs
sub collect
{
	my ($r, $d, $label) = @_;
	my ($ids, $err) = finish_drawer($d);
	my $idgen = () = $err =~ /ERROR:  (?:58000|55000|25006)/g;
	note "$label: client $d->{name} received " . scalar(@$ids) . ' IDs'
	  . ($idgen ? ", $idgen errors of idgen" : '');
	if ($d->{name} eq 'segment')
	{
		diag "$label: client $d->{name}: $err" if $idgen;
		$r->{errors} += $idgen;
		push @{ $r->{seg} }, $ids;
	}
	else { push @{ $r->{snow} }, $ids; }
	return $ids;
}

# The scenario: nodes named $prefix..., idgen.segment_standby_wait = $w,
# $rounds hard failovers.  Returns the IDs received ({seg}, {snow}: lists
# of lists), {errors}, {above} (failovers whose new primary's first
# segment ID was above every one received before), and the last primary
# and its standby, running
sub failovers
{
	my ($prefix, $w, $rounds, $tlbits) = @_;
	my %r = (seg => [], snow => [], errors => 0, above => 0);
	note "$prefix: idgen.segment_standby_wait = $w";
	my $primary = idgen_node("${prefix}0", allows_streaming => 1, faketime => 1, conf => qq{
idgen.segment_step_grow_after = 0
idgen.segment_chain_max = 1
idgen.segment_standby_wait = '$w'
idgen.max_lead = '10min'
idgen.node_timeline_bits = $tlbits
});
	start_node($primary);
	$primary->safe_psql('postgres', q{
		CREATE EXTENSION idgen;
		SELECT idgen.segment_create('orders', 1, 10);
		CREATE TABLE idgen_test_stop (stop boolean);
	});
	wait_ready($primary);

	my $standby = make_standby($primary, "${prefix}1", 30);
	for my $round (1 .. $rounds)
	{
		my $label = "$prefix: failover $round";
		my @clients = start_clients($primary);
		for my $d (@clients)
		{
			wait_drawn($d, 200) > 200 or die "$label: client $d->{name} draws nothing";
		}

		# The hard case: the walsender stopped, then the primary killed
		my @walsnd = split /\n/,
		  $primary->safe_psql('postgres', 'SELECT pid FROM pg_stat_replication');
		kill 'STOP', @walsnd;
		usleep(1_000_000);
		my $replayed = $standby->safe_psql('postgres',
			'SELECT durable_until FROM idgen.snowflake_status()');
		# and until the snowflake IDs are a second past the last
		# reservation the standby replayed (it runs a second ahead): those
		# the promoted standby could issue again under the same node id
		$primary->poll_query_until('postgres',
			"SELECT idgen.id_timestamp(idgen.snowflake_nextval()) > '$replayed'::timestamptz + interval '1 s'")
		  or die "$label: no snowflake ID past the standby's reservation";
		note "$label: WAL held back: the primary is at "
		  . $primary->safe_psql('postgres', 'SELECT pg_current_wal_lsn()')
		  . ', the standby has received '
		  . $standby->safe_psql('postgres', 'SELECT pg_last_wal_receive_lsn()');
		crash_node($primary, all => 1);
		collect(\%r, $_, $label) for @clients;
		my $before = max_of(map { @$_ } @{ $r{seg} });

		# Promotion, plain
		$standby->promote;
		$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
		  or die "$label: the standby was not promoted";
		wait_ready($standby);
		my $first = $standby->safe_psql('postgres', q{SELECT idgen.segment_nextval('orders')});
		push @{ $r{seg} }, [$first];
		note "$label: the new primary's first segment ID is $first, the largest received before $before";
		$r{above}++ if $first > $before;
		set_clock($standby, '+0');
		$primary = $standby;
		$standby = make_standby($primary, $prefix . ($round + 1), 30);
	}

	# The last primary: draw a little, then stop
	my @clients = start_clients($primary);
	wait_drawn($_, 200) for @clients;
	stop_drawers($primary);
	collect(\%r, $_, "$prefix: after the failovers") for @clients;
	$r{primary} = $primary;
	$r{standby} = $standby;
	return \%r;
}

# Three hard failovers, with the wait
my $r = failovers('n', $wait, 3, 2);
is($r->{errors}, 0, 'no segment call failed with an error of idgen');
is($r->{above}, 3, 'after each failover, the new primary\'s first segment ID is above every one received before');
my $total = 0;
$total += scalar @$_ for @{ $r->{seg} };
my @dups = duplicates(@{ $r->{seg} });
note "segment IDs received: $total, received twice: " . scalar(@dups);
is(scalar @dups, 0, 'no segment ID received twice across three hard failovers')
  or diag scalar(@dups) . " of $total received twice, some: @dups[0 .. ($#dups > 9 ? 9 : $#dups)]";
my @sdups = duplicates(@{ $r->{snow} });
my $stotal = 0;
$stotal += scalar @$_ for @{ $r->{snow} };
note "snowflake IDs received: $stotal, received twice: " . scalar(@sdups);
is(scalar @sdups, 0,
	'no snowflake ID received twice across three hard failovers (node ids follow the timeline)');
my ($primary, $standby) = ($r->{primary}, $r->{standby});

# The same without the wait (what idgen did before): one failover repeats
# the segment IDs of the allocations the standby never received
{
	my $z = failovers('z', '0', 1, 0);
	my @zdups = duplicates(@{ $z->{seg} });
	note 'without the wait: ' . scalar(@zdups) . ' segment IDs received twice';
	cmp_ok(scalar @zdups, '>', 0,
		'without the wait (idgen.segment_standby_wait = 0) the same failover repeats segment IDs');
	$z->{standby}->stop;
	$z->{primary}->stop;
}
# and with node ids that follow the timeline, the timelines' allocations
# are disjoint (IDs congruent to the timeline modulo 4): the same failover
# without the wait repeats none
{
	my $y = failovers('y', '0', 1, 2);
	my @ydups = duplicates(@{ $y->{seg} });
	my $ytotal = 0;
	$ytotal += scalar @$_ for @{ $y->{seg} };
	note "without the wait, timeline bits 2: $ytotal segment IDs received, " . scalar(@ydups) . ' twice';
	is(scalar @ydups, 0,
		'without the wait but with idgen.node_timeline_bits = 2, the same failover repeats no segment ID');
	$y->{standby}->stop;
	$y->{primary}->stop;
}

# The bound: a standby that does not answer is waited for 300 ms per
# allocation, named in a WARNING and counted, and the IDs come all the same
$primary->safe_psql('postgres',
	q{ALTER SYSTEM SET idgen.segment_standby_wait = '300ms'; SELECT pg_reload_conf()});
$primary->poll_query_until('postgres', 'SHOW idgen.segment_standby_wait', '300ms')
  or die 'idgen.segment_standby_wait not reloaded';
my $log_pos = -s $primary->logfile;
my @walsnd = split /\n/,
  $primary->safe_psql('postgres', 'SELECT pid FROM pg_stat_replication');
kill 'STOP', @walsnd;
my ($rc, $out, $err) = try_sql($primary,
	q{SELECT count(DISTINCT n) FROM (SELECT idgen.segment_nextval('orders') AS n FROM generate_series(1, 30)) s});
kill 'CONT', @walsnd;
is($rc . '|' . $out, '0|30', 'with the standby stopped, draws get their IDs after the bound')
  or diag $err;
cmp_ok($primary->safe_psql('postgres',
	q{SELECT standby_timeouts FROM idgen.segment_status WHERE biz_tag = 'orders'}),
	'>', 0, 'segment_status.standby_timeouts counts the allocations that did not wait');
my $log = substr(slurp_file($primary->logfile), $log_pos);
like($log, qr/WARNING:  idgen: segment tag "orders": 1 streaming standby\(s\) did not flush its allocation within 300 ms: "n4" \(pid \d+/,
	'a WARNING names the standby');

# Clock steps while a call waits for an allocation the stopped standby has
# not flushed: the waits are measured on the monotonic clock.  The client
# is waiting when the primary's clock moves.  $bound:
# idgen.segment_standby_wait; $step: the move; $hold: seconds the walsender
# stays stopped after the move (undef: until the client has its IDs)
sub clock_step
{
	my ($bound, $step, $hold) = @_;
	$primary->safe_psql('postgres',
		"ALTER SYSTEM SET idgen.segment_standby_wait = '$bound'; SELECT pg_reload_conf()");
	$primary->poll_query_until('postgres', 'SHOW idgen.segment_standby_wait', $bound)
	  or die 'idgen.segment_standby_wait not reloaded';
	# The standby caught up since its walsender was let go, so that it is
	# waited for again (a standby that missed the bound is excused until
	# then: t/117)
	$primary->wait_for_catchup($standby, 'flush');
	my $timeouts = $primary->safe_psql('postgres',
		q{SELECT standby_timeouts FROM idgen.segment_status WHERE biz_tag = 'orders'});
	my $pos = -s $primary->logfile;
	my @ws = split /\n/,
	  $primary->safe_psql('postgres', 'SELECT pid FROM pg_stat_replication');
	kill 'STOP', @ws;
	my $d = start_drawer($primary, name => "step$step", batches => 1,
		sql => q{SELECT idgen.segment_nextval('orders') FROM generate_series(1, 30);});
	$primary->poll_query_until('postgres', q{
		SELECT count(*) = 1 FROM pg_stat_activity
		 WHERE query LIKE '%segment_nextval%' AND wait_event_type = 'Extension'
		   AND pid <> pg_backend_pid()})
	  or die 'the client does not wait';
	set_clock($primary, $step);
	if (defined $hold)
	{
		usleep($hold * 1_000_000);
		kill 'CONT', @ws;
	}
	my ($ids, $err) = finish_drawer($d);
	kill 'CONT', @ws unless defined $hold;
	set_clock($primary, '+0');
	return ($ids, $err, $timeouts, substr(slurp_file($primary->logfile), $pos));
}

# Forward an hour, the bound an hour, the walsender held 1.5 s more: the
# call waits on, and nothing is handed out before the standby has flushed
# (no WARNING, no timeout counted).  (Measured on the wall clock, the call
# failed with 55000 at once, and the worker handed the allocation out.)
my ($ids, $step_err, $timeouts, $step_log) = clock_step('1h', '+3600', 1.5);
is(scalar(@$ids), 30, 'clock an hour forward: the waiting call gets its IDs, no error')
  or diag $step_err;
is($primary->safe_psql('postgres',
	q{SELECT standby_timeouts FROM idgen.segment_status WHERE biz_tag = 'orders'}),
	$timeouts, 'and no allocation was handed out before the standby flushed it');
unlike($step_log, qr/did not flush its allocation/, 'no WARNING of a late standby');

# Back an hour, the bound 2 s, the walsender stopped until the call has its
# IDs: each allocation is handed out after the bound, not an hour later,
# with the WARNING.  (On the wall clock, the allocation pending at the move
# waited an hour.)
($ids, $step_err, $timeouts, $step_log) = clock_step('2s', '-3600');
is(scalar(@$ids), 30, 'clock an hour back: the waiting call gets its IDs after the bound')
  or diag $step_err;
like($step_log, qr/did not flush its allocation within 2000 ms/,
	'the WARNING names the bound');

$standby->stop;
$primary->stop;
done_testing();
