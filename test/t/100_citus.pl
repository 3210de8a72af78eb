# idgen in a real Citus cluster: a coordinator and two workers on this
# machine, shared_preload_libraries = 'citus,idgen', idgen.node_id = 'citus'.
# Skipped where Citus is not installed (test/citus/build.sh installs it from a
# source checkout).  Asserts:
#  - node ids are Citus group ids: a server with idgen.node_id = 'citus'
#    refuses snowflake IDs (SQLSTATE 55000, with a hint) while Citus is not
#    installed and while the node has not been added; once added, each node
#    issues its group id (coordinator 0) without a restart; a worker removed
#    and added again takes its new group id, without a restart;
#  - snowflake defaults: inserts through the coordinator, through each worker,
#    COPY, INSERT ... SELECT from a distributed table, and pgbench on all
#    three nodes at once: no duplicate, and every row's decoded node is the
#    group id of the node that evaluated the default (a second default
#    records it).  Citus repartitions every INSERT ... SELECT that evaluates
#    an idgen default (it pushes no volatile function down), and evaluates
#    the default on the worker holding the source row's shard; one that
#    carries the IDs is pushed down and keeps them; ADD COLUMN ... DEFAULT
#    fills on the workers; EXPLAIN INSERT draws an ID; a volatile UPDATE is
#    refused by Citus;
#  - segment defaults: a tag created on the coordinator is drawn on the
#    workers too (distributed and reference tables, inserts through each
#    node, INSERT ... SELECT evaluated on the workers): no
#    duplicate, every ID within what the coordinator's idgen.segment_alloc
#    allocated; creating or dropping a tag on a worker is refused (0A000);
#  - a standby of a worker refuses IDs and, promoted, keeps the group's node
#    id and issues IDs above the old primary's.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;
use Time::HiRes qw(sleep);

# Is Citus installed in this PostgreSQL?
my $pg_config = $ENV{PG_CONFIG} || 'pg_config';
my $sharedir = `$pg_config --sharedir`;
chomp $sharedir;
plan skip_all => "Citus is not installed in this PostgreSQL ($sharedir/extension/citus.control is missing; bash test/citus/build.sh SRC_DIR installs it from a Citus source checkout)"
  unless $sharedir ne '' && -e "$sharedir/extension/citus.control";

my @nodes;
for my $name (qw(coord w1 w2))
{
	# w1 gets a standby at the end
	my $n = idgen_node($name, libraries => ['citus'], node_id => 'citus',
		allows_streaming => $name eq 'w1' ? 1 : 0, conf => q{
listen_addresses = '127.0.0.1'
shared_buffers = 32MB
max_connections = 60
citus.shard_count = 4
citus.log_distributed_deadlock_detection = off
});
	$n->start;
	push @nodes, $n;
}
my ($coord, $w1, $w2) = @nodes;
my %group_of;
my ($rc, $out, $errout);

# Wait until node $n issues IDs with node id $want
sub wait_node_id
{
	my ($n, $want, $what) = @_;
	my $got;
	for (1 .. 200)
	{
		$got = node_of_new_id($n);
		last if $got eq $want;
		sleep 0.1;
	}
	is($got, $want, $what);
}

# idgen before Citus: refused, Citus is not installed
$w1->safe_psql('postgres', 'CREATE EXTENSION idgen');
like(node_of_new_id($w1), qr/55000.*no Citus group id.*Citus is not installed.*HINT:.*CREATE EXTENSION citus/s,
	'idgen.node_id = citus without the citus extension: refused with 55000 and a hint');
$w1->safe_psql('postgres', 'DROP EXTENSION idgen');

$_->safe_psql('postgres', 'CREATE EXTENSION citus') for @nodes;

# A fresh node has group 0 but is not in any metadata: refused
$w2->safe_psql('postgres', 'CREATE EXTENSION idgen');
my $err;
for (1 .. 50)
{
	$err = node_of_new_id($w2);
	last if $err =~ /group id is 0/;
	sleep 0.1;
}
like($err, qr/55000.*group id is 0.*HINT:.*citus_add_node/s,
	'a node not added to the cluster (group 0) refuses IDs with 55000 and a hint');
$w2->safe_psql('postgres', 'DROP EXTENSION idgen');

# The cluster; the coordinator in its own metadata (not as localhost)
$coord->safe_psql('postgres',
	"SELECT citus_set_coordinator_host('127.0.0.1', " . $coord->port . ')');
