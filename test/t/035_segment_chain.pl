# The chain of segments (CosId's SegmentChainId).  With the step held at 100
# (idgen.segment_step_grow_after = 0), 4 pgbench clients draw 200,000 IDs
# from one tag, each transaction also noting the tag's chain_length and
# segments_ready from idgen.segment_status: no errors, no duplicates, each
# client's IDs strictly increase, the chain grew while the tag was hungry
# (chain_length > 1, several segments ready) and never beyond
# idgen.segment_chain_max, every segment has the tag's step, and once the
# load stops the chain shrinks, but not below the segments still ready.  After a
# restart the IDs continue above the old max_id, and the table's max_id is
# never behind an issued ID.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep);

my $node = PostgreSQL::Test::Cluster->new('segment_chain');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'idgen'
idgen.node_id = 1
idgen.database = 'postgres'
idgen.segment_step_grow_after = 0
idgen.segment_wait_timeout = '60s'
max_connections = 30
});
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION idgen;
	SELECT idgen.segment_create('small', step => 100);
	CREATE TABLE drawn (n bigserial, client int, id bigint);
	CREATE UNIQUE INDEX drawn_id ON drawn (id);
	CREATE TABLE seen (chain_length int, segments_ready int);
});

is($node->safe_psql('postgres', q{
	SELECT idgen.segment_nextval('small');
	SELECT chain_length, step FROM idgen.segment_status WHERE biz_tag = 'small'}),
	"1\n1|100", 'a new tag starts with a chain of 1 (Leaf\'s double buffer)');

# 4 clients x 1000 transactions x 50 IDs = 200,000 (with the first: 200,001)
$node->pgbench(
	'-n -c 4 -j 2 -t 1000',
	0,
	[qr{processed: 4000/4000}],
	[qr{^$}],
	'4 clients draw 200,000 segment IDs with the step held at 100 without error',
	{
		'draw' => q{
INSERT INTO drawn (client, id) SELECT :client_id, idgen.segment_nextval('small') FROM generate_series(1, 50);
INSERT INTO seen SELECT chain_length, segments_ready FROM idgen.segment_status WHERE biz_tag = 'small';
}
	});

is($node->safe_psql('postgres', 'SELECT count(*), count(DISTINCT id) FROM drawn'),
	'200000|200000', '200,000 IDs, all distinct');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM (
		SELECT id, lag(id) OVER (PARTITION BY client ORDER BY n) AS prev FROM drawn) s
	WHERE id <= prev}),
	'0', 'each client\'s IDs strictly increase');
my ($max_chain, $max_ready) = split /\|/, $node->safe_psql('postgres',
	'SELECT max(chain_length), max(segments_ready) FROM seen');
note "longest chain seen: $max_chain, most segments ready: $max_ready";
cmp_ok($max_chain, '>', 1, 'the chain grew while the tag was hungry');
cmp_ok($max_chain, '<=', 128, 'the chain stayed within idgen.segment_chain_max (128)');
cmp_ok($max_ready, '>', 1, 'several segments were ready ahead at once');

my ($step, $fetches, $max_id, $max_drawn) = split /\|/, $node->safe_psql('postgres', q{
	SELECT s.step, s.fetches, a.max_id, (SELECT max(id) FROM drawn)
	  FROM idgen.segment_status s JOIN idgen.segment_alloc a USING (biz_tag)
	 WHERE biz_tag = 'small'});
is($step, '100', 'the step stayed at 100');
is($max_id, $fetches * 100, 'max_id is 100 times the number of segments allocated');
cmp_ok($max_drawn, '<=', $max_id, 'max_id is not behind any issued ID');
is($node->safe_psql('postgres', q{
	SELECT step FROM idgen.segment_alloc WHERE biz_tag = 'small'}),
	'100', 'the table keeps the configured step');

# A pause (no allocation for a while): the chain halves, but never below
# the segments still ready, which the tag keeps; a chain shorter than them
# would be refilled only once they were nearly all used, and the first
# calls after the pause would wait (issue 25)
my ($chain, $ready);
for (1 .. 1200)
{
	($chain, $ready) = split /\|/, $node->safe_psql('postgres', q{
		SELECT chain_length, segments_ready FROM idgen.segment_status
		 WHERE biz_tag = 'small'});
	last if $chain == ($ready > 1 ? $ready : 1);
	sleep 0.25;
}
is($chain, ($ready > 1 ? $ready : 1),
	"after the load stops the chain shrinks to the segments still ready ($ready)");
sleep 6;
is($node->safe_psql('postgres', q{
	SELECT chain_length >= segments_ready AND chain_length >= 1
	  FROM idgen.segment_status WHERE biz_tag = 'small'}),
	't', 'a longer pause does not take the chain below the segments ready');

# idgen.segment_chain_max = 1: Leaf's double buffer only
$node->append_conf('postgresql.conf', 'idgen.segment_chain_max = 1');
$node->reload;
$node->poll_query_until('postgres', 'SHOW idgen.segment_chain_max', '1')
  or die 'idgen.segment_chain_max not reloaded';
$node->safe_psql('postgres', q{
	INSERT INTO drawn (client, id)
	SELECT 100 + g / 1000, idgen.segment_nextval('small') FROM generate_series(1, 20000) g;
	INSERT INTO seen SELECT chain_length, segments_ready FROM idgen.segment_status WHERE biz_tag = 'small';
});
is($node->safe_psql('postgres', q{
	SELECT chain_length, segments_ready <= 1 FROM idgen.segment_status WHERE biz_tag = 'small'}),
	'1|t', 'with idgen.segment_chain_max = 1 the chain stays at 1');

# Restart: the IDs continue above the old max_id
$max_id = $node->safe_psql('postgres', q{
	SELECT max_id FROM idgen.segment_alloc WHERE biz_tag = 'small'});
$node->restart;
$node->safe_psql('postgres', q{
	INSERT INTO drawn (client, id)
	SELECT 200, idgen.segment_nextval('small') FROM generate_series(1, 1000)});
is($node->safe_psql('postgres', qq{
	SELECT min(id) > $max_id, count(*) FROM drawn WHERE client = 200}),
	't|1000', 'after a restart the IDs continue above the old max_id');
is($node->safe_psql('postgres', q{
	SELECT count(*) = count(DISTINCT id)
	       AND max(id) <= (SELECT max_id FROM idgen.segment_alloc WHERE biz_tag = 'small')
	  FROM drawn}),
	't', 'all IDs distinct, and max_id is not behind any of them');

$node->stop;
done_testing();
