# 114_node_timeline.pl
#	Node ids that follow the timeline (issue 38, point 1):
#	idgen.node_timeline_bits = k puts the server's timeline, modulo 2^k,
#	in the low k bits of the node id, idgen.node_id above them.
#
# 1. The server refuses to start with k above the layout's node bits, with
#    an idgen.node_id that does not fit the bits left, and with
#    idgen.node_id = 'auto' or 'citus', and with a value that is not a
#    whole number from 0 to 16 (a word, trailing characters, negative, past
#    any integer, 17); each names the setting.
# 2. On timeline 1 the node id is node_id * 2^k + 1; id_decode(id) shows
#    the two parts; snowflake_status() the node id the IDs carry.
# 3. Asynchronous replication, the hard case of issue 38: the standby's
#    clock 30 s behind, the primary's walsender stopped (SIGSTOP) before
#    kill -9 of the primary, so its last WAL, reservations included, never
#    reaches the standby.  The promoted standby (timeline 2) issues under
#    node id node_id * 2^k + 2: no ID any client received from the old
#    primary comes again, though the new primary's clock is below the old
#    primary's last ID.  (With k = 0 the same run repeats IDs: the
#    reservation that would have lifted the new primary above them was
#    lost with the WAL; docs/high-availability.md.)  Three hard failovers
#    in a row, with both kinds of IDs, are t/113's.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use IdgenTest;

# --- 1. Refused settings ---
# (one server, each case's settings appended after the last's: the last
# line of a setting wins)
my $refused = idgen_node('refused');
for my $case (
	[ "idgen.node_timeline_bits = 11\n", 1,
		qr/idgen\.node_timeline_bits 11 is more than the 10 node bits of layout "idgen"/ ],
	[ "idgen.node_timeline_bits = 2\n", 300,
		qr/idgen\.node_id 300 is out of range for layout "idgen".*\n.*2 of them for the timeline/ ],
	[ "idgen.node_timeline_bits = 2\n", 'auto',
		qr/idgen\.node_timeline_bits cannot be used with idgen\.node_id = 'auto'/ ],
	[ "idgen.node_timeline_bits = 2\n", 'citus',
		qr/idgen\.node_timeline_bits cannot be used with idgen\.node_id = 'citus'/ ],
	[ "idgen.node_timeline_bits = 'x'\n", 1,
		qr/invalid value for parameter "idgen\.node_timeline_bits": "x"/ ],
	[ "idgen.node_timeline_bits = '3x'\n", 1,
		qr/invalid value for parameter "idgen\.node_timeline_bits": "3x"/ ],
	[ "idgen.node_timeline_bits = '-1'\n", 1,
		qr/invalid value for parameter "idgen\.node_timeline_bits": "-1"/ ],
	[ "idgen.node_timeline_bits = '99999999999999999999'\n", 1,
		qr/invalid value for parameter "idgen\.node_timeline_bits": "99999999999999999999"/ ],
	[ "idgen.node_timeline_bits = 17\n", 1,
		qr/invalid value for parameter "idgen\.node_timeline_bits": "17"/ ])
{
	my ($conf, $node_id, $re) = @$case;
	$refused->append_conf('postgresql.conf', "idgen.node_id = '$node_id'\n$conf");
	my $log_offset = -s $refused->logfile // 0;
	my $started = $refused->start(fail_ok => 1);
	ok(!$started, "refused at start: $conf");
	like(slurp_file($refused->logfile, $log_offset), $re, "the log says why: $conf");
	$refused->stop if $started;
}

# --- 2. The node id on timeline 1 ---
# (IDGEN_TEST_TIMELINE_BITS=0 runs the same with today's node ids: the
# negative control, whose checks of the node id and of repeats then fail)
my $k = $ENV{IDGEN_TEST_TIMELINE_BITS} // 2;
my $node_id = 5;
my $primary = idgen_node('primary', node_id => $node_id,
	allows_streaming => 1, conf => "idgen.node_timeline_bits = $k\n");
