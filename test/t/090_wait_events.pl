# 090_wait_events.pl
#	What idgen's waits show in pg_stat_activity (issue 11, point 4): on
#	PostgreSQL 17 and later named events of type "Extension" (IdgenClock,
#	IdgenReservation, IdgenSegment, made with WaitEventExtensionNew); before
#	17 the plain "Extension".
#
# A call waiting for the clock (the clock stepped back past idgen.max_lead,
# idgen.clock_wait_timeout long enough to wait it out), a call waiting for a
# segment (its row locked, so the worker cannot load it) and the idle idgen
# worker are each seen with their event.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use IdgenTest;

my $node = idgen_node('wait_events', faketime => 1, conf => q{
idgen.max_lead = '1s'
idgen.clock_wait_timeout = '60s'
idgen.segment_wait_timeout = '60s'
});
start_node($node);
$node->safe_psql('postgres', 'CREATE EXTENSION idgen');
$node->safe_psql('postgres', 'SELECT idgen.snowflake_nextval()');

my $named = $node->safe_psql('postgres', 'SHOW server_version_num') >= 170000;
sub event { return $named ? $_[0] : 'Extension' }
note $named ? 'named wait events (17 and later)' : 'plain "Extension" wait events (before 17)';

# The wait of the backend that $what picks, once it shows $event (or after
# the poll's timeout)
sub wait_of
{
	my ($what, $event) = @_;
	my $q = qq{SELECT wait_event_type || '/' || wait_event FROM pg_stat_activity
		WHERE $what AND pid <> pg_backend_pid()};
	$node->poll_query_until('postgres', "SELECT ($q) = 'Extension/$event'")
	  or diag 'last seen: ' . $node->safe_psql('postgres', $q);
	return $node->safe_psql('postgres', $q);
}

# The idle idgen worker
is(wait_of(q{backend_type = 'idgen worker'}, event('IdgenReservation')),
	'Extension/' . event('IdgenReservation'), 'the idle idgen worker waits on ' . event('IdgenReservation'));

# A call waiting for the clock: 6 s back, 1 s of lead allowed, so it waits
# about 5 s for the clock to come within reach
my $bg = $node->background_psql('postgres');
set_clock($node, '-6');
$bg->query_until(qr/started/, "\\echo started\nSELECT idgen.snowflake_nextval() AS after_clock;\n");
is(wait_of(q{query LIKE '%after_clock%'}, event('IdgenClock')),
	'Extension/' . event('IdgenClock'), 'a call waiting for the clock waits on ' . event('IdgenClock'));
set_clock($node, '+0');
like($bg->query_safe('SELECT 1'), qr/^\d+\n1$|^1$/, 'the call got its ID once the clock caught up');

# A call waiting for a segment that the worker cannot load (its row locked)
$node->safe_psql('postgres', q{SELECT idgen.segment_create('waited')});
my $locker = $node->background_psql('postgres');
$locker->query_safe('BEGIN');
$locker->query_safe(q{SELECT * FROM idgen.segment_alloc WHERE biz_tag = 'waited' FOR UPDATE});
$bg->query_until(qr/started/, "\\echo started\nSELECT idgen.segment_nextval('waited') AS after_segment;\n");
is(wait_of(q{query LIKE '%after_segment%'}, event('IdgenSegment')),
	'Extension/' . event('IdgenSegment'), 'a call waiting for a segment waits on ' . event('IdgenSegment'));
$locker->query_safe('COMMIT');
like($bg->query_safe('SELECT 2'), qr/^\d+\n2$|^2$/, 'the call got its ID once the row was free');
$locker->quit;
$bg->quit;

# 17 and later list the events in pg_wait_events once registered
if ($named)
{
	is($node->safe_psql('postgres', q{SELECT string_agg(name, ',' ORDER BY name)
		FROM pg_wait_events WHERE type = 'Extension' AND name LIKE 'Idgen%'}),
		'IdgenClock,IdgenReservation,IdgenSegment',
		'pg_wait_events lists the three events');
}

$node->stop;
done_testing();
