# idgen.node_id = 'citus' where Citus cannot be built (CI: Citus is not in
# Debian): what idgen reads of Citus, with Citus's catalog simulated.
# t/100_citus.pl runs a real Citus cluster where Citus is installed; this
# test runs everywhere and covers the same code (src/citus.c) against the
# two tables and the one setting idgen reads: pg_dist_local_group,
# pg_dist_node and citus.node_conninfo (set in postgresql.conf, where it is
# a placeholder that idgen, like Citus's own loader, takes as "Citus is
# loaded first"), and the citus row of pg_extension.  Asserts:
#  - without Citus loaded before idgen: a LOG at start, and snowflake IDs
#    refused (55000) with the reason and the hint;
#  - Citus "loaded" but not installed in idgen.database; installed with an
#    empty pg_dist_local_group; group 0 not in pg_dist_node: each refused
#    with 55000 and its own reason, each taken without a restart;
#  - the coordinator (group 0 in the metadata): node id 0;
#  - a worker (group 3 in the metadata): node id 3, creating, altering and
#    dropping a tag refused (0A000), and segment IDs drawn from the
#    coordinator's idgen.segment_alloc over libpq (here the same server):
#    no duplicate, above every ID drawn before;
#  - a group id above the layout's largest node id: refused, with the
#    layout named;
#  - a worker whose coordinator is not in pg_dist_node: node id kept, tags
#    still refused; after a restart the first call issues node id 3.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;
use Time::HiRes qw(sleep);

# What node_of_new_id gives once it matches $re (the worker looks again
# each second, or sooner when woken)
sub wait_node
{
	my ($n, $re) = @_;
	my $got;
	for (1 .. 300)
	{
		$got = node_of_new_id($n);
		last if $got =~ $re;
		sleep 0.1;
	}
	return $got;
}

# 1. Citus not loaded before idgen
my $plain = idgen_node('plain', node_id => 'citus');
$plain->start;
$plain->safe_psql('postgres', 'CREATE EXTENSION idgen');
like(slurp_file($plain->logfile),
	qr/idgen\.node_id is 'citus' but Citus is not loaded before idgen.*HINT:.*shared_preload_libraries = 'citus,idgen'/s,
	'not loaded before idgen: a LOG at start with the hint');
like(wait_node($plain, qr/Citus is not loaded/),
	qr/55000.*no Citus group id to use as its node id.*DETAIL:.*idgen\.node_id is 'citus'\. Citus is not loaded before idgen\..*HINT:.*shared_preload_libraries = 'citus,idgen'/s,
	'not loaded before idgen: snowflake IDs refused with 55000, the reason and the hint');
$plain->stop;

# 2. Citus "loaded": its setting is defined before idgen's _PG_init
my $n = idgen_node('fake', node_id => 'citus',
	conf => "citus.node_conninfo = 'application_name=idgen_citus_test'\n");
$n->start;
$n->safe_psql('postgres', 'CREATE EXTENSION idgen');
like(wait_node($n, qr/not installed/),
	qr/55000.*Citus is not installed in database "postgres"\..*HINT:.*CREATE EXTENSION citus/s,
	'loaded but not installed in idgen.database: refused with 55000 and a hint');
is($n->safe_psql('postgres', 'SELECT node_id IS NULL FROM idgen.snowflake_status()'),
	't', 'snowflake_status shows no node id meanwhile');

# Citus's catalog as far as idgen reads it: its extension row and two
# tables in pg_catalog (the same columns and types idgen's query uses)
$n->safe_psql('postgres', q{
	SET allow_system_table_mods = on;
	CREATE TABLE pg_catalog.pg_dist_local_group (groupid int NOT NULL);
	CREATE TABLE pg_catalog.pg_dist_node (nodeid int, groupid int,
		nodename text, nodeport int, noderole text);
	INSERT INTO pg_catalog.pg_extension (oid, extname, extowner, extnamespace,
		extrelocatable, extversion)
	VALUES (4000000000, 'citus', 10, 11, false, '13.2-1');
});
like(wait_node($n, qr/pg_dist_local_group has no row/),
	qr/55000.*Table pg_dist_local_group has no row\..*HINT:.*Check the Citus installation/s,
	'installed, pg_dist_local_group empty: refused with 55000');

$n->safe_psql('postgres', 'INSERT INTO pg_catalog.pg_dist_local_group VALUES (0)');
like(wait_node($n, qr/group id is 0/),
	qr/55000.*group id is 0, but pg_dist_node has no row of group 0.*HINT:.*citus_set_coordinator_host/s,
	'group 0 not in the metadata: refused with 55000 and a hint');

