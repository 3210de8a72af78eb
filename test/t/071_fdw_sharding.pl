# Sharding with postgres_fdw, as in the README: a coordinator's table is
# partitioned by LIST ((id % 4)); its four partitions are foreign tables on
# two other servers.  Rows are inserted through the coordinator with gene IDs
# of their username, so a lookup by username alone names its partition.
# Asserts: each row is stored on the shard its username's gene names, the
# rows spread over all four partitions, the lookup is pruned to one foreign
# scan at plan time (and, prepared, at executor start-up), and it still
# answers with the other shard server stopped, while a query that needs all
# partitions fails.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

# Two shard servers, plain PostgreSQL: a holds partitions 0 and 1, b 2 and 3
my %shard;
for my $name ('shard_a', 'shard_b')
{
	my $n = idgen_node($name, preload => 0, conf => "shared_buffers = 16MB\n");
	$n->start;
	$shard{$name} = $n;
}
my %home = (0 => 'shard_a', 1 => 'shard_a', 2 => 'shard_b', 3 => 'shard_b');
for my $p (sort keys %home)
{
	$shard{ $home{$p} }->safe_psql('postgres', qq{
		CREATE TABLE users_$p (id bigint PRIMARY KEY, username text NOT NULL, email text);
		CREATE INDEX ON users_$p (username);
	});
}

# The coordinator generates the IDs
my $coord = idgen_node('coord', node_id => 7, conf => "shared_buffers = 16MB\n");
$coord->start;
my $ddl = q{
	CREATE EXTENSION idgen;
	CREATE EXTENSION postgres_fdw;
	CREATE TABLE users (
		id bigint NOT NULL,
		username text NOT NULL,
		email text
	) PARTITION BY LIST ((id % 4));
};
for my $name (sort keys %shard)
{
	my ($host, $port) = ($shard{$name}->host, $shard{$name}->port);
	$ddl .= qq{
	CREATE SERVER $name FOREIGN DATA WRAPPER postgres_fdw
		OPTIONS (host '$host', port '$port', dbname 'postgres');
	CREATE USER MAPPING FOR CURRENT_USER SERVER $name;
	};
}
for my $p (sort keys %home)
{
	$ddl .= qq{
	CREATE FOREIGN TABLE users_$p PARTITION OF users FOR VALUES IN ($p)
		SERVER $home{$p} OPTIONS (table_name 'users_$p');
	};
}
$coord->safe_psql('postgres', $ddl);

# Insert through the coordinator: the ID carries the username's gene
$coord->safe_psql('postgres', q{
	INSERT INTO users (id, username, email)
	SELECT idgen.gene_id(u, 2), u, u || '@example.com'
	FROM (SELECT 'user' || g AS u FROM generate_series(1, 2000) g) s;
	INSERT INTO users (id, username) VALUES (idgen.gene_id('alice', 2), 'alice');
});
is($coord->safe_psql('postgres', 'SELECT count(*) FROM users'),
	'2001', 'coordinator sees all 2001 rows');

# Each shard holds exactly the rows whose username's gene names its
# partitions, and all four partitions got a fair share
my $total = 0;
for my $p (sort keys %home)
{
	my ($rows, $wrong) = split /\|/, $shard{ $home{$p} }->safe_psql('postgres', qq{
		SELECT count(*), count(*) FILTER (WHERE id % 4 <> $p) FROM users_$p});
	is($wrong, '0', "$home{$p}.users_$p holds only IDs with id % 4 = $p");
	cmp_ok($rows, '>', 300, "partition $p got $rows of 2001 rows");
	$total += $rows;
}
is($total, 2001, 'the shards together hold every row once');
is($coord->safe_psql('postgres', q{
	SELECT count(*) FROM users WHERE id % 4 <> idgen.gene_of(username, 2) % 4}),
	'0', 'every row is in the partition of its username\'s gene');

# Lookup by username: pruned to one partition at plan time
my $gene = $coord->safe_psql('postgres', q{SELECT idgen.gene_of('alice', 2) % 4});
my $alice_home = $home{$gene};
my $lookup = q{SELECT username FROM users
	WHERE username = 'alice' AND id % 4 = idgen.gene_of('alice', 2) % 4};
my $plan = $coord->safe_psql('postgres', "EXPLAIN (VERBOSE, COSTS OFF) $lookup");
my @scans = ($plan =~ /Foreign Scan/g);
is(scalar @scans, 1, 'plan of the lookup has one foreign scan')
  or diag($plan);
like($plan, qr/Foreign Scan on public\.users_$gene\b/,
	"and it scans users_$gene, the partition of alice's gene")
  or diag($plan);
unlike($plan, qr/Subplans Removed/, 'pruned at plan time, not at run time');
is($coord->safe_psql('postgres', $lookup), 'alice', 'lookup finds alice');

# A prepared lookup with the username as a parameter: the generic plan is
# pruned when the executor starts
my $prepared = $coord->safe_psql('postgres', q{
	SET plan_cache_mode = force_generic_plan;
	PREPARE by_name(text) AS SELECT username FROM users
		WHERE username = $1 AND id % 4 = idgen.gene_of($1, 2) % 4;
	EXPLAIN (COSTS OFF) EXECUTE by_name('alice');
});
like($prepared, qr/Subplans Removed: 3/,
	'prepared lookup prunes three of four partitions at start-up')
  or diag($prepared);

# The lookup reaches one server only: stop the other and it still answers
my ($other) = grep { $_ ne $alice_home } sort keys %shard;
$shard{$other}->stop;
is($coord->safe_psql('postgres', $lookup), 'alice',
	"lookup still finds alice with $other stopped");
my ($ret, $out, $err) = $coord->psql('postgres',
	q{SELECT count(*) FROM users WHERE username = 'alice'});
isnt($ret, 0, 'a lookup without the gene needs every shard and fails');
like($err, qr/could not connect to server "$other"/, 'naming the stopped server');

$coord->stop;
$shard{$alice_home}->stop;
done_testing();