$coord->safe_psql('postgres',
	"SELECT citus_add_node('127.0.0.1', " . $_->port . ')') for ($w1, $w2);
# Citus creates idgen on the workers too
$coord->safe_psql('postgres', 'CREATE EXTENSION idgen');

for my $n (@nodes)
{
	$group_of{ $n->name } =
	  $n->safe_psql('postgres', 'SELECT groupid FROM pg_dist_local_group');
	wait_node_id($n, $group_of{ $n->name },
		$n->name . ": node id is its Citus group id $group_of{$n->name}");
}
is($group_of{coord}, 0, 'the coordinator is group 0');
isnt($group_of{w1}, $group_of{w2}, 'the workers have distinct group ids');

# w2 removed and added again: a new group id, taken without a restart
my $old_w2 = $group_of{w2};
$coord->safe_psql('postgres',
	"SELECT citus_remove_node('127.0.0.1', " . $w2->port . ')');
$coord->safe_psql('postgres',
	"SELECT citus_add_node('127.0.0.1', " . $w2->port . ')');
$group_of{w2} = $w2->safe_psql('postgres', 'SELECT groupid FROM pg_dist_local_group');
isnt($group_of{w2}, $old_w2, "w2 added again has a new group id ($old_w2 -> $group_of{w2})");
wait_node_id($w2, $group_of{w2}, 'w2 issues its new group id without a restart');

# Snowflake defaults; gen_node records where the default was evaluated
$coord->safe_psql('postgres', q{
	CREATE FUNCTION gen_group() RETURNS int LANGUAGE sql VOLATILE
		AS 'SELECT groupid FROM pg_catalog.pg_dist_local_group';
	CREATE TABLE events (id bigint DEFAULT idgen.snowflake_nextval(),
		gen_node int DEFAULT gen_group(), src text);
	SELECT create_distributed_table('events', 'id');
	CREATE TABLE copies (k bigint, id bigint DEFAULT idgen.snowflake_nextval(),
		gen_node int DEFAULT gen_group(), src text);
	SELECT create_distributed_table('copies', 'k', colocate_with => 'events');
	CREATE TABLE moved (id bigint DEFAULT idgen.snowflake_nextval(),
		gen_node int DEFAULT gen_group(), src text, old_id bigint);
	SELECT create_distributed_table('moved', 'id');
});

for my $n (@nodes)
{
	$n->safe_psql('postgres',
		"INSERT INTO events (src) SELECT 'insert via ' || '" . $n->name
		  . "' FROM generate_series(1, 300)");
}
$coord->safe_psql('postgres',
	"COPY events (src) FROM STDIN;\n" . ("copy\n" x 300) . "\\.\n");

# pgbench on the three nodes at once
my @runs = map {
	start_pgbench($_, "INSERT INTO events (src) VALUES ('pgbench');",
		clients => 2, transactions => 250)
} @nodes;
for my $r (@runs)
{
	my ($pb_out, $pb_err, $pb_rc) = finish_pgbench($r);
	is($pb_rc, 0, 'pgbench run on one node ended without error')
	  or diag($pb_err);
}

# INSERT ... SELECT from a distributed table, distributed by the generated ID
like($coord->safe_psql('postgres',
	"EXPLAIN (COSTS OFF) INSERT INTO moved (old_id, src) SELECT id, 'x' FROM events"),
	qr{INSERT/SELECT method: repartition}, 'INSERT INTO moved ... SELECT FROM events is repartitioned');
# Citus pushes no INSERT ... SELECT down that evaluates a volatile function
# (an idgen default included), even between colocated tables by the same key
like($coord->safe_psql('postgres',
	"EXPLAIN (COSTS OFF) INSERT INTO copies (k, src) SELECT id, 'x' FROM events"),
	qr{INSERT/SELECT method: repartition},
	'INSERT INTO copies ... SELECT FROM events (colocated) with an idgen default is repartitioned too');
$coord->safe_psql('postgres',
	"INSERT INTO copies (k, src) SELECT id, 'colocated' FROM events");
# Pushed down: an INSERT ... SELECT that carries the IDs (no default evaluated)
$coord->safe_psql('postgres', q{
	CREATE TABLE archive (id bigint, gen_node int, src text);
	SELECT create_distributed_table('archive', 'id', colocate_with => 'events');
});
unlike($coord->safe_psql('postgres',
	'EXPLAIN (COSTS OFF) INSERT INTO archive SELECT id, gen_node, src FROM events'),
	qr{INSERT/SELECT method}, 'INSERT INTO archive ... SELECT FROM events carrying the IDs is pushed down');
