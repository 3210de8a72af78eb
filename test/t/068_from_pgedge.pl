# 068_from_pgedge.pl
#	Moving a database from pgEdge's snowflake to idgen with the recipe of
#	docs/coming-from.md, "pgEdge snowflake" (issue 21, point 5).
#
# The server runs with the postgresql.conf lines of that section (layout
# 'pgedge', the node id pgEdge used, idgen.database 'app'), read from the
# document.  Database app holds table orders: rows whose IDs were made by
# idgen.id_make(ts, node, seq, 'pgedge') (this node's and two other nodes'
# over the last 30 days), and a default that stands in for pgEdge's
# snowflake.nextval(): the same bits (41 of milliseconds since 2023-01-01,
# 10 of node, 12 of count), continuing 3 s ahead of the clock as pgEdge
# does after a burst, every ID recorded in snowflake.issued.  Two sessions
# insert rows with the default before, during and after the recipe's SQL
# block, which is run as the document shows it: in app, where the block
# creates the extension, and again in app2, where idgen is installed and
# its worker ready beforehand (so a default set before the advance would
# hand out IDs at once: the recipe run as separate statements fails here).
# Then a clean restart and more rows.
#
# Asserts: the block runs; the column's default is idgen's; every ID made
# after the block is above every ID made before it (the 'pgedge' ones and
# the stand-in's), decodes to the same node, and each session received
# increasing IDs; no ID is issued twice.  Outcomes only, no timings.
use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

# The document's postgresql.conf lines and the recipe's SQL block
my $doc = PostgreSQL::Test::Utils::slurp_file(repo_file('docs/coming-from.md'));
my ($section) = $doc =~ /^## pgEdge snowflake\n(.*?)^## /ms
  or die "docs/coming-from.md has no section \"pgEdge snowflake\"";
my ($conf) = $section =~ /^```\n(shared_preload_libraries = [^`]*?idgen\.layout = 'pgedge'[^`]*?)^```$/ms
  or die "the pgEdge section has no postgresql.conf block";
my ($recipe) = $section =~
  /^<!-- example: not run \([^\n]*068_from_pgedge\.pl[^\n]*\) -->\n```sql\n(.*?)^```$/ms
  or die "the pgEdge section has no SQL block marked as run by t/068";
my ($node_id) = $conf =~ /^idgen\.node_id = (\d+)/m
  or die "the postgresql.conf block sets no idgen.node_id";
note "postgresql.conf lines:\n$conf";
note "recipe:\n$recipe";

# A longer max_lead and worker wait than the defaults, so a loaded machine
# cannot make the test fail for time; the outcome is the same
my $node = idgen_node('from_pgedge', conf => $conf
	  . "idgen.max_lead = '30s'\nidgen.worker_wait_timeout = '60s'\n");
start_node($node);
is($node->safe_psql('postgres', 'SHOW idgen.layout'), 'pgedge', "the document's settings are in force");

# IDs pgEdge's layout made, by id_make (in database postgres: idgen is not
# yet installed in app)
$node->safe_psql('postgres', 'CREATE EXTENSION idgen');
my $history = $node->safe_psql(
	'postgres', qq{
	SELECT string_agg(format('(%s, %L)', idgen.id_make(ts, node, g % 4096, 'pgedge'), 'history'), ', ')
	  FROM generate_series(1, 3000) g,
	       LATERAL (SELECT now() - interval '30 days' + g * interval '863 s' AS ts,
	                       (ARRAY[$node_id, 1, 2])[g % 3 + 1] AS node) x});

# Database $db as pgEdge's snowflake left it: table orders with the
# history, and the stand-in for snowflake.nextval() as its default
sub pgedge_database
{
	my ($db) = @_;
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql(
		$db, qq{
		CREATE SCHEMA snowflake;
		CREATE TABLE snowflake.state (ms bigint NOT NULL, seq int NOT NULL);
		CREATE TABLE snowflake.issued (id bigint PRIMARY KEY);
		-- pgEdge's snowflake.nextval(): milliseconds since 2023-01-01 UTC,
		-- node, count; the next millisecond when the count of one is used
		-- up, never below the last ID
		CREATE FUNCTION snowflake.nextval() RETURNS bigint LANGUAGE plpgsql AS \$\$
		DECLARE
		    now_ms bigint := floor(extract(epoch FROM clock_timestamp()
		                                   - timestamptz '2023-01-01 00:00+00') * 1000);
		    v_ms bigint;
		    v_seq int;
		    v_id bigint;
		BEGIN
		    SELECT s.ms, s.seq INTO v_ms, v_seq FROM snowflake.state s FOR UPDATE;
		    IF now_ms > v_ms THEN
		        v_ms := now_ms;
		        v_seq := 0;
		    ELSIF v_seq < 4095 THEN
		        v_seq := v_seq + 1;
		    ELSE
		        v_ms := v_ms + 1;
		        v_seq := 0;
		    END IF;
		    UPDATE snowflake.state SET ms = v_ms, seq = v_seq;
		    v_id := (v_ms << 22) | (${node_id}::bigint << 12) | v_seq;
		    INSERT INTO snowflake.issued VALUES (v_id);
		    RETURN v_id;
		END
		\$\$;
		-- pgEdge ran 3 s ahead of the clock after a burst
		INSERT INTO snowflake.state
		    SELECT floor(extract(epoch FROM clock_timestamp() + interval '3 s'
		                         - timestamptz '2023-01-01 00:00+00') * 1000), 4000;
		CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT snowflake.nextval(),
		                     note text NOT NULL);
		INSERT INTO orders (id, note) VALUES $history;
		INSERT INTO orders (note) SELECT 'before' FROM generate_series(1, 200);
		CREATE TABLE idgen_test_stop (stop boolean);
	});
	return;
}

