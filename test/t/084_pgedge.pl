# 084_pgedge.pl
#	idgen's 'pgedge' preset reads and makes the IDs of pgEdge's snowflake
#	extension bit for bit (issue 21, point 5), checked against pgEdge's own
#	code in the same server.
#
# pgEdge's extension is in no Debian release and its source is never part
# of this repository: test/run.sh builds and installs it from PGEDGE_SRC (a
# checkout of github.com/pgEdge/snowflake) before the TAP tests.  Where it
# is not installed, the test is skipped and says why.
#
# Asserts, for IDs pgEdge's snowflake.nextval() made on node 5 and for
# random bigints decoded by pgEdge's get_epoch, get_node and get_count:
#  - idgen.id_decode(id, 'pgedge') gives the same time, node and sequence;
#  - idgen.id_make(that time, node, sequence, 'pgedge') gives the ID back;
#  - with idgen.layout = 'pgedge' and the same node id, after
#    snowflake_advance(the largest), snowflake_nextval() continues above
#    every ID pgEdge made.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

my $node = idgen_node('pgedge', conf => q{
idgen.layout = 'pgedge'
idgen.node_id = 5
snowflake.node = 5
});
$node->start;
my $have = $node->safe_psql('postgres',
	q{SELECT count(*) FROM pg_available_extensions WHERE name = 'snowflake'});
if ($have ne '1')
{
	$node->stop;
	plan skip_all =>
	  "pgEdge's snowflake extension is not installed (test/run.sh builds it when PGEDGE_SRC names a checkout of github.com/pgEdge/snowflake); the pgEdge cross-check is skipped";
}
$node->safe_psql('postgres', 'CREATE EXTENSION idgen; CREATE EXTENSION snowflake');
wait_ready($node);

# IDs made by pgEdge's own generator, and random bigints
$node->safe_psql('postgres', q{
	CREATE TABLE made AS SELECT snowflake.nextval() AS id FROM generate_series(1, 20000);
	CREATE TABLE random AS
		SELECT (random() * 9223372036854775807)::bigint AS id FROM generate_series(1, 20000);
	CREATE VIEW both_ AS
		SELECT id, to_timestamp(snowflake.get_epoch(id)) AS p_ts,
		       snowflake.get_node(id) AS p_node, snowflake.get_count(id) AS p_seq,
		       (idgen.id_decode(id, 'pgedge')).*
		FROM (SELECT id FROM made UNION ALL SELECT id FROM random) s});
is($node->safe_psql('postgres', q{SELECT count(DISTINCT id) FROM made}), '20000',
	'pgEdge made 20,000 distinct IDs');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM both_
	WHERE ts IS DISTINCT FROM p_ts OR node_id IS DISTINCT FROM p_node
	   OR sequence IS DISTINCT FROM p_seq}),
	'0', "id_decode(id, 'pgedge') agrees with pgEdge's get_epoch, get_node, get_count on 40,000 IDs");
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM both_
	WHERE idgen.id_make(p_ts, p_node, p_seq, 'pgedge') <> id}),
	'0', "id_make(time, node, sequence, 'pgedge') of pgEdge's fields gives every ID back");
is($node->safe_psql('postgres', q{SELECT count(DISTINCT p_node) FROM both_ WHERE id IN (SELECT id FROM made)}),
	'1', 'pgEdge made every ID on one node');
is($node->safe_psql('postgres', q{SELECT min(p_node) FROM both_ WHERE id IN (SELECT id FROM made)}),
	'5', 'node 5, snowflake.node');

# idgen with pgEdge's layout and node id continues above pgEdge's IDs once
# advanced past them, as docs/coming-from.md's recipe does
my $pmax = $node->safe_psql('postgres', 'SELECT max(id) FROM made');
$node->safe_psql('postgres', "SELECT idgen.snowflake_advance($pmax)");
my $ours = draw_ids($node, 20000);
cmp_ok(min_of(@$ours), '>', $pmax,
	"with idgen.layout = 'pgedge' and the same node id, idgen's IDs are above pgEdge's");
is($node->safe_psql('postgres', qq{
	SELECT count(*) FROM made WHERE id IN (@{[ join(',', @$ours) ]})}),
	'0', 'and none equals one of them');

$node->stop;
done_testing();