$coord->safe_psql('postgres',
	'INSERT INTO archive SELECT id, gen_node, src FROM events');
$coord->safe_psql('postgres',
	"INSERT INTO moved (old_id, src) SELECT id, 'repartitioned' FROM events");

my $events = $coord->safe_psql('postgres', 'SELECT count(*) FROM events');
is($events, 4 * 300 + 3 * 2 * 250, 'every insert into events landed');
for my $t (qw(events copies moved archive))
{
	is($coord->safe_psql('postgres',
		"SELECT count(*) - count(DISTINCT id) FROM $t"), 0,
		"$t: no duplicate ID");
	is($coord->safe_psql('postgres',
		"SELECT count(*) FROM $t WHERE (idgen.id_decode(id)).node_id <> gen_node"), 0,
		"$t: every row's decoded node is the group of the node that evaluated its default");
}
is($coord->safe_psql('postgres', q{
	SELECT count(*) FROM (SELECT id FROM events UNION ALL SELECT id FROM copies
		UNION ALL SELECT id FROM moved) a}),
	$coord->safe_psql('postgres', q{
	SELECT count(DISTINCT id) FROM (SELECT id FROM events UNION ALL SELECT id FROM copies
		UNION ALL SELECT id FROM moved) a}),
	'no ID twice across the three tables that generated IDs');
is($coord->safe_psql('postgres',
	"SELECT count(*) FROM events WHERE src = 'insert via w1' AND gen_node <> $group_of{w1}"),
	0, 'inserts through w1 drew their IDs on w1');
note('where the defaults were evaluated (table: group rows ...): ',
	$coord->safe_psql('postgres', q{
	SELECT string_agg(t || ': ' || g, '; ') FROM (
		SELECT t, string_agg(gen_node || ' ' || n, ', ' ORDER BY gen_node) AS g
		FROM (SELECT 'events' AS t, gen_node, count(*) AS n FROM events GROUP BY 2
			UNION ALL SELECT 'copies', gen_node, count(*) FROM copies GROUP BY 2
			UNION ALL SELECT 'moved', gen_node, count(*) FROM moved GROUP BY 2) c
		GROUP BY t) x}));
is($coord->safe_psql('postgres', 'SELECT count(*) FROM archive'), $events,
	'the pushed-down INSERT ... SELECT copied every row');
# Where an INSERT ... SELECT from a distributed table evaluates the
# target's defaults: on the worker that holds the source row's shard
for my $c (['moved', 'old_id'], ['copies', 'k'])
{
	my ($t, $src) = @$c;
	is($coord->safe_psql('postgres', qq{
		WITH m AS MATERIALIZED (SELECT $src AS src_id, gen_node FROM $t)
		SELECT count(*) FILTER (WHERE p.groupid IS DISTINCT FROM m.gen_node)
			+ (SELECT count(*) FROM $t WHERE gen_node = 0)
		FROM m LEFT JOIN pg_dist_placement p
			ON p.shardid = get_shard_id_for_distribution_column('events', m.src_id)}),
		0, "$t: each default was evaluated on the worker holding the source row's shard");
}

# ADD COLUMN with a snowflake default: evaluated on the workers
$coord->safe_psql('postgres',
	'ALTER TABLE copies ADD COLUMN id2 bigint DEFAULT idgen.snowflake_nextval()');
is($coord->safe_psql('postgres', q{
	SELECT count(*) FILTER (WHERE (idgen.id_decode(id2)).node_id = 0)
		+ count(*) - count(DISTINCT id2) FROM copies}),
	0, 'ADD COLUMN ... DEFAULT snowflake_nextval(): filled on the workers, no duplicate');

# A volatile UPDATE of a distributed table is Citus's to refuse
($rc, $out, $errout) = try_sql($coord,
	'UPDATE copies SET id = idgen.snowflake_nextval()');
like($errout, qr/VOLATILE/i, 'UPDATE ... SET id = snowflake_nextval() is rejected by Citus');

# Segment defaults: the coordinator's tag, everywhere
$coord->safe_psql('postgres', q{
	SELECT idgen.segment_create('order', 1, 100);
	CREATE TABLE orders (tenant int, id bigint DEFAULT idgen.segment_nextval('order'),
		gen_node int DEFAULT gen_group());
	SELECT create_distributed_table('orders', 'tenant');
	CREATE TABLE order_copies (tenant int, id bigint DEFAULT idgen.segment_nextval('order'),
		gen_node int DEFAULT gen_group());
	SELECT create_distributed_table('order_copies', 'tenant', colocate_with => 'orders');
	CREATE TABLE order_notes (id bigint DEFAULT idgen.segment_nextval('order'),
		gen_node int DEFAULT gen_group(), note text);
	SELECT create_reference_table('order_notes');
});
($rc, $out, $errout) = try_sql($w1,
	"SELECT idgen.segment_create('w1tag', 1, 100)");