note "idgen.node_timeline_bits = $k";
start_node($primary);
$primary->safe_psql(
	'postgres', q{
	CREATE EXTENSION idgen;
	CREATE TABLE ids (id bigint PRIMARY KEY
		DEFAULT idgen.snowflake_nextval(), src text NOT NULL);
	CREATE TABLE idgen_test_stop (stop boolean);
});
wait_ready($primary);
my $tl1 = $node_id * 2**$k + 1;
is( $primary->safe_psql('postgres',
		q{SELECT d.node_id || ' ' || (d.extra->>'node_base') || ' ' || (d.extra->>'node_timeline')
		  FROM idgen.id_decode(idgen.snowflake_nextval()) d}),
	"$tl1 $node_id 1",
	'timeline 1: the node id is node_id * 2^k + 1, and id_decode shows both parts');
is($primary->safe_psql('postgres', 'SELECT node_id FROM idgen.snowflake_status()'),
	$tl1, 'snowflake_status shows the node id the IDs carry');

# --- 3. The hard case of an asynchronous failover ---
my $standby = idgen_standby($primary, 'standby', faketime => 1,
	conf => "idgen.max_lead = '2min'\n");
set_clock($standby, '-30');
start_node($standby);
$primary->wait_for_catchup($standby);

my ($drawers, $pgbench) = start_load($primary, 3000);
$standby->poll_query_until('postgres',
	'SELECT count(*) > 0 FROM ids WHERE (SELECT durable_until IS NOT NULL FROM idgen.snowflake_status())')
  or die "the standby does not replay";
my @walsnd = split /\n/,
  $primary->safe_psql('postgres', 'SELECT pid FROM pg_stat_replication');
ok(@walsnd > 0, 'the primary streams to the standby');
kill 'STOP', @walsnd;
# The clients go on until they have IDs a second past the last reservation
# that reached the standby: those IDs, and the reservations behind them,
# never leave the primary (the reservation runs a second ahead)
my $replayed = $standby->safe_psql('postgres',
	'SELECT durable_until FROM idgen.snowflake_status()');
$primary->poll_query_until('postgres',
	"SELECT max(idgen.id_timestamp(id)) > '$replayed'::timestamptz + interval '1 s' FROM ids")
  or die "no load while the walsender is stopped";
crash_node($primary, all => 1);

my @old;
for my $d (@$drawers)
{
	my ($ids) = finish_drawer($d);
	push @old, @$ids;
}
finish_pgbench($pgbench);
my $old_max = max_of(@old);
note scalar(@old) . ' IDs received from the old primary';
is( $standby->safe_psql('postgres',
		"SELECT idgen.id_timestamp($old_max) > '$replayed'::timestamptz"),
	't',
	'the old primary handed out IDs above every reservation the standby had');

$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die "the standby was not promoted";
wait_ready($standby);
my $replicated = [ map { $_ + 0 } split /\n/,
	  $standby->safe_psql('postgres', 'SELECT id FROM ids') ];
cmp_ok(
	$standby->safe_psql('postgres',
		"SELECT count(*) FROM ids WHERE idgen.id_timestamp(id) > '$replayed'::timestamptz + interval '1 s'"),
	'==', 0,
	'the rows written while the walsender was stopped did not reach the standby');
is( $standby->safe_psql('postgres',
		"SELECT clock_timestamp() < idgen.id_timestamp($old_max)"),
	't',
	"the promoted server's clock is below the old primary's last ID");
is( $standby->safe_psql('postgres',
		'SELECT substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8)'),
	'00000002', 'the promoted server writes timeline 2');

my $new = draw_ids($standby, 20000);
is(first_disorder($new), -1, "the promoted server's IDs increase");
my $tl2 = $node_id * 2**$k + 2;
is( $standby->safe_psql('postgres',
		"SELECT count(*) FROM unnest('{" . join(',', @$new) . "}'::bigint[]) i,
		   idgen.id_decode(i) d WHERE d.node_id <> $tl2"),
	'0', 'every ID of the promoted server carries node id node_id * 2^k + 2');
my %before = map { $_ => 1 } @old, @$replicated;
is(scalar(grep { $before{$_} } @$new), 0,
	'no ID of the promoted server was received from the old primary or replicated');
is(scalar(duplicates(\@old)), 0, 'no ID received twice from the old primary');
no_unexpected_errors($standby);

done_testing();
