# Segment workers leave parallel query and logical replication their
# background worker slots (issue 22, point 2).  A server with
# max_worker_processes = 8 and the default idgen.segment_max_workers (2):
# ten databases draw segment IDs at once (step 10, so each keeps needing
# its worker) while, in two more databases, a logical replication
# subscription copies a table from a publication (one server: the slot is
# made by hand, create_slot = false) and a parallel query runs.  Asserts:
#  - every draw in every database succeeds, no ID twice in a database, and
#    each database's IDs continue above those drawn before the load;
#  - the parallel query, started each time while segment workers run,
#    launches every worker it planned;
#  - the subscription copies every row of the table, and a row inserted
#    afterwards arrives too;
#  - no more than idgen.segment_max_workers segment workers are ever seen;
#  - with idgen.segment_max_workers = 1, ten databases drawing in turn
#    are all served.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

my $node = idgen_node('worker_slots', allows_streaming => 'logical', conf => q{
max_worker_processes = 8
max_parallel_workers_per_gather = 2
max_parallel_workers = 8
max_logical_replication_workers = 4
max_sync_workers_per_subscription = 2
max_connections = 40
idgen.segment_max_step = 10
idgen.segment_wait_timeout = '120s'
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION idgen');

my @dbs = map { "draw$_" } 1 .. 10;
my %max;
for my $db (@dbs)
{
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, q{
		CREATE EXTENSION idgen;
		SELECT idgen.segment_create('t', 1, 10);
		CREATE TABLE drawn (id bigint);
		INSERT INTO drawn SELECT idgen.segment_nextval('t') FROM generate_series(1, 30);
	});
	$max{$db} = $node->safe_psql($db, 'SELECT max(id) FROM drawn');
}

# Publisher and subscriber databases on the same server
$node->safe_psql('postgres', 'CREATE DATABASE pub');
$node->safe_psql('postgres', 'CREATE DATABASE sub');
$node->safe_psql('pub', q{
	CREATE TABLE items (id int PRIMARY KEY, label text);
	INSERT INTO items SELECT i, 'item ' || i FROM generate_series(1, 5000) i;
	CREATE PUBLICATION pub_items FOR TABLE items;
	SELECT pg_create_logical_replication_slot('sub_items', 'pgoutput');
});
$node->safe_psql('sub', 'CREATE TABLE items (id int PRIMARY KEY, label text)');
$node->safe_psql('postgres', q{
	CREATE TABLE big AS SELECT i, i % 7 AS g FROM generate_series(1, 200000) i;
	ANALYZE big;
});

# Ten databases draw at once
my %bench;
for my $db (@dbs)
{
	$bench{$db} = start_pgbench($node,
		q{INSERT INTO drawn SELECT idgen.segment_nextval('t') FROM generate_series(1, 20);},
		clients => 1, transactions => 15, db => $db);
}
# Until the load is under way: segment workers run (the databases take
# turns in their 2 slots, so how many run at a moment varies)
my $working = q{
	SELECT count(*) > 0 FROM pg_stat_activity WHERE backend_type = 'idgen segment worker'};
$node->poll_query_until('postgres', $working)
  or die 'no segment worker started';

# Meanwhile, a subscription copies the table ...
my $connstr = 'host=' . $node->host . ' port=' . $node->port . ' dbname=pub';
$node->safe_psql('sub', qq{
	CREATE SUBSCRIPTION sub_items CONNECTION '$connstr' PUBLICATION pub_items
	  WITH (create_slot = false, slot_name = 'sub_items')});

# ... and a parallel query launches all its workers, three times
my $most = 0;
for my $round (1 .. 3)
{
	# Each round starts while segment workers run
	$node->poll_query_until('postgres', $working)
	  or die 'no segment worker runs';
	my $plan = $node->safe_psql('postgres', q{
		SET parallel_setup_cost = 0;
		SET parallel_tuple_cost = 0;
		SET min_parallel_table_scan_size = 0;
		EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) SELECT g, count(*) FROM big GROUP BY g});
	my ($planned) = $plan =~ /Workers Planned: (\d+)/;
	my ($launched) = $plan =~ /Workers Launched: (\d+)/;
	is($planned, 2, "parallel query, round $round: 2 workers planned");
	is($launched, 2, "parallel query, round $round: all 2 launched");
	$most = Max($most, $node->safe_psql('postgres', q{
		SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'idgen segment worker'}));
}

$node->poll_query_until('sub', 'SELECT count(*) = 5000 FROM items')
  or die 'the subscription did not copy the table';
is($node->safe_psql('sub', 'SELECT count(*), sum(id) FROM items'),
	'5000|12502500', 'the subscription copied every row');
$node->safe_psql('pub', "INSERT INTO items VALUES (5001, 'after the copy')");
$node->poll_query_until('sub', 'SELECT count(*) = 5001 FROM items')
  or die 'the new row did not arrive';
is($node->safe_psql('sub', 'SELECT label FROM items WHERE id = 5001'),
	'after the copy', 'a row inserted after the copy arrives');

for my $db (@dbs)
{
	my ($out, $err) = finish_pgbench($bench{$db});
	like($out, qr{processed: 15/15}, "$db: every transaction ran");
	is($err, '', "$db: no error");
	is($node->safe_psql($db, 'SELECT count(*), count(DISTINCT id) FROM drawn'),
		'330|330', "$db: 330 IDs, all distinct");
	is($node->safe_psql($db, "SELECT count(*) FROM drawn WHERE id <= $max{$db}"),
		'30', "$db: the load's IDs are all above those drawn before it");
	$most = Max($most, $node->safe_psql('postgres', q{
		SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'idgen segment worker'}));
}
cmp_ok($most, '<=', 2, 'never more than idgen.segment_max_workers segment workers seen');

# One segment worker at a time: ten databases drawing in turn are served
$node->safe_psql('postgres', 'ALTER SYSTEM SET idgen.segment_max_workers = 1');
$node->reload;
$node->poll_query_until('postgres', q{SELECT current_setting('idgen.segment_max_workers') = '1'})
  or die 'the reload did not take';
for my $db (@dbs)
{
	my $ids = $node->safe_psql($db, q{
		INSERT INTO drawn SELECT idgen.segment_nextval('t') FROM generate_series(1, 50)
		RETURNING id});
	my @ids = split /\n/, $ids;
	is(scalar @ids, 50, "segment_max_workers = 1, $db: 50 IDs");
	is($node->safe_psql($db, 'SELECT count(*) = count(DISTINCT id) FROM drawn'),
		't', "segment_max_workers = 1, $db: still no duplicate");
}

$node->stop;
done_testing();

sub Max { return $_[0] > $_[1] ? $_[0] : $_[1] }