# The coordinator in its own metadata, reached through the socket directory
my ($host, $port) = ($n->host, $n->port);
$n->safe_psql('postgres',
	"INSERT INTO pg_catalog.pg_dist_node VALUES (1, 0, '$host', $port, 'primary')");
is(wait_node($n, qr/^\d+$/), '0', 'the coordinator (group 0 in the metadata): node id 0');
is($n->safe_psql('postgres',
		'SELECT count(*) FROM (SELECT idgen.snowflake_nextval() AS id FROM generate_series(1, 1000)) s WHERE (idgen.id_decode(id)).node_id <> 0'),
	'0', '1,000 IDs on the coordinator, every one of node 0');

# A tag created on the coordinator, drawn there first
$n->safe_psql('postgres', "SELECT idgen.segment_create('orders', step => 10)");
my @seg = split /\n/, $n->safe_psql('postgres',
	"SELECT idgen.segment_nextval('orders') FROM generate_series(1, 50)");
is(scalar(@seg), 50, '50 segment IDs on the coordinator');

# This server becomes a worker of group 3 (the coordinator's row stays)
$n->safe_psql('postgres', q{
	UPDATE pg_catalog.pg_dist_local_group SET groupid = 3;
	INSERT INTO pg_catalog.pg_dist_node VALUES (2, 3, 'w3', 5432, 'primary');
});
is(wait_node($n, qr/^3$/), '3', 'a worker of group 3: node id 3, without a restart');
is($n->safe_psql('postgres', 'SELECT node_id FROM idgen.snowflake_status()'),
	'3', 'snowflake_status shows node id 3');

for my $sql ("SELECT idgen.segment_create('other')",
	"SELECT idgen.segment_alter('orders', step => 20)",
	"SELECT idgen.segment_drop('orders')")
{
	my ($rc, $out, $err) = try_sql($n, $sql);
	like($err, qr/0A000.*on a Citus worker.*HINT:.*Run this on the coordinator/s,
		"on a worker, refused with 0A000: $sql");
}

# Its segments now come from the coordinator over libpq (the worker that
# allocates remotely starts when the server first needs it)
my ($rc, $out, $err);
for (1 .. 300)
{
	($rc, $out, $err) = try_sql($n,
		"SELECT idgen.segment_nextval('orders') FROM generate_series(1, 200)");
	last if $rc == 0;
	sleep 0.1;
}
is($rc, 0, 'a worker draws segment IDs from the coordinator') or diag $err;
my @remote = split /\n/, $out // '';
is(scalar(duplicates(\@seg, \@remote)), 0,
	'250 segment IDs, coordinator then worker: no duplicate');
is(scalar(grep { $_ <= max_of(@seg) } @remote), 0,
	"the worker's segment IDs are above every ID drawn before");
like($n->safe_psql('postgres',
		"SELECT application_name FROM pg_stat_activity WHERE backend_type = 'client backend' AND application_name = 'idgen_citus_test'"),
	qr/idgen_citus_test/,
	"the coordinator's connection carries citus.node_conninfo");

# A group id the layout cannot hold (the default layout idgen: 10 node bits)
$n->safe_psql('postgres', q{
	UPDATE pg_catalog.pg_dist_local_group SET groupid = 5000;
	UPDATE pg_catalog.pg_dist_node SET groupid = 5000 WHERE nodeid = 2;
});
like(wait_node($n, qr/larger than/),
	qr/55000.*group id 5000 is larger than the largest node id of layout "idgen" \(1023\).*HINT:.*more node bits/s,
	'a group id above the layout: refused, the layout named');

# A worker whose coordinator left the metadata: node id kept, tags refused
$n->safe_psql('postgres', q{
	UPDATE pg_catalog.pg_dist_local_group SET groupid = 3;
	UPDATE pg_catalog.pg_dist_node SET groupid = 3 WHERE nodeid = 2;
	DELETE FROM pg_catalog.pg_dist_node WHERE groupid = 0;
});
is(wait_node($n, qr/^3$/), '3', 'coordinator not in the metadata: node id 3 kept');
($rc, $out, $err) = try_sql($n, "SELECT idgen.segment_create('other')");
like($err, qr/0A000.*on a Citus worker/s, 'still a worker: creating a tag refused');

# Restarted: a call right after the start waits for the worker's first look
# (or finds it done) and issues the group's node id
$n->restart;
is(node_of_new_id($n), '3', 'right after a restart, node id 3 at the first call');

$n->stop;
done_testing();
