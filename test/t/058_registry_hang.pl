# 058_registry_hang.pl
#	A node registry that hangs (rather than refuses) neither stalls the
#	idgen worker nor makes a server issue IDs without a lease (issue 10,
#	point 5).
#
# The registry's processes are stopped with SIGSTOP, so connections to it
# hang.  Meanwhile the issuing server's remote worker gives up each attempt
# at its deadline (the attempt's error shows in node_lease_status), the
# local worker keeps the snowflake reservation moving, and every call either
# returns an ID above all earlier ones, while the lease is valid, or fails
# with the documented fencing error once it has run out: never another
# error, never an ID without a lease.  After SIGCONT the server leases again
# and issues IDs on the same node id, above every earlier one.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

my $registry = idgen_node('hang_registry', preload => 0);
$registry->start;
$registry->safe_psql('postgres', q{
	CREATE EXTENSION idgen;
	CREATE ROLE leaser LOGIN;
	GRANT EXECUTE ON FUNCTION
		idgen.node_lease_acquire(text, text, int, int, int, bigint),
		idgen.node_lease_renew(text, int, text, int, bigint) TO leaser;
});
my $regconn = 'host=' . $registry->host . ' port=' . $registry->port
  . ' dbname=postgres user=leaser connect_timeout=2';

my $node = idgen_node('hang_issuer', node_id => 'auto', conf => qq{
idgen.node_registry = '$regconn'
idgen.node_lease_time = '6s'
idgen.worker_wait_timeout = '1s'
});
start_node($node);
$node->safe_psql('postgres', 'CREATE EXTENSION idgen');
$node->poll_query_until('postgres',
	'SELECT valid FROM idgen.node_lease_status()')
  or die 'no node id was leased';
wait_ready($node);
my $leased = $node->safe_psql('postgres', 'SELECT node_id FROM idgen.node_lease_status()');
my @ids = @{ draw_ids($node, 1000) };

# Hang the registry: every process of it stops
my $pm = $registry->{_pid};
my @procs = ($pm, IdgenTest::children($pm));
kill 'STOP', @procs;
note "registry processes stopped: @procs";
my $reserved0 = $node->safe_psql('postgres',
	'SELECT reserved_until FROM idgen.snowflake_status()');

# The remote worker's attempt ends at its deadline, with an error
$node->poll_query_until('postgres',
	'SELECT last_error IS NOT NULL FROM idgen.node_lease_status()')
  or die 'the remote worker never gave up on the hanging registry';
pass('a lease renewal against the hanging registry ended with an error');

# The local worker keeps the reservation moving meanwhile
ok( $node->poll_query_until('postgres',
		"SELECT reserved_until > '$reserved0' FROM idgen.snowflake_status()"),
	'the local worker extends the snowflake reservation while the registry hangs');

# Every call: an ID above the earlier ones, or the fencing error
my ($ok, $fenced, $other) = (0, 0, 0);
my $last = max_of(@ids);
for (1 .. 100)
{
	my ($ret, $out, $err) = try_sql($node, 'SELECT idgen.snowflake_nextval()');
	if ($ret == 0)
	{
		$ok++;
		$other++ unless $out > $last;
		$last = $out if $out > $last;
	}
	elsif ($err =~ /ERROR:  55000: could not generate a snowflake ID: the lease of node id $leased has run out/)
	{
		$fenced++;
		last;
	}
	else
	{
		$other++;
		diag($err);
	}
}
is($other, 0, 'while the registry hangs: no other error, every ID above the earlier ones');

# Once the lease has run out, calls are fenced
$node->poll_query_until('postgres', 'SELECT NOT valid FROM idgen.node_lease_status()')
  or die 'the lease never ran out while the registry hung';
my ($ret, $out, $err) = try_sql($node, 'SELECT idgen.snowflake_nextval()');
like($err,
	qr/ERROR:  55000: could not generate a snowflake ID: the lease of node id $leased has run out/,
	'once the lease has run out, calls fail with the fencing error');
is($node->safe_psql('postgres', 'SELECT worker_running FROM idgen.snowflake_status()'),
	't', 'the idgen worker is still running');

# The registry comes back: the same node id, IDs above every earlier one
kill 'CONT', @procs;
$node->poll_query_until('postgres', 'SELECT valid FROM idgen.node_lease_status()')
  or die 'the lease was not renewed after the registry came back';
is($node->safe_psql('postgres', 'SELECT node_id FROM idgen.node_lease_status()'),
	$leased, 'the server keeps its node id');
my $after = draw_ids($node, 1000);
cmp_ok(min_of(@$after), '>', $last, 'IDs after the hang are above every earlier one');

$node->stop;
$registry->stop;
done_testing();
