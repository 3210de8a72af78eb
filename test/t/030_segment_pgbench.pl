# 8 pgbench clients draw 500,000 segment IDs from one tag whose step stays
# at 10 (idgen.segment_max_step = 10), so the current segment runs out every
# 10 IDs and the worker makes about 50,000 allocations: no errors, no
# duplicates, each client's IDs strictly increase, and every ID lies within
# the table's max_id.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

my $node = idgen_node('segment_pgbench', conf => qq{
idgen.segment_max_step = 10
idgen.segment_wait_timeout = '30s'
max_connections = 30
});
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION idgen;
	SELECT idgen.segment_create('bench', step => 10);
	CREATE TABLE drawn (n bigserial, client int, id bigint);
	CREATE UNIQUE INDEX drawn_id ON drawn (id);
});

# 8 clients x 1250 transactions x 50 IDs = 500,000
$node->pgbench(
	'-n -c 8 -j 4 -t 1250',
	0,
	[qr{processed: 10000/10000}],
	[qr{^$}],
	'8 clients draw 500,000 segment IDs with step 10 without error',
	{
		'draw' => q{INSERT INTO drawn (client, id) SELECT :client_id, idgen.segment_nextval('bench') FROM generate_series(1, 50);}
	});

is($node->safe_psql('postgres', 'SELECT count(*), count(DISTINCT id) FROM drawn'),
	'500000|500000', '500,000 IDs, all distinct');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM (
		SELECT id, lag(id) OVER (PARTITION BY client ORDER BY n) AS prev FROM drawn) s
	WHERE id <= prev}),
	'0', 'each client\'s IDs strictly increase');
is($node->safe_psql('postgres', q{
	SELECT min(d.id) >= 1 AND max(d.id) <= a.max_id
	  FROM drawn d, idgen.segment_alloc a WHERE a.biz_tag = 'bench' GROUP BY a.max_id}),
	't', 'every ID is within the allocated range');
is($node->safe_psql('postgres', q{
	SELECT step FROM idgen.segment_alloc WHERE biz_tag = 'bench'}),
	'10', 'the table keeps the configured step');

# Every allocation was of 10 IDs, and there were at least 50,000 of them
my ($step, $fetches, $max_id) = split /\|/, $node->safe_psql('postgres', q{
	SELECT s.step, s.fetches, a.max_id
	  FROM idgen.segment_status s JOIN idgen.segment_alloc a USING (biz_tag)
	 WHERE biz_tag = 'bench'});
is($step, '10', 'the dynamic step stayed at idgen.segment_max_step');
cmp_ok($fetches, '>=', 50000, 'at least 50,000 allocations');
is($max_id, $fetches * 10, 'max_id is 10 times the number of allocations');
note "allocations: $fetches, max_id: $max_id";

$node->stop;
done_testing();
