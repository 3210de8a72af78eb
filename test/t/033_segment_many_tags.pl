# 1,000 tags in use at once (idgen.segment_max_tags = 1000): one query
# touches every tag, then 4 pgbench clients draw from random tags.  Every
# tag is loaded, IDs are unique per tag and each tag's IDs stay within its
# own range; the 1,001st tag is refused until a tag is dropped, and
# dropping ten tags makes room for exactly ten others.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

my $node = idgen_node('segment_many', conf => qq{
idgen.segment_max_tags = 1000
idgen.segment_wait_timeout = '30s'
max_connections = 30
});
$node->start;

# Tag i starts at i * 10^9, so each tag's IDs have a range of their own
$node->safe_psql('postgres', q{
	CREATE EXTENSION idgen;
	SELECT count(idgen.segment_create('tag' || i, i * 1000000000::bigint, 20))
	  FROM generate_series(1, 1001) i;
	CREATE TABLE drawn (n bigserial, client int, tag int, id bigint);
});

# Every tag once, in one statement: each first call waits for its load
is($node->safe_psql('postgres', q{
	INSERT INTO drawn (client, tag, id)
	SELECT 0, i, idgen.segment_nextval('tag' || i) FROM generate_series(1, 1000) i;
	SELECT count(*) FROM drawn WHERE id = tag * 1000000000::bigint}),
	'1000', 'the first ID of each of 1,000 tags is its start');
is($node->safe_psql('postgres', q{
	SELECT count(*), count(*) FILTER (WHERE state = 'active') FROM idgen.segment_status}),
	'1000|1000', '1,000 tags active in shared memory');

# 4 clients, random tags
$node->pgbench(
	'-n -c 4 -j 2 -t 2500',
	0,
	[qr{processed: 10000/10000}],
	[qr{^$}],
	'4 clients draw from random tags among 1,000 without error',
	{
		'draw' => q{\set t random(1, 1000)
INSERT INTO drawn (client, tag, id) SELECT :client_id + 1, :t, idgen.segment_nextval('tag' || :t) FROM generate_series(1, 10);}
	});

is($node->safe_psql('postgres', 'SELECT count(*), count(DISTINCT id) FROM drawn'),
	'101000|101000', '101,000 IDs, all distinct');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM drawn
	 WHERE id < tag * 1000000000::bigint OR id >= (tag + 1) * 1000000000::bigint}),
	'0', 'every ID lies in its own tag\'s range');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM (
		SELECT id, lag(id) OVER (PARTITION BY client, tag ORDER BY n) AS prev FROM drawn) s
	WHERE id <= prev}),
	'0', 'per client and tag, IDs strictly increase');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM drawn d JOIN idgen.segment_alloc a ON a.biz_tag = 'tag' || d.tag
	 WHERE d.id > a.max_id}),
	'0', 'no ID beyond its tag\'s max_id');

# The 1,001st tag does not fit; dropping one makes room
my ($ret, $out, $err) = $node->psql('postgres',
	"\\set VERBOSITY verbose\nSELECT idgen.segment_nextval('tag1001')");
like($err,
	qr/ERROR:  53400: could not load segment tag "tag1001" into shared memory/,
	'tag 1,001: refused with SQLSTATE 53400');
like($err, qr/DETAIL:  All 1000 tag slots allowed by idgen.segment_max_tags hold tags that exist and have been drawn from since the server started./,
	'tag 1,001: the detail names the setting');
$node->safe_psql('postgres', q{SELECT idgen.segment_drop('tag1')});
is($node->safe_psql('postgres', q{SELECT idgen.segment_nextval('tag1001')}),
	'1001000000000', 'tag 1,001 loads once a tag was dropped');
# Full again: dropping ten tags makes room for ten others (and no more)
$node->safe_psql('postgres', q{
	SELECT count(idgen.segment_create('more' || i, (2000 + i) * 1000000000::bigint, 20))
	  FROM generate_series(1, 11) i});
($ret, $out, $err) = $node->psql('postgres',
	"\\set VERBOSITY verbose\nSELECT idgen.segment_nextval('more1')");
like($err, qr/ERROR:  53400: could not load segment tag "more1"/,
	'full again: a new tag is refused with SQLSTATE 53400');
$node->safe_psql('postgres',
	q{SELECT count(idgen.segment_drop('tag' || i)) FROM generate_series(2, 11) i});
is($node->safe_psql('postgres', q{
	SELECT count(*) FILTER (WHERE idgen.segment_nextval('more' || i) = (2000 + i) * 1000000000::bigint)
	  FROM generate_series(1, 10) i}),
	'10', 'ten dropped tags make room for ten new ones');
($ret, $out, $err) = $node->psql('postgres',
	"\\set VERBOSITY verbose\nSELECT idgen.segment_nextval('more11')");
like($err, qr/ERROR:  53400: could not load segment tag "more11"/,
	'the eleventh new tag is refused again');
is($node->safe_psql('postgres', 'SELECT count(*) FROM idgen.segment_status'),
	'1000', 'shared memory holds 1,000 tags');

$node->stop;
done_testing();
