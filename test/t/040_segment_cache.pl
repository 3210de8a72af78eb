# 040_segment_cache.pl
#	A segment tag's cache (issue 33, point 1): 4 pgbench clients draw one
#	tag with cache 50 and a step held at 120 (idgen.segment_max_step), so
#	segments switch often and cache runs are cut at their ends; then 40,000
#	more while one client changes the cache to 7, then 1, mid-run.  No ID is
#	handed out twice, each backend's IDs increase, each backend hands out
#	runs of consecutive IDs (at most 3 runs a segment, so few breaks), every
#	ID lies within the table's max_id, and once the backends have exited a
#	new one draws above every ID drawn before.  Then two backends step by
#	step: the exact IDs each gets, one below the other's, and the gaps left
#	when they exit.  Outcomes only, no timings.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

my $node = idgen_node('segment_cache', conf => qq{
idgen.segment_max_step = 120
idgen.segment_wait_timeout = '30s'
max_connections = 30
});
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION idgen;
	SELECT idgen.segment_create('cached', step => 120, cache => 50);
	CREATE TABLE drawn (n bigserial, phase int, backend int, id bigint);
	CREATE UNIQUE INDEX drawn_id ON drawn (id);
});
my $draw = q{INSERT INTO drawn (phase, backend, id) SELECT :phase, pg_backend_pid(), idgen.segment_nextval('cached') FROM generate_series(1, 20);};

# Phase 1: 4 clients x 250 transactions x 20 IDs = 20,000 with cache 50
$node->pgbench(
	'-n -c 4 -j 2 -t 250 -D phase=1',
	0,
	[qr{processed: 1000/1000}],
	[qr{^$}],
	'4 clients draw 20,000 IDs of a tag with cache 50 and step 120',
	{ 'draw' => $draw });

# A backend's IDs come in runs of consecutive IDs: each add takes up to 50
# IDs of a segment of 120 (the first add of a backend takes 1), so a
# segment is cut into at most 3 runs but for those first adds, and there are
# far fewer breaks than the one-add-per-ID bound of 20,000
my $breaks = q{
	SELECT count(*) FILTER (WHERE id <> prev + 1),
	       count(*) FILTER (WHERE id <= prev)
	  FROM (SELECT id, lag(id) OVER (PARTITION BY backend ORDER BY n) AS prev
	          FROM drawn WHERE phase = %d) s WHERE prev IS NOT NULL};
my ($jumps, $down) = split /\|/, $node->safe_psql('postgres', sprintf($breaks, 1));
is($down, '0', 'phase 1: each backend\'s IDs strictly increase');
cmp_ok($jumps, '<=', 20000 / 10,
	'phase 1: each backend hands out runs of consecutive IDs (cached)');
note "phase 1: $jumps breaks in 20,000 IDs";
# Phase 2: the same while the cache changes to 7, then off (1): client 0
# changes it in its 100th and 200th transactions (of 500), so it goes on
# drawing after each change, and so, most likely, do the others
my $max_phase1 = $node->safe_psql('postgres', 'SELECT max(id) FROM drawn');
$node->safe_psql('postgres', q{
	CREATE SEQUENCE client0_tx;
	CREATE TABLE alters (cache int, drawn_before bigint)});
$node->pgbench(
	'-n -c 4 -j 2 -t 500 -D phase=2',
	0,
	[qr{processed: 2000/2000}],
	[qr{^$}],
	'phase 2: 4 clients draw 40,000 IDs while the cache changes to 7, then 1',
	{
		'draw_and_alter' => $draw . q{
\if :client_id = 0
SELECT nextval('client0_tx') AS tx \gset
\if :tx = 100
INSERT INTO alters SELECT 7, count(*) FROM drawn WHERE phase = 2;
SELECT idgen.segment_alter('cached', cache => 7);
\elif :tx = 200
INSERT INTO alters SELECT 1, count(*) FROM drawn WHERE phase = 2;
SELECT idgen.segment_alter('cached', cache => 1);
\endif
\endif
}
	});
is($node->safe_psql('postgres', 'SELECT string_agg(cache::text, \',\' ORDER BY drawn_before) FROM alters'),
	'7,1', 'phase 2: the cache changed twice while client 0 drew');
note 'phase 2: IDs drawn by the changes: '
  . $node->safe_psql('postgres', 'SELECT string_agg(drawn_before::text, \' \' ORDER BY drawn_before) FROM alters');
is($node->safe_psql('postgres', 'SELECT cache FROM idgen.segment_alloc WHERE biz_tag = \'cached\''),
	'1', 'the table has the last cache set');
($jumps, $down) = split /\|/, $node->safe_psql('postgres', sprintf($breaks, 2));
is($down, '0', 'phase 2: each backend\'s IDs strictly increase across the changes');

is($node->safe_psql('postgres', 'SELECT count(*), count(DISTINCT id) FROM drawn'),
	'60000|60000', '60,000 IDs over both phases, all distinct');
is($node->safe_psql('postgres', q{
	SELECT min(d.id) >= 1 AND max(d.id) <= a.max_id
	  FROM drawn d, idgen.segment_alloc a WHERE a.biz_tag = 'cached' GROUP BY a.max_id}),
	't', 'every ID is within the allocated range');
cmp_ok($node->safe_psql('postgres', 'SELECT min(id) FROM drawn WHERE phase = 2'),
	'>', $max_phase1, 'phase 2 draws above every ID of phase 1 (its backends had exited)');

# The backends of phase 2 have exited: a new one draws above all of it,
# and with the cache back at 50 the IDs it draws are consecutive
$node->safe_psql('postgres', q{SELECT idgen.segment_alter('cached', cache => 50)});
my $max_all = $node->safe_psql('postgres', 'SELECT max(id) FROM drawn');
my @next = split /\n/, $node->safe_psql('postgres',
	q{SELECT idgen.segment_nextval('cached') FROM generate_series(1, 40)});
cmp_ok($next[0], '>', $max_all, 'a new backend draws above every ID drawn before');
is(scalar(grep { $next[$_] != $next[0] + $_ } 0 .. $#next), 0,
	'one backend alone draws consecutive IDs');

# Two backends, step by step (a fresh tag, cache 50, step 1000): a
# backend's first draw takes 1 ID, the next takes a run of 50; the other
# backend then draws above that run while the first still hands out IDs
# below it; when the first exits the rest of its run is a gap, and a new
# backend draws above everything
$node->safe_psql('postgres', q{SELECT idgen.segment_create('pair', step => 1000, cache => 50)});
my $a = $node->background_psql('postgres');
my $b = $node->background_psql('postgres');
my $next = q{SELECT idgen.segment_nextval('pair')};
my @seen = ($a->query_safe($next), $a->query_safe($next), $b->query_safe($next),
	$a->query_safe($next), $b->query_safe($next), $a->query_safe($next));
is(join(',', @seen), '1,2,52,3,53,4',
	'backend A takes 1, then 2..51; B takes 52, then 53..102; A goes on below B');
is($a->query_safe(q{SELECT idgen.segment_currval('pair')}), '4',
	'segment_currval is the last ID the session got');
$a->quit;
$b->quit;
is($node->safe_psql('postgres', $next), '103',
	'after both exit a new backend draws above both runs (5..51 and 54..102 are gaps)');

$node->stop;
done_testing();
