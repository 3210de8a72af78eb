# A central segment server that hangs (accepts connections, never answers)
# delays only the remote worker: snowflake IDs keep flowing, every call
# succeeding and every ID above the one before, while segment calls fail
# clearly after idgen.segment_wait_timeout.
#
# The test asserts outcomes, not speed: it draws snowflake IDs until the
# hang has outlasted every timeout involved (five segment calls have each
# waited idgen.segment_wait_timeout, so the remote worker has spent more
# than one whole 2 s attempt on the server; and IDs beyond the reservation
# that existed when the hang began have been issued, so the reservation was
# extended during it).  The hang lasts as long as the test, so a
# reservation stalled behind the hanging server would make snowflake calls
# fail after idgen.worker_wait_timeout; that is 10 s, not shorter, so that
# a busy machine slowing the idgen worker's own commits is not taken for
# such a stall.
use strict;
use warnings;
use IO::Socket::INET;
use Time::HiRes qw(time);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

# A "server" that completes TCP handshakes (the kernel does, from the
# backlog) and never says a word
my $hang = IO::Socket::INET->new(
	LocalAddr => '127.0.0.1',
	LocalPort => 0,
	Listen => 64,
	Proto => 'tcp') or die "cannot listen: $!";
my $hang_port = $hang->sockport;

my $node = idgen_node('hang', node_id => 5, conf => qq{
idgen.segment_server = 'host=127.0.0.1 port=$hang_port dbname=postgres user=nobody'
idgen.segment_wait_timeout = '1s'
idgen.worker_wait_timeout = '10s'
});
$node->start;
$node->safe_psql('postgres',
	'CREATE EXTENSION idgen; CREATE TABLE idgen_test_stop (stop boolean)');
ok( $node->poll_query_until(
		'postgres',
		q{SELECT count(*) = 2 FROM pg_stat_activity WHERE backend_type IN ('idgen worker', 'idgen remote worker')}
	),
	'with a central segment server, the idgen worker and the remote worker run');

# The first ID waits for the first reservation; take it out of the way
my @ids = ($node->safe_psql('postgres', 'SELECT idgen.snowflake_nextval()') + 0);
my ($waits_before, $reserved_before) = split /\|/,
  $node->safe_psql('postgres',
	'SELECT reservation_waits, extract(epoch FROM reserved_until) * 1000 FROM idgen.snowflake_status()'
  );

# Keep the remote worker busy with the hanging server: a session asks for a
# segment again and again, in the background
my $seg = start_drawer($node,
	name => 'segment',
	sql => "SELECT idgen.segment_nextval('order');");

# Segment calls that have failed so far
sub seg_errors
{
	return grep { /ERROR/ } split /\n/, slurp_file($seg->{err});
}

# Meanwhile draw snowflake IDs, each batch checked, until the hang has
# outlasted every timeout (see the top); stop at the first failed batch
my ($batches, $failed, $last_ts) = (0, 0, 0);
my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
while ((seg_errors() < 5 || $last_ts <= $reserved_before) && !$failed)
{
	die 'the segment calls did not fail, or the snowflake IDs did not move on'
	  if time > $deadline;
	my ($ret, $out, $err) = try_sql($node,
		'SELECT id, extract(epoch FROM idgen.id_timestamp(id)) * 1000
		 FROM (SELECT idgen.snowflake_nextval() AS id
			   FROM generate_series(1, 1000) OFFSET 0) s');
	$batches++;
	if ($ret != 0)
	{
		$failed++;
		diag "batch $batches failed: $err";
		next;
	}
	for (split /\n/, $out)
	{
		my ($id, $ts) = split /\|/;
		push @ids, $id + 0;
		$last_ts = $ts;
	}
}
stop_drawers($node);
my ($seg_ids, $seg_err, $seg_end) = finish_drawer($seg);
my @seg_errors = grep { /ERROR/ } split /\n/, $seg_err;

is(scalar @$seg_ids, 0, 'no segment ID while the central server hangs');
cmp_ok(scalar @seg_errors, '>=', 5, 'segment calls fail while the central server hangs');
# Before the remote worker's first attempt has failed, a call cannot name
# the server's failure yet, and gets the plain timeout error (55000)
is( scalar(
		grep {
			!/ERROR:  (08006|55000): could not draw an ID for segment tag "order": the (central segment server|idgen worker) did not (allocate|load) a segment within 1000 ms/
		} @seg_errors),
	0,
	'each with the documented timeout error');
cmp_ok(scalar(grep { /ERROR:  08006: .* the central segment server did not allocate/ } @seg_errors),
	'>', 0, 'once an attempt has failed, with SQLSTATE 08006 naming the central server');
is($failed, 0, "every snowflake call succeeded meanwhile ($batches batches of 1,000)");
is(first_disorder(\@ids), -1, 'the snowflake IDs strictly increase throughout');
cmp_ok($last_ts, '>', $reserved_before,
	'IDs beyond the reservation that existed when the hang began were issued: it was extended meanwhile'
);
note 'reservation waits meanwhile: '
  . ($node->safe_psql('postgres',
		'SELECT reservation_waits FROM idgen.snowflake_status()') - $waits_before);
like(slurp_file($node->logfile), qr/central segment server|segment_server|127\.0\.0\.1/,
	'the remote worker reports the unreachable server');

$node->stop;
close $hang;
done_testing();
