# Leaf's dynamic step, with the durations shortened for the test
# (idgen.segment_step_grow_after = 1s, idgen.segment_step_shrink_after = 3s)
# and idgen.segment_max_step = 1000: segments used up quickly double the
# step up to the maximum; a segment that lasts between the two durations
# keeps it; each one that lasts longer halves it, never below the tag's
# step (100).
#
# advance() uses up the current segment and draws one ID from the next; the
# next was allocated while the current one was used (at 10%), so the new
# current step tells how the allocation judged the time since the previous
# one.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep);

my $node = PostgreSQL::Test::Cluster->new('segment_step');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'idgen'
idgen.node_id = 1
idgen.database = 'postgres'
idgen.segment_step_grow_after = '1s'
idgen.segment_step_shrink_after = '3s'
idgen.segment_max_step = 1000
});
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION idgen;
	SELECT idgen.segment_create('d', step => 100);
	CREATE TABLE drawn (n bigserial, id bigint);
});

# Step of the current segment
sub cur_step
{
	return $node->safe_psql('postgres',
		q{SELECT cur_step FROM idgen.segment_status WHERE biz_tag = 'd'});
}

# Use up the current segment, draw one ID of the next; returns its step
sub advance
{
	$node->safe_psql('postgres', q{
		INSERT INTO drawn (id)
		SELECT idgen.segment_nextval('d') FROM generate_series(1,
			(SELECT cur_max - cur_value + 2 FROM idgen.segment_status WHERE biz_tag = 'd'))});
	return cur_step();
}

$node->safe_psql('postgres', q{INSERT INTO drawn (id) VALUES (idgen.segment_nextval('d'))});
my @steps = (cur_step());
push @steps, advance() for 1 .. 5;
is(join(',', @steps), '100,200,400,800,1000,1000',
	'fast use: the step doubles up to idgen.segment_max_step');

sleep 2;
is(advance(), '1000', 'a segment that lasted between 1s and 3s keeps the step');

my @halves;
for (1 .. 5)
{
	sleep 3.5;
	push @halves, advance();
}
is(join(',', @halves), '500,250,125,100,100',
	'idle use: the step halves, never below the tag\'s step');

# Fast again: it grows again
is(join(',', map { advance() } 1 .. 2), '200,400', 'fast use again: it doubles again');

# Every ID was handed out once, in order, with no gap in between
is($node->safe_psql('postgres', q{
	SELECT count(*) = count(DISTINCT id) AND min(id) = 1 AND max(id) = count(*)
	  FROM drawn}),
	't', 'the IDs are 1..N without a gap');
is($node->safe_psql('postgres', q{
	SELECT step FROM idgen.segment_alloc WHERE biz_tag = 'd'}),
	'100', 'the table keeps the configured step');

$node->stop;
done_testing();
