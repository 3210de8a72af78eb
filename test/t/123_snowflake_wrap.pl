# 123_snowflake_wrap.pl
#	Snowflake and segment IDs when the timeline's low bits come round:
#	with idgen.node_timeline_bits = 1, timeline 3 has the node id and the
#	segment residue of timeline 1, and timeline 4 those of timeline 2,
#	whose servers may have issued IDs in WAL the promoted server never
#	replayed.
#
# Three hard failovers in a chain p (timeline 1) -> a (2) -> b (3) -> c (4)
# (2^k + 1 with k = 1), each: the primary draws snowflake and segment IDs
# (layout sonyflake, 256 IDs per 10 ms tick; tag "orders" at step 10), its
# walsender is stopped (SIGSTOP) and it draws on until its snowflake IDs
# are 8 s (the first primary) or 1 s past the reservation its standby
# replayed, and segment IDs past the standby wait (1 s here), so that
# those IDs exist only in WAL the standby never receives; then kill -9 of
# every server process; the standby, its clock 90 s behind
# (test/fakeclock.c), is promoted.  Each new primary's generator, ahead of
# its clock, moves only as IDs are drawn, so the reservations of a and b
# do not reach past the first primary's lost IDs: b, on p's node id and
# residue, would hand them out again (a run by hand with the refusal taken
# out: 179,369 of 685,000 snowflake and 900 of 7,200 segment IDs received
# twice).
# Asserted, from every ID the test received:
#  - a (timeline 2, a node id of its own) issues at once;
#  - b and c, whose node ids are p's and a's, refuse snowflake IDs with
#    55000 and the hint (snowflake_resume), a WARNING in the log, and
#    segment IDs (55000); b still after a restart;
#  - after snowflake_resume with the largest snowflake ID received, and
#    segment_resume once the tag is above the largest segment ID received,
#    they issue, and a restart does not refuse again;
#  - no snowflake ID and no segment ID received twice across the chain.
# Outcomes only: no duration is asserted.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use IdgenTest;

my $conf = "idgen.node_timeline_bits = 1\nidgen.max_lead = '10min'\n"
  . "idgen.layout = 'sonyflake'\n"
  . "idgen.segment_standby_wait = '1s'\nidgen.segment_step_grow_after = 0\n";
my $p = idgen_node('swrap_p', node_id => 5, allows_streaming => 1, conf => $conf);
start_node($p);
$p->safe_psql('postgres', q{
	CREATE EXTENSION idgen;
	SELECT idgen.segment_create('orders', 1, 10);
});
wait_ready($p);

my (@received, @seg_received);
sub draw
{
	my ($node, $n) = @_;
	my $ids = draw_ids($node, $n);
	push @received, $ids;
	return $ids;
}
sub draw_seg
{
	my ($node, $n) = @_;
	my $ids = [ map { $_ + 0 } split /\n/, $node->safe_psql('postgres',
		"SELECT idgen.segment_nextval('orders') FROM generate_series(1, $n)") ];
	push @seg_received, $ids;
	return $ids;
}

# A standby of $primary, its clock 90 s behind, caught up
sub make_standby
{
	my ($primary, $name) = @_;
	my $s = idgen_standby($primary, $name, faketime => 1);
	set_clock($s, '-90');
	start_node($s);
	$primary->wait_for_catchup($s);
	return $s;
}

my $refused = qr/ERROR:  55000: snowflake IDs are refused because this server was promoted onto timeline (\d+), whose low 1 bits an earlier timeline of its history had\n.*\n.*HINT:  Have a superuser run SELECT idgen.snowflake_resume\(N\)/;

