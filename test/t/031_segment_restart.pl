# Segment IDs are never reused: not after a rollback, not after an
# immediate shutdown (a crash), not after a standby is promoted.  A standby
# refuses to draw, and without shared_preload_libraries every segment
# function refuses.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

my $node = idgen_node('segment_restart', allows_streaming => 1, conf => qq{
# calls wait for the worker after each start: only a hang may fail them
idgen.segment_wait_timeout = '60s'
});
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION idgen;
	SELECT idgen.segment_create('r', step => 100);
	CREATE TABLE kept (id bigint PRIMARY KEY);
});

# IDs drawn and committed, then IDs drawn in transactions that roll back
$node->safe_psql('postgres',
	q{INSERT INTO kept SELECT idgen.segment_nextval('r') FROM generate_series(1, 5000)});
my @rolled_back = split /\n/, $node->safe_psql('postgres', q{
	BEGIN;
	INSERT INTO kept SELECT idgen.segment_nextval('r') FROM generate_series(1, 3000)
	RETURNING id;
	ROLLBACK;
});
is(scalar(@rolled_back), 3000, '3000 IDs drawn in a transaction that rolled back');
is($node->safe_psql('postgres', 'SELECT count(*) FROM kept'), '5000',
	'the rolled-back rows are gone');
my @after_rollback = split /\n/, $node->safe_psql('postgres',
	q{SELECT idgen.segment_nextval('r') FROM generate_series(1, 10)});
cmp_ok($after_rollback[0], '>', max_of(@rolled_back),
	'after ROLLBACK the next ID is above the rolled-back ones');

# More IDs in an open transaction while the server stops immediately
my $session = $node->background_psql('postgres');
$session->query_safe('BEGIN');
my @in_flight = split /\n/, $session->query_safe(
	q{SELECT idgen.segment_nextval('r') FROM generate_series(1, 2000)});
is(scalar(@in_flight), 2000, '2000 IDs drawn in a transaction left open');
my $before_max = max_of(@rolled_back, @after_rollback, @in_flight,
	split(/\n/, $node->safe_psql('postgres', 'SELECT id FROM kept')));

$node->stop('immediate');
eval { $session->quit; };
$node->start;

my @after_crash = split /\n/, $node->safe_psql('postgres',
	q{SELECT idgen.segment_nextval('r') FROM generate_series(1, 1000)});
is(scalar(@after_crash), 1000, '1000 IDs drawn after the immediate shutdown');
cmp_ok(min_of(@after_crash), '>', $before_max,
	'every ID after the crash is above every ID drawn before it');
is($node->safe_psql('postgres', 'SELECT count(*) FROM kept'), '5000',
	'committed rows survived; the open transaction did not');

# A streaming standby: the table is replicated, drawing is refused
my $standby = idgen_standby($node, 'segment_standby');
$standby->start;
$node->safe_psql('postgres',
	q{INSERT INTO kept SELECT idgen.segment_nextval('r') FROM generate_series(1, 500)});
$node->wait_for_catchup($standby);

my ($ret, $out, $err) = $standby->psql('postgres',
	"\\set VERBOSITY verbose\nSELECT idgen.segment_nextval('r')");
like($err, qr/ERROR:  25006: cannot draw segment IDs during recovery/,
	'standby: drawing is refused with SQLSTATE 25006');
is($standby->safe_psql('postgres', 'SELECT count(*) FROM idgen.segment_status'),
	'0', 'standby: no tag in shared memory');
is($standby->safe_psql('postgres',
	q{SELECT max_id >= (SELECT max(id) FROM kept) FROM idgen.segment_alloc WHERE biz_tag = 'r'}),
	't', 'standby: the replicated max_id covers every committed ID');

# Promotion: the new primary draws above everything the old one handed out
my $primary_max = max_of($before_max, @after_crash,
	split(/\n/, $node->safe_psql('postgres', 'SELECT max(id) FROM kept')));
$node->stop;
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'standby did not leave recovery';
my @promoted = split /\n/, $standby->safe_psql('postgres',
	q{SELECT idgen.segment_nextval('r') FROM generate_series(1, 100)});
is(scalar(@promoted), 100, 'promoted standby draws IDs');
cmp_ok(min_of(@promoted), '>', $primary_max,
	'promoted standby starts above every ID of the old primary');
$standby->stop;

# Not preloaded: every segment function refuses
my $plain = idgen_node('segment_plain', preload => 0);
$plain->start;
$plain->safe_psql('postgres', 'CREATE EXTENSION idgen');
for my $call (q{idgen.segment_nextval('r')}, q{idgen.segment_create('r')},
	q{idgen.segment_alter('r', step => 5)}, q{idgen.segment_drop('r')},
	'* FROM idgen.segment_status')
{
	($ret, $out, $err) = $plain->psql('postgres',
		"\\set VERBOSITY verbose\nSELECT $call");
	like($err,
		qr/ERROR:  55000: idgen must be loaded via "shared_preload_libraries"/,
		"$call without preload");
}
$plain->stop;

done_testing();
