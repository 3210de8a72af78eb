# 083_leaf.pl
#	A tag moves from Leaf to idgen and back, twice, without an ID handed
#	out twice (issue 14, point 3).
#
# Leaf is simulated in a database of its own by its own allocation rule
# (SegmentIDGenImpl: UPDATE leaf_alloc SET max_id = max_id + step, then the
# segment [max_id - step, max_id)).  Leaf "servers" keep a partly used
# segment buffered when the tag moves away and hand out the rest of it
# afterwards, as a running Leaf server would.  idgen draws its IDs with
# segment_nextval across many segments (with the worker prefetching and a
# restart in between).  Every ID drawn on either side goes into one table
# with a primary key; the test checks that the first ID on each side is the
# one the other side's row says is next, and that no ID repeats.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

my $node = idgen_node('leaf', conf => qq{
idgen.segment_wait_timeout = '60s'
});
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION idgen;
	CREATE TABLE drawn (id bigint PRIMARY KEY, side text NOT NULL, n serial);
	CREATE DATABASE leaf;
});
# Leaf's table, as in its README
$node->safe_psql('leaf', q{
	CREATE TABLE leaf_alloc (biz_tag varchar(128) PRIMARY KEY,
		max_id bigint NOT NULL DEFAULT 1, step int NOT NULL,
		description varchar(256), update_time timestamp DEFAULT now());
	INSERT INTO leaf_alloc (biz_tag, max_id, step, description)
	VALUES ('order', 1, 100, 'orders');
});

# Leaf's updateMaxIdAndGetLeafAlloc: the next segment [first, last]
sub leaf_segment
{
	my $res = $node->safe_psql('leaf', q{
		UPDATE leaf_alloc SET max_id = max_id + step, update_time = now()
		WHERE biz_tag = 'order' RETURNING max_id - step, max_id - 1});
	return split /\|/, $res;
}

# Record IDs drawn (a duplicate fails the INSERT)
sub record_ids
{
	my ($side, @ids) = @_;
	return unless @ids;
	my ($ret, $out, $err) = try_sql($node,
		"INSERT INTO drawn (id, side) SELECT unnest('{" . join(',', @ids)
		  . "}'::bigint[]), '$side'");
	is($ret, 0, "$side: " . scalar(@ids) . ' IDs recorded, none seen before')
	  or diag($err);
	return;
}

# Leaf hands out IDs: whole segments, then part of one it keeps buffered
# (returns the buffered rest)
sub leaf_draws
{
	my ($segments, $label) = @_;
	my @ids;
	for (1 .. $segments)
	{
		my ($first, $last) = leaf_segment();
		push @ids, $first .. $last;
	}
	my ($first, $last) = leaf_segment();
	my $used = int(($last - $first + 1) * 0.3);
	push @ids, $first .. $first + $used - 1;
	record_ids("Leaf $label", @ids);
	return ($first + $used .. $last);
}

# idgen hands out n IDs of the tag
sub idgen_draws
{
	my ($n, $label) = @_;
	my $res = $node->safe_psql('postgres',
		"SELECT string_agg(idgen.segment_nextval('order')::text, ',' ORDER BY g)
		   FROM generate_series(1, $n) g");
	my @ids = split /,/, $res;
	record_ids("idgen $label", @ids);
	return @ids;
}

# Take the row out of Leaf (so Leaf allocates no more) and into idgen
sub leaf_to_idgen
{
	my $row = $node->safe_psql('leaf',
		"DELETE FROM leaf_alloc WHERE biz_tag = 'order' RETURNING max_id, step, description");
	my ($max, $step, $descr) = split /\|/, $row;
	$node->safe_psql('postgres',
		"SELECT idgen.segment_import_leaf('order', $max, $step, '$descr')");
	return $max;
}

# Take the tag out of idgen and put its row into Leaf
sub idgen_to_leaf
{
	my $row = $node->safe_psql('postgres',
		"SELECT max_id, step, description FROM idgen.segment_export_leaf('order')");
	my ($max, $step, $descr) = split /\|/, $row;
	$node->safe_psql('leaf',
		"INSERT INTO leaf_alloc (biz_tag, max_id, step, description)
		 VALUES ('order', $max, $step, '$descr')");
	return $max;
}

# Round 1: Leaf, then idgen
my @buffered = leaf_draws(3, 'round 1');
my $leaf_next = leaf_to_idgen();
my @ids = idgen_draws(2500, 'round 1');
is($ids[0], $leaf_next, "idgen's first ID is Leaf's next unused ID ($leaf_next)");
# the Leaf server still hands out what it had buffered
record_ids('Leaf buffer after the move', @buffered);

$node->restart;
idgen_draws(700, 'after restart');

# Back to Leaf
my $idgen_next = idgen_to_leaf();
my ($ret) = try_sql($node, "SELECT idgen.segment_nextval('order')");
isnt($ret, 0, 'idgen hands out no more IDs of the exported tag');
my ($first) = leaf_segment();
is($first, $idgen_next, "Leaf's first ID after the move is the exported max_id ($idgen_next)");
cmp_ok($first, '>',
	$node->safe_psql('postgres', "SELECT max(id) FROM drawn WHERE side LIKE 'idgen%'"),
	'above every ID idgen handed out');
record_ids('Leaf round 2 first', $first);
@buffered = leaf_draws(2, 'round 2');

# Round 2: to idgen again (the tag's tombstone is below Leaf's row)
$leaf_next = leaf_to_idgen();
@ids = idgen_draws(1500, 'round 2');
is($ids[0], $leaf_next, "idgen's first ID in round 2 is Leaf's next unused ID ($leaf_next)");
record_ids('Leaf buffer after the second move', @buffered);

# A stale Leaf row (an old max_id) is refused, not re-issued
my ($r, $out, $err) = try_sql($node,
	"SELECT idgen.segment_import_leaf('order', $idgen_next, 100)");
like($err, qr/cannot import Leaf max_id $idgen_next of segment tag "order"/,
	'importing a stale row over the tag is refused');

is( $node->safe_psql('postgres',
		'SELECT count(*) = count(DISTINCT id) AND count(*) > 5000 FROM drawn'),
	't', 'every ID drawn on either side is distinct');

$node->stop;
done_testing();