# The recipe, as the document shows it, in $db while two sessions insert
# rows with the table's default, whatever it is; returns every ID the
# sessions received, a list per session
sub run_recipe
{
	my ($db) = @_;
	my @drawers = map {
		start_drawer($node,
			db => $db,
			name => "$db insert$_",
			sql => "INSERT INTO orders (note) VALUES ('load') RETURNING id;")
	} 1 .. 2;
	for my $d (@drawers)
	{
		cmp_ok(wait_drawn($d, 100), '>', 100, "$d->{name} inserts rows before the recipe");
	}

	my ($out, $err) = ('', '');
	IPC::Run::run(
		[
			'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d',
			$node->connstr($db), '-f', '-'
		],
		'<', \$recipe, '>', \$out, '2>', \$err);
	is($? >> 8, 0, "$db: the recipe's SQL block runs") or diag "stderr:\n$err\nstdout:\n$out";
	is( $node->safe_psql(
			$db,
			"SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef WHERE adrelid = 'orders'::regclass"
		),
		'idgen.snowflake_nextval()',
		"$db: the column draws snowflake IDs");

	# The sessions go on with the new default
	for my $d (@drawers)
	{
		my $n = drawn_count($d);
		cmp_ok(wait_drawn($d, $n + 200), '>', $n + 200, "$d->{name} inserts rows after the recipe");
	}
	$node->safe_psql($db, 'INSERT INTO idgen_test_stop VALUES (true)');
	my @drawn;
	for my $d (@drawers)
	{
		my ($ids, $derr, $end) = finish_drawer($d);
		is($end, 'stopped', "$d->{name} ran to the end");
		is($derr, '', "$d->{name} saw no error");
		is(first_disorder($ids), -1, "$d->{name} received increasing IDs throughout");
		push @drawn, $ids;
	}
	return @drawn;
}

# app: the block creates the extension (idgen.database is app, so the
# worker makes its first reservation there only then)
pgedge_database('app');
my %drawn;
$drawn{app} = [ run_recipe('app') ];

# app2: idgen installed and its generator serving before the recipe
pgedge_database('app2');
$node->safe_psql('app2', 'CREATE EXTENSION idgen');
cmp_ok($node->safe_psql('app2', 'SELECT idgen.snowflake_nextval()'), '>', 0,
	'app2: snowflake IDs are served before the recipe');
$drawn{app2} = [ run_recipe('app2') ];

# A clean restart, then more rows
$node->restart;
wait_ready($node);

# Old: the history and what the stand-in issued; new: all the rest
my $old = q{(note = 'history' OR id IN (SELECT id FROM snowflake.issued))};
for my $db ('app', 'app2')
{
	$node->safe_psql($db, "INSERT INTO orders (note) SELECT 'after restart' FROM generate_series(1, 500)");
	is( $node->safe_psql($db, qq{
		SELECT count(*) FILTER (WHERE $old AND note <> 'history') > 0,
		       count(*) FILTER (WHERE NOT $old) > 0
		  FROM orders}),
		't|t', "$db: rows were inserted both with pgEdge's default and with idgen's");
	is( $node->safe_psql(
			$db, qq{
		SELECT (SELECT min(id) FROM orders WHERE NOT $old)
		     > (SELECT max(id) FROM orders WHERE $old)}),
		't',
		"$db: every ID made after the recipe is above every ID made before it");
	is( $node->safe_psql(
			$db, qq{
		SELECT count(*) FROM orders o, idgen.id_decode(o.id, 'pgedge') d
		 WHERE NOT $old AND d.node_id <> $node_id}),
		'0',
		"$db: every new ID decodes to node $node_id under pgEdge's layout");
	is( $node->safe_psql(
			$db, q{
		SELECT count(*) FROM snowflake.issued i, idgen.id_decode(i.id, 'pgedge') d
		 WHERE idgen.id_make(d.ts, d.node_id, d.sequence, 'pgedge') <> i.id}),
		'0',
		"$db: the stand-in for pgEdge made IDs of the 'pgedge' layout");
	is($node->safe_psql($db, 'SELECT count(*) = count(DISTINCT id) FROM orders'),
		't', "$db: the table holds no duplicate");
	my $all = [ map { $_ + 0 } split /\n/,
		  $node->safe_psql($db, "SELECT id FROM orders WHERE note <> 'load'") ];
	my @dups = duplicates($all, @{ $drawn{$db} });
	is(scalar @dups, 0, "$db: no ID issued twice, counting every ID a session received");
}

$node->stop;
no_unexpected_errors($node);
done_testing();
