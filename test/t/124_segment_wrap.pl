# 124_segment_wrap.pl
#	Segment IDs when the timeline's low bits come round: with
#	idgen.node_timeline_bits = 1, timeline 3 shares its residue modulo 2
#	with timeline 1, whose segment allocations in WAL never replayed would
#	not be disjoint from its own.
#
# A chain p (timeline 1) -> a (timeline 2) -> b (timeline 3), each a
# streaming standby of the one before, promoted with pg_ctl promote once the
# one before is stopped.  Asserts:
#  - a, on timeline 2, hands out segment IDs (all even, above p's);
#  - b, on timeline 3, refuses them: 55000 with the message naming the
#    timeline and the hint (raise the bits, or segment_resume), a WARNING
#    in its log, and after a restart still;
#  - segment_resume lifts the refusal; b's IDs are then odd and above every
#    ID p and a handed out, and a restart does not refuse them again.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

my $conf = "idgen.node_timeline_bits = 1\n";
my $p = idgen_node('wrap_p', node_id => 5, allows_streaming => 1, conf => $conf);
start_node($p);
$p->safe_psql('postgres', q{
	CREATE EXTENSION idgen;
	SELECT idgen.segment_create('orders', 1, 10);
});
wait_ready($p);
my $draw = q{SELECT max(idgen.segment_nextval('orders')) FROM generate_series(1, 50)};
my $p_max = $p->safe_psql('postgres', $draw);

# The next server of the chain: a standby of $prev, $prev stopped, promoted
sub next_primary
{
	my ($prev, $name, $wrapped) = @_;
	my $n = idgen_standby($prev, $name);
	start_node($n);
	$prev->wait_for_catchup($n);
	$prev->stop;
	$n->promote;
	$n->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die;
	# on a timeline that came round, snowflake IDs are refused too
	# (t/123): no reservation to wait for
	wait_ready($n) unless $wrapped;
	return $n;
}

my $a = next_primary($p, 'wrap_a');
my $a_ids = $a->safe_psql('postgres', qq{
	CREATE TABLE drawn AS SELECT idgen.segment_nextval('orders') AS id FROM generate_series(1, 50);
	SELECT count(*) FILTER (WHERE id % 2 = 0 AND id > $p_max) FROM drawn});
is($a_ids, '50', 'timeline 2: segment IDs are handed out, all even and above the first primary\'s');
my $a_max = $a->safe_psql('postgres', 'SELECT max(id) FROM drawn');

my $b = next_primary($a, 'wrap_b', 1);
is($b->safe_psql('postgres', q{SELECT ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int}), '3',
	'the second promotion is on timeline 3');
my $refused = qr/ERROR:  55000: segment IDs are refused because this server was promoted onto timeline 3, whose low 1 bits an earlier timeline of its history had\n.*\n.*HINT:  Raise idgen.node_timeline_bits so that 2\^bits is above the timeline, and restart; or, once no earlier server of this history hands out segment IDs/;
my ($ret, $out, $err) = $b->psql('postgres', $draw,
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, $refused, 'timeline 3: segment IDs are refused (55000), with the hint');
like(slurp_file($b->logfile),
	qr/WARNING:  idgen: segment IDs are refused: this server was promoted onto timeline 3, whose low 1 bits \(idgen.node_timeline_bits\) timeline 1 of its history had/,
	'and a WARNING in the log names the two timelines');
$b->restart;
($ret, $out, $err) = $b->psql('postgres', $draw,
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, $refused, 'after a restart, still refused');

is($b->safe_psql('postgres', 'SELECT idgen.segment_resume()'), 't',
	'segment_resume lifts the refusal');
is($b->safe_psql('postgres', qq{
	CREATE TABLE drawn_b AS SELECT idgen.segment_nextval('orders') AS id FROM generate_series(1, 50);
	SELECT count(*) FILTER (WHERE id % 2 = 1 AND id > $a_max) FROM drawn_b}), '50',
	'then timeline 3 hands out segment IDs, all odd and above every earlier one');
$b->restart;
($ret, $out, $err) = $b->psql('postgres', $draw);
is($ret, 0, 'and a restart does not refuse them again') or diag $err;

$b->stop;
done_testing();
