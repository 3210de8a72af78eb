# 8 pgbench clients draw 1,000,000 snowflake IDs into a table with a unique
# index: no duplicates, and each client's IDs strictly increase.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

my $node = idgen_node('pgbench', node_id => 12, conf => "max_connections = 30\n");
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION idgen;
	CREATE TABLE drawn (n bigserial, client int, id bigint);
	CREATE UNIQUE INDEX drawn_id ON drawn (id);
});

# 8 clients x 1250 transactions x 100 IDs = 1,000,000
$node->pgbench(
	'-n -c 8 -j 4 -t 1250',
	0,
	[qr{processed: 10000/10000}],
	[qr{^$}],
	'8 clients draw 1,000,000 IDs without error',
	{
		'draw' => q{INSERT INTO drawn (client, id) SELECT :client_id, idgen.snowflake_nextval() FROM generate_series(1, 100);}
	});

is($node->safe_psql('postgres', 'SELECT count(*), count(DISTINCT id) FROM drawn'),
	'1000000|1000000', '1,000,000 IDs, all distinct');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM (
		SELECT id, lag(id) OVER (PARTITION BY client ORDER BY n) AS prev FROM drawn) s
	WHERE id <= prev}),
	'0', 'each client\'s IDs strictly increase');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM drawn d, LATERAL idgen.id_decode(d.id) x WHERE x.node_id <> 12}),
	'0', 'every ID carries the node id');
is($node->safe_psql('postgres', 'SELECT issued >= 1000000 FROM idgen.snowflake_status()'),
	't', 'status counted every ID');

$node->stop;
done_testing();
