# TwoMasters.pm
#
# Two masters replicating to each other (pglogical: t/077, PostgreSQL's own
# logical replication with origin = none: t/078), each with snowflake
# defaults (node ids 1 and 2) and a segment tag whose range is disjoint
# from the other master's (docs/many-servers.md, "Several masters").
#
#   my ($m1, $m2) = make_masters(%opt)   two started nodes, tables made
#   load_both($m1, $m2)                  concurrent pgbench writers on both
#   check_converged($m1, $m2)            waits for both, asserts the outcome
package TwoMasters;

use strict;
use warnings;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

use Exporter 'import';
our @EXPORT = qw(make_masters dsn load_both check_converged
  $clients $per_client $tag_gap);

# 4 clients x 2,500 transactions on each master, each inserting one order
# (snowflake ID) and one invoice (segment ID)
our $clients = 4;
our $per_client = 2500;
# Master 2's invoice numbers start here; master 1's start at 1
our $tag_gap = 1_000_000_000_000;

my $tables = q{
	CREATE TABLE orders (
		id bigint PRIMARY KEY DEFAULT idgen.snowflake_nextval(),
		origin text NOT NULL,
		client int NOT NULL
	);
	CREATE TABLE invoices (
		id bigint PRIMARY KEY DEFAULT idgen.segment_nextval('invoice'),
		origin text NOT NULL
	);
};

# A libpq connection string to a node, as the other server reaches it
sub dsn
{
	my ($node) = @_;
	return 'host=' . $node->host . ' port=' . $node->port . ' dbname=postgres';
}

# Whether the server has output_plugin_libraries (the allow-list of logical
# decoding output plugins of PostgreSQL's 2026 minor releases); a server
# that does not know it refuses to start with it in postgresql.conf
sub has_output_plugin_libraries
{
	my ($node) = @_;
	my ($out, $err) = ('', '');
	IPC::Run::run([ $node->config_data('--bindir') . '/postgres', '--describe-config' ],
		'>', \$out, '2>', \$err)
	  or die "postgres --describe-config failed: $err";
	return $out =~ /^output_plugin_libraries\t/m ? 1 : 0;
}

# Two started masters, m1 and m2 (node ids 1 and 2), with idgen, the tables
# and the tag 'invoice' (m1 from 1, m2 from $tag_gap).
#   libraries => [ ... ] preloaded before idgen (pglogical),
#   conf => more postgresql.conf text, plugins => output plugin libraries
#   to allow where the server has output_plugin_libraries
sub make_masters
{
	my (%opt) = @_;
	my @nodes;
	my $allow;

	for my $i (1, 2)
	{
		my $n = idgen_node("m$i", node_id => $i, allows_streaming => 'logical',
			libraries => $opt{libraries} // [], conf => qq{
shared_buffers = 16MB
max_connections = 30
max_worker_processes = 16
max_replication_slots = 10
max_wal_senders = 10
track_commit_timestamp = on
} . ($opt{conf} // ''));
		$allow //= has_output_plugin_libraries($n);
		$n->append_conf('postgresql.conf',
			"output_plugin_libraries = '" . join(', ', @{ $opt{plugins} }) . "'\n")
		  if $allow && $opt{plugins};
		$n->start;
		my $start = $i == 1 ? 1 : $tag_gap;
		$n->safe_psql('postgres', "CREATE EXTENSION idgen; $tables"
			  . "SELECT idgen.segment_create('invoice', $start);");
		wait_ready($n);
		push @nodes, $n;
	}
	note 'output_plugin_libraries: '
	  . ($allow ? join(', ', @{ $opt{plugins} // [] }) : 'not a setting of this server');
	return @nodes;
}

# pgbench on both masters at once; returns when both are done
sub load_both
{
	my @masters = @_;
	my $dir = $PostgreSQL::Test::Utils::tmp_check;
	my @runs;

	for my $m (@masters)
	{
		my $name = $m->name;
		my $script = "$dir/load_$name.sql";
		open my $fh, '>', $script or die "$script: $!";
		print $fh qq{BEGIN;
INSERT INTO orders (origin, client) VALUES ('$name', :client_id);
INSERT INTO invoices (origin) VALUES ('$name');
END;
};
		close $fh;
		my ($out, $err) = ('', '');
		my $h = IPC::Run::start(
			[
				'pgbench', '-n', '-c', $clients, '-j', 2, '-t', $per_client,
				'-f', $script, '-h', $m->host, '-p', $m->port, 'postgres'
			],
			'>', \$out, '2>', \$err);
		push @runs, [ $m, $h, \$out, \$err ];
	}
	for my $r (@runs)
	{
		my ($m, $h, $out, $err) = @$r;
		ok($h->finish, $m->name . ": $clients pgbench clients x $per_client inserts finished")
		  or diag($$err);
		like($$out, qr/number of failed transactions: 0 /,
			$m->name . ': no failed transaction');
	}
	return;
}

# Both masters hold every row of both; identical sets, no duplicate key,
# each master's snowflake IDs carry its node id, its invoices its range
sub check_converged
{
	my ($m1, $m2) = @_;
	my $each = $clients * $per_client;
	my $all = 2 * $each;

	for my $m ($m1, $m2)
	{
		ok($m->poll_query_until('postgres',
				"SELECT (SELECT count(*) FROM orders) = $all AND (SELECT count(*) FROM invoices) = $all"),
			$m->name . ": holds all $all orders and $all invoices of both masters")
		  or diag($m->safe_psql('postgres',
			  'SELECT origin, count(*) FROM orders GROUP BY 1 ORDER BY 1'));
	}
	for my $table (qw(orders invoices))
	{
		my $q = qq{SELECT count(*), count(DISTINCT id), sum(id::numeric),
			md5(string_agg(id::text || ':' || origin, ',' ORDER BY id)) FROM $table};
		my $r1 = $m1->safe_psql('postgres', $q);
		is($m2->safe_psql('postgres', $q), $r1,
			"$table: the same rows on both masters (count, distinct, sum, checksum)");
		my ($n, $distinct) = split /\|/, $r1;
		is($distinct, $n, "$table: $n rows, no ID twice");
	}
	is($m1->safe_psql('postgres', q{
			SELECT count(*) FROM orders o, idgen.id_decode(o.id) d
			WHERE d.node_id <> substr(o.origin, 2)::int}),
		'0', "every order's ID carries the node id of the master that made it");
	is($m1->safe_psql('postgres', qq{
			SELECT count(*) FROM invoices
			WHERE (origin = 'm1') <> (id < $tag_gap)}),
		'0', "every invoice number is in the range of the master that made it");
	for my $m ($m1, $m2)
	{
		my $log = slurp_file($m->logfile);
		unlike($log, qr/duplicate key value violates unique constraint/,
			$m->name . ': no duplicate key error in the server log');
	}
	return;
}

1;
