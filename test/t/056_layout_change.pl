# 056_layout_change.pl
#	A change of idgen.layout or idgen.node_id never silently makes IDs
#	smaller (issue 10, point 2).
#
# The server issues IDs under the default layout, then restarts under a
# 1-second layout (whose IDs are far smaller): snowflake IDs and gene IDs
# are refused with SQLSTATE 55000 and a message naming both layouts and the
# way out (adopt_column too), until a superuser accepts the change with
# idgen.snowflake_accept_layout() (a plain role may not).  The acceptance is
# recorded: a later restart under the same layout issues IDs.  A change under
# which every new ID is provably larger (a preset with an earlier epoch, or
# another node id under the same layout) is accepted without a word from
# anyone, and its IDs are above the old ones.  With the idgen worker stopped
# (SIGSTOP), accepting a change and snowflake_advance past the reservation
# fail with 55000 after idgen.worker_wait_timeout, and take effect once the
# worker runs again.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

my $node = idgen_node('layout', node_id => 3);
start_node($node);
$node->safe_psql('postgres', 'CREATE EXTENSION idgen; CREATE ROLE plain LOGIN;');
wait_ready($node);
my $old = draw_ids($node, 10000);
my $old_max = max_of(@$old);

# Restart under a layout with a 1-second tick: its IDs would be smaller
my $slow = 'ts=41,node=10,seq=12,unit=1s,epoch=2024-01-01';
$node->append_conf('postgresql.conf', "idgen.layout = '$slow'\n");
$node->restart;
for my $call ('idgen.snowflake_nextval()', "idgen.gene_id('alice', 2)")
{
	my ($ret, $out, $err) = try_sql($node, "SELECT $call");
	isnt($ret, 0, "$call is refused after the layout changed");
	like($err,
		qr/ERROR:  55000: snowflake IDs are refused because idgen.layout or idgen.node_id changed: was layout "idgen" with node id 3, is layout "\Q$slow\E" with node id 3/,
		"$call: the error names the old and the new layout");
	like($err, qr/HINT:  Set idgen.layout and idgen.node_id back .* SELECT idgen.snowflake_accept_layout\(\);/,
		"$call: the hint says how to proceed");
}
like(slurp_file($node->logfile),
	qr/idgen: snowflake IDs are refused: idgen.layout or idgen.node_id changed/,
	'the server log says so at start');

# Adopting a column (whose largest value it would advance past) never
# accepts the change: 55000, and the column keeps its old default
$node->safe_psql('postgres',
	'CREATE TABLE adopted (id bigserial PRIMARY KEY); INSERT INTO adopted DEFAULT VALUES');
{
	my ($ret, $out, $err) = try_sql($node,
		q{SELECT idgen.adopt_column('adopted', 'id', 'snowflake')});
	like($err, qr/ERROR:  55000: snowflake IDs are refused because idgen.layout or idgen.node_id changed\n.*DETAIL:  Adopting a column never accepts the change/,
		'adopt_column while the change is not accepted: 55000, and it is not accepted');
	like($node->safe_psql('postgres', q{SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef WHERE adrelid = 'adopted'::regclass}),
		qr/^nextval/, 'the column keeps its sequence');
}

# Only a superuser may accept
my ($ret, $out, $err) = $node->psql('postgres',
	'SELECT idgen.snowflake_accept_layout()',
	extra_params => [ '-U', 'plain', '-v', 'VERBOSITY=verbose' ]);
like($err, qr/ERROR:  42501: permission denied for function snowflake_accept_layout/,
	'a plain role cannot accept the change');
is($node->safe_psql('postgres', 'SELECT idgen.snowflake_accept_layout()'),
	't', 'a superuser accepts it');
my $new = draw_ids($node, 1000);
is(first_disorder($new), -1, 'IDs under the accepted layout increase');
cmp_ok(max_of(@$new), '<', $old_max,
	'they are smaller than the old ones, as the superuser accepted');
is($node->safe_psql('postgres', 'SELECT idgen.snowflake_accept_layout()'),
	'f', 'nothing is left to accept');

# The acceptance is durable: a restart under the same layout issues IDs
$node->restart;
my $after = draw_ids($node, 1000);
cmp_ok(min_of(@$after), '>', max_of(@$new),
	'after a restart, IDs continue above those of the accepted layout');