my $primary = $p;
my $standby = make_standby($primary, 'swrap_1');
for my $round (1 .. 3)
{
	my $tli = $round + 1;
	draw($primary, 2000);
	draw_seg($primary, 200);

	# The hard case: the walsender stopped, IDs past the standby's
	# reservation, then every server process killed
	my @walsnd = split /\n/,
	  $primary->safe_psql('postgres', 'SELECT pid FROM pg_stat_replication');
	kill 'STOP', @walsnd;
	usleep(500_000);
	my $replayed = $standby->safe_psql('postgres',
		'SELECT durable_until FROM idgen.snowflake_status()');
	# allocations past the standby wait: handed out, the standby excused
	draw_seg($primary, $round == 1 ? 5000 : 500);
	my $past = $round == 1 ? 8 : 1;
	my $lost = 0;
	for (1 .. 100_000)
	{
		my $ids = draw($primary, 1000);
		$lost += 1000;
		last if $primary->safe_psql('postgres',
			"SELECT idgen.id_timestamp($ids->[-1]) > '$replayed'::timestamptz + interval '$past s'") eq 't';
	}
	note "failover $round: $lost IDs drawn past what the standby received";
	crash_node($primary, all => 1);

	$standby->promote;
	$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
	  or die "failover $round: the standby was not promoted";
	is($standby->safe_psql('postgres', q{SELECT ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int}),
		$tli, "failover $round: the new primary is on timeline $tli");

	if ($tli <= 2)
	{
		wait_ready($standby);
		is(scalar @{ draw($standby, 2000) }, 2000,
			"timeline $tli: snowflake IDs are issued at once");
		is(scalar @{ draw_seg($standby, 200) }, 200,
			"timeline $tli: segment IDs too");
	}
	else
	{
		my ($ret, $out, $err) = $standby->psql('postgres',
			'SELECT idgen.snowflake_nextval()',
			extra_params => [ '-v', 'VERBOSITY=verbose' ]);
		like($err, $refused, "timeline $tli: snowflake IDs are refused (55000), with the hint");
		like(slurp_file($standby->logfile),
			qr/WARNING:  idgen: snowflake IDs are refused: this server was promoted onto timeline $tli, whose low 1 bits \(idgen.node_timeline_bits\) timeline @{[$tli - 2]} of its history had/,
			"timeline $tli: a WARNING in the log names the two timelines");
		is($standby->safe_psql('postgres', 'SELECT restored FROM idgen.snowflake_refusal()'),
			't', "timeline $tli: snowflake_refusal() says so");
		($ret, $out, $err) = $standby->psql('postgres',
			q{SELECT idgen.segment_nextval('orders')},
			extra_params => [ '-v', 'VERBOSITY=verbose' ]);
		like($err, qr/ERROR:  55000: segment IDs are refused because this server was promoted onto timeline $tli/,
			"timeline $tli: segment IDs are refused (55000)");
		if ($tli == 3)
		{
			$standby->restart;
			($ret, $out, $err) = $standby->psql('postgres',
				'SELECT idgen.snowflake_nextval()',
				extra_params => [ '-v', 'VERBOSITY=verbose' ]);
			like($err, $refused, 'after a restart, still refused');
		}
		my $last = max_of(map { @$_ } @received);
		is($standby->safe_psql('postgres', "SELECT idgen.snowflake_resume($last)"),
			't', "timeline $tli: snowflake_resume with the largest ID received lifts it");
		# as many as p's lost IDs span in ticks (8 s of 10 ms ticks)
		my $ids = draw($standby, 200_000);
		cmp_ok(min_of(@$ids), '>', $last, "timeline $tli: then IDs are issued, above it");
		my $seg_last = max_of(map { @$_ } @seg_received);
		# raised, unless what it replayed is above already (max_id never
		# moves back)
		$standby->safe_psql('postgres', qq{
			SELECT idgen.segment_alter('orders', max_id => $seg_last)
			FROM idgen.segment_alloc
			WHERE biz_tag = 'orders' AND max_id < $seg_last});
		is($standby->safe_psql('postgres', 'SELECT idgen.segment_resume()'),
			't', "timeline $tli: segment_resume, the tag above the largest segment ID received");
		$ids = draw_seg($standby, 200);
		cmp_ok(min_of(@$ids), '>', $seg_last, "timeline $tli: then segment IDs are issued, above it");
		if ($tli == 4)
		{
			$standby->restart;
			wait_ready($standby);
			is(scalar @{ draw($standby, 100) }, 100,
				'and a restart does not refuse them again');
			is(scalar @{ draw_seg($standby, 100) }, 100,
				'nor segment IDs');
		}
	}
	$primary = $standby;
	$standby = make_standby($primary, 'swrap_' . ($round + 1)) if $round < 3;
}

my $total = 0;
$total += scalar @$_ for @received;
my @dups = duplicates(@received);
note "snowflake IDs received: $total, received twice: " . scalar(@dups);
is(scalar @dups, 0, 'no snowflake ID received twice across the chain')
  or diag 'some: ' . join(' ', @dups[0 .. ($#dups > 9 ? 9 : $#dups)]);
my $seg_total = 0;
$seg_total += scalar @$_ for @seg_received;
my @seg_dups = duplicates(@seg_received);
note "segment IDs received: $seg_total, received twice: " . scalar(@seg_dups);
is(scalar @seg_dups, 0, 'no segment ID received twice across the chain')
  or diag 'some: ' . join(' ', @seg_dups[0 .. ($#seg_dups > 9 ? 9 : $#seg_dups)]);

$primary->stop;
done_testing();