like($errout, qr/0A000.*cannot create a segment tag on a Citus worker/,
	'creating a tag on a worker is refused with 0A000');
($rc, $out, $errout) = try_sql($w2, "SELECT idgen.segment_drop('order')");
like($errout, qr/0A000.*cannot drop a segment tag on a Citus worker/,
	'dropping the tag on a worker is refused with 0A000');

for my $n (@nodes)
{
	my $ok = 0;
	for (1 .. 100)
	{
		my ($r) = try_sql($n, "SELECT idgen.segment_nextval('order')");
		if ($r == 0) { $ok = 1; last; }
		sleep 0.1;
	}
	ok($ok, $n->name . ': draws from the coordinator\'s tag');
	$n->safe_psql('postgres', qq{
		INSERT INTO orders (tenant) SELECT g % 50 FROM generate_series(1, 400) g;
		INSERT INTO order_notes (note) SELECT 'via } . $n->name . q{' FROM generate_series(1, 100);
	});
}
# EXPLAIN of an INSERT draws the default's ID (segment IDs show it: one
# backend draws consecutive values within a segment)
my $before = $coord->safe_psql('postgres', "SELECT idgen.segment_nextval('order')");
$coord->safe_psql('postgres', 'EXPLAIN INSERT INTO orders (tenant) VALUES (1)');
my $after = $coord->safe_psql('postgres', "SELECT idgen.segment_nextval('order')");
cmp_ok($after, '>', $before + 1, "EXPLAIN INSERT drew an ID ($before, then $after)");

$coord->safe_psql('postgres',
	'INSERT INTO order_copies (tenant) SELECT tenant FROM orders');
is($coord->safe_psql('postgres',
	'SELECT count(*) FROM order_copies WHERE gen_node = 0'), 0,
	'an INSERT ... SELECT from a distributed table drew segment IDs on the workers');
is($coord->safe_psql('postgres', q{
	SELECT count(*) - count(DISTINCT id) FROM (SELECT id FROM orders
		UNION ALL SELECT id FROM order_copies UNION ALL SELECT id FROM order_notes) a}),
	0, 'segment IDs drawn on all three nodes: no duplicate');
my $max_id = $coord->safe_psql('postgres',
	"SELECT max_id FROM idgen.segment_alloc WHERE biz_tag = 'order'");
is($coord->safe_psql('postgres', qq{
	SELECT count(*) FROM (SELECT id FROM orders
		UNION ALL SELECT id FROM order_copies UNION ALL SELECT id FROM order_notes) a
	WHERE id > $max_id OR id < 1}),
	0, "every segment ID lies within what the coordinator allocated (1 .. $max_id)");
is($_->safe_psql('postgres', 'SELECT count(*) FROM idgen.segment_alloc'), 0,
	$_->name . ' has no tag of its own') for ($w1, $w2);

# A standby of w1 refuses IDs; promoted in place of w1, it keeps group 1's
# node id and issues IDs above every ID w1 issued
my $standby = idgen_standby($w1, 'w1_standby');
# Citus made a self-signed certificate; the backup's copy of its key is
# group-readable, which the server refuses
chmod 0600, $standby->data_dir . '/server.key' if -e $standby->data_dir . '/server.key';
$standby->start;
($rc, $out, $errout) = try_sql($standby, 'SELECT idgen.snowflake_nextval()');
like($errout, qr/25006.*during recovery/, 'the standby of w1 refuses snowflake IDs');
my $last_w1 = $w1->safe_psql('postgres', 'SELECT max(idgen.snowflake_nextval()) FROM generate_series(1, 1000)');
$w1->wait_for_catchup($standby);
$w1->stop;
$standby->promote;
wait_node_id($standby, $group_of{w1}, "the promoted standby keeps group $group_of{w1}'s node id");
my $first_new = $standby->safe_psql('postgres', 'SELECT idgen.snowflake_nextval()');
cmp_ok($first_new, '>', $last_w1, 'the promoted standby starts above the old primary\'s IDs');
$standby->stop;

$_->stop for grep { $_ != $w1 } reverse @nodes;
done_testing();