# Back to the default layout: its IDs are far larger, accepted at once
$node->adjust_conf('postgresql.conf', 'idgen.layout', "'idgen'");
$node->restart;
my $back = draw_ids($node, 1000);
cmp_ok(min_of(@$back), '>', max_of(@$old, @$new, @$after),
	'back to the default layout: IDs flow at once, above every earlier one');

# Another node id under the same layout: the tick dominates, accepted
$node->adjust_conf('postgresql.conf', 'idgen.node_id', '1');
$node->restart;
my $other_node = draw_ids($node, 1000);
cmp_ok(min_of(@$other_node), '>', max_of(@$back),
	'a smaller node id under the same layout: IDs above every earlier one');

# twitter has the same bits and an earlier epoch: provably larger
$node->adjust_conf('postgresql.conf', 'idgen.layout', "'twitter'");
$node->restart;
my $tw = draw_ids($node, 1000);
cmp_ok(min_of(@$tw), '>', max_of(@$other_node),
	'preset twitter (earlier epoch): accepted at once, IDs above every earlier one');
like(slurp_file($node->logfile),
	qr/Every new ID is larger than every ID issued before/,
	'the server log notes the accepted change');
is(scalar(duplicates([ @$old, @$new, @$after, @$back, @$other_node, @$tw ])),
	0, 'no ID issued twice');

# The idgen worker stopped (SIGSTOP): what waits for it fails once
# idgen.worker_wait_timeout has passed, with 55000, and takes effect when
# the worker runs again.  First the acceptance of a layout change
$node->adjust_conf('postgresql.conf', 'idgen.layout', "'$slow'");
$node->restart;
$node->poll_query_until('postgres',
	q{SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'idgen worker'})
  or die 'no idgen worker';
my $worker = $node->safe_psql('postgres',
	q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'idgen worker'});
$node->safe_psql('postgres',
	"ALTER SYSTEM SET idgen.worker_wait_timeout = '200ms'; ALTER SYSTEM SET idgen.max_lead = '1min'; SELECT pg_reload_conf();");
$node->poll_query_until('postgres', 'SHOW idgen.worker_wait_timeout', '200ms')
  or die 'the setting was not reloaded';
kill 'STOP', $worker;
($ret, $out, $err) = try_sql($node, 'SELECT idgen.snowflake_accept_layout()');
like($err,
	qr/ERROR:  55000: could not accept the layout change: the idgen worker did not record it/,
	'worker stopped: accepting a layout change fails with 55000');
($ret, $out, $err) = try_sql($node, 'SELECT idgen.snowflake_nextval()');
isnt($ret, 0, 'and no ID is issued before the worker records it');
kill 'CONT', $worker;
$node->poll_query_until('postgres', 'SELECT idgen.snowflake_nextval() > 0')
  or die 'IDs did not flow after the worker ran again';
my $slow_ids = draw_ids($node, 1000);
is(first_disorder($slow_ids), -1,
	'the worker running again records the acceptance: IDs flow, increasing');

# Then snowflake_advance to an ID 30 s ahead (within idgen.max_lead, 1
# minute here): the worker must reserve time up to it
kill 'STOP', $worker;
my $ahead = $node->safe_psql('postgres',
	q{SELECT idgen.id_make(now() + interval '30 seconds', 1, 0)});
($ret, $out, $err) = try_sql($node, "SELECT idgen.snowflake_advance($ahead)");
like($err,
	qr/ERROR:  55000: could not advance the snowflake generator: the idgen worker has not reserved its time range/,
	'worker stopped: snowflake_advance past its reservation fails with 55000');
kill 'CONT', $worker;
$node->safe_psql('postgres',
	'ALTER SYSTEM RESET idgen.worker_wait_timeout; SELECT pg_reload_conf();');
$node->poll_query_until('postgres', 'SHOW idgen.worker_wait_timeout', '10s')
  or die 'the setting was not reloaded';
my $past = draw_ids($node, 100);
cmp_ok(min_of(@$past), '>', $ahead,
	'the worker running again: the generator stays raised, IDs above that ID');
is(scalar(duplicates([ @$slow_ids, @$past ])), 0, 'no ID issued twice');

$node->stop;
done_testing();
