# Node ids leased from a registry that cannot give one (issue 40, point 3:
# coverage showed these paths untested).  Asserts:
#  - a registry database without extension idgen (the lease call is an SQL
#    error): snowflake_nextval fails with 55000, "no node id has been
#    leased yet", its detail quoting the registry's error, and
#    node_lease_status shows that error;
#  - a registry whose every node id of the layout (one node bit: 0 and 1)
#    is leased to other servers: the same 55000, the detail saying every
#    node id is leased;
#  - neither server issues an ID;
#  - the registry stopped, node_lease_status shows libpq's error on one line.
# No assertion depends on time: each failing call waits idgen's bounded
# time for the worker's first lease, and the lease never comes.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

my $registry = idgen_node('registry', preload => 0,
	conf => "shared_buffers = 16MB\n");
$registry->start;
$registry->safe_psql('postgres', 'CREATE DATABASE bare');
$registry->safe_psql('postgres', 'CREATE EXTENSION idgen');
# Both node ids of a one-bit node field, leased for ten minutes (the
# registry's longest) by others
for my $i (1, 2)
{
	$registry->safe_psql('postgres',
		"SELECT leased_node FROM idgen.node_lease_acquire('test', 'other$i', 1, 600000, 0, 0)"
	);
}

# A server leasing its node id from registry database $db
sub auto_node
{
	my ($name, $db, $extra) = @_;
	my $conninfo = 'host=' . $registry->host . ' port=' . $registry->port
	  . " dbname=$db";
	my $n = idgen_node($name, node_id => 'auto', conf => qq{
idgen.node_registry = '$conninfo'
idgen.node_namespace = 'test'
shared_buffers = 16MB
max_connections = 10
$extra
});
	$n->start;
	$n->safe_psql('postgres', 'CREATE EXTENSION idgen');
	return $n;
}

# A registry without the extension
my $bare = auto_node('bare', 'bare', '');
my ($ret, $out, $err) = try_sql($bare, 'SELECT idgen.snowflake_nextval()');
isnt($ret, 0, 'no lease from a registry without the extension: no ID');
like($err,
	qr/ERROR:  55000: could not generate a snowflake ID: no node id has been leased yet/,
	'55000, no node id leased yet');
like($err, qr/The last attempt failed: .*idgen/,
	"the detail quotes the registry's error");
like($bare->safe_psql('postgres', 'SELECT last_error FROM idgen.node_lease_status()'),
	qr/idgen/, "node_lease_status shows the registry's error");
is($bare->safe_psql('postgres', 'SELECT issued FROM idgen.snowflake_status()'),
	'0', 'nothing was issued');

# A registry whose every node id of the layout is leased
my $full = auto_node('full', 'postgres',
	"idgen.layout = 'ts=41,node=1,seq=21,unit=1ms,epoch=2024-01-01'");
($ret, $out, $err) = try_sql($full, 'SELECT idgen.snowflake_nextval()');
isnt($ret, 0, 'every node id leased: no ID');
like($err,
	qr/ERROR:  55000: could not generate a snowflake ID: no node id has been leased yet/,
	'55000, no node id leased yet');
like($err,
	qr/The last attempt failed: every node id from 0 to 1 in namespace "test" is leased/,
	'the detail says every node id is leased');
is($full->safe_psql('postgres', 'SELECT issued FROM idgen.snowflake_status()'),
	'0', 'nothing was issued');

# The registry gone: libpq's error, two lines and a tab, is kept on one
# line (what a monitoring query reads)
$registry->stop;
ok($bare->poll_query_until('postgres',
		q{SELECT last_error LIKE '%Is the server running%' FROM idgen.node_lease_status()}),
	"the registry stopped: node_lease_status shows libpq's error");
unlike($bare->safe_psql('postgres', 'SELECT last_error FROM idgen.node_lease_status()'),
	qr/[\n\t]/, 'on one line');
$bare->stop;
$full->stop;
# The registry's error is quoted in bare's log (the worker's LOG line, the
# refusal's detail): any other error is unexpected
my @bad = grep {
	/ (ERROR|PANIC):  /
	  && !/could not lease a node id from the registry: ERROR:  schema "idgen" does not exist|could not generate a snowflake ID|The last attempt failed: ERROR:/
} split /\n/, slurp_file($bare->logfile);
is(scalar @bad, 0, 'no unexpected error in the log of node bare')
  or diag join("\n", @bad);
no_unexpected_errors($full);
done_testing();
