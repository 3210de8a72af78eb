# 067_currval_parallel.pl
#	currval after parallel statements (issue 22, points 5 and 8): the draws
#	a statement's parallel workers make are the session's, so afterwards
#	snowflake_currval() and segment_currval(tag) are the largest ID the
#	statement drew (its last), as the README's "currval and lastval" says.
#
# Each statement is a CREATE TABLE ... AS SELECT run under EXPLAIN (ANALYZE,
# VERBOSE, FORMAT JSON): it keeps every ID it drew in a table and its plan
# says how many workers were launched and where the draws were made.  A
# statement whose Gather launched no worker, or whose draws were not below
# the Gather, fails the test (it would prove nothing).  Three shapes:
#  - 2 workers, parallel_leader_participation = off: every ID drawn by a
#    worker; currval moves past the leader's own earlier draw
#  - 2 workers and the leader: currval is the largest of all
#  - debug_parallel_query (force_parallel_mode before 16) on one row: a
#    single worker draws one snowflake and one segment ID
# Then DISCARD ALL forgets what workers reported: 55000.  And a revoke
# committed after a REPEATABLE READ transaction's snapshot denies its next
# parallel statement in the workers (issue 49, point 1; see below).
use strict;
use warnings;

use IPC::Run;
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

my $rows = 100000;
my $node = idgen_node(
	'parallel', conf => q{
max_worker_processes = 16
max_parallel_workers = 8
max_parallel_workers_per_gather = 2
});
start_node($node);
$node->safe_psql(
	'postgres', qq{
CREATE EXTENSION idgen;
SELECT idgen.segment_create('par', 1, 1000);
CREATE TABLE src AS SELECT g FROM generate_series(1, $rows) g;
ANALYZE src;});
wait_ready($node);

my $force =
  $node->safe_psql('postgres', 'SHOW server_version_num') >= 160000
  ? 'debug_parallel_query'
  : 'force_parallel_mode';

# Run a session's statements; returns stdout, stderr (with SQLSTATEs)
sub session
{
	my ($sql) = @_;
	my ($out, $err) = ('', '');
	$node->psql(
		'postgres', $sql,
		stdout => \$out,
		stderr => \$err,
		on_error_stop => 0,
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	return ($out, $err);
}

# The Gather node of a JSON plan, found from its top
sub find_gather
{
	my ($plan) = @_;
	return $plan if $plan->{'Node Type'} eq 'Gather';
	for my $p (@{ $plan->{Plans} // [] })
	{
		my $g = find_gather($p);
		return $g if $g;
	}
	return undef;
}

# Does a plan node or one below it compute an expression matching $re?
sub computes
{
	my ($plan, $re) = @_;
	return 1 if grep { /$re/ } @{ $plan->{Output} // [] };
	return scalar grep { computes($_, $re) } @{ $plan->{Plans} // [] };
}

# One parallel statement in a session: the leader draws first, then the
# statement, then the session's currvals.  Checks and returns the plan's
# Gather.
sub parallel_draw
{
	my ($name, $settings, $select, $want_rows) = @_;
	my ($out, $err) = session(
		qq{
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
$settings
SELECT 'own', idgen.snowflake_nextval(), idgen.segment_nextval('par');
\\echo plan
EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON)
  CREATE TABLE $name AS $select;
\\echo end
SELECT 'currval', idgen.snowflake_currval(), idgen.segment_currval('par');
SELECT 'leader', idgen.snowflake_nextval(), idgen.segment_nextval('par');
SELECT 'currval2', idgen.snowflake_currval(), idgen.segment_currval('par');
DISCARD ALL;
SELECT idgen.snowflake_currval();
SELECT idgen.segment_currval('par');
});
	my ($json) = $out =~ /^plan\n(.*)^end$/ms;
	my %v = map { my @f = split /\|/; ($f[0] => [ @f[ 1, 2 ] ]) }
	  grep { /^(own|currval2?|leader)\|/ } split /\n/, $out;
	my $plan = eval { decode_json($json)->[0]{Plan} };
	ok($plan && $v{currval}, "$name: the statement ran") or diag($out . $err);
	my $gather = $plan ? find_gather($plan) : undef;
	my $launched = $gather ? $gather->{'Workers Launched'} // 0 : 0;
	ok($gather && $launched > 0,
		"$name: a Gather launched workers ($launched of "
		  . ($gather ? $gather->{'Workers Planned'} : 'no Gather') . ')')
	  or diag($json);
	ok( $gather
		  && computes($gather->{Plans}[0], qr/idgen\.snowflake_nextval\(\)/)
		  && computes($gather->{Plans}[0], qr/idgen\.segment_nextval\('par'/),
		"$name: both IDs are drawn below the Gather (in its workers)")
	  or diag($json);

	my ($count, $distinct, $snow_max, $seg_max) = split /\|/,
	  $node->safe_psql('postgres',
		"SELECT count(*), count(DISTINCT (snow, seg)), max(snow), max(seg) FROM $name");
	is("$count|$distinct", "$want_rows|$want_rows", "$name: $want_rows rows drawn, none twice");
	is($v{currval}[0], $snow_max,
		"$name: snowflake_currval() after it is the largest ID it drew");
	is($v{currval}[1], $seg_max,
		"$name: segment_currval('par') after it is the largest ID it drew");
	ok($v{currval}[0] > $v{own}[0] && $v{currval}[1] > $v{own}[1],
		"$name: both are above the leader's own draws before the statement");
	is(join(',', @{ $v{currval2} }), join(',', @{ $v{leader} }),
		"$name: the leader's next draws are the currvals again");
	ok($v{leader}[0] > $snow_max, "$name: and its next snowflake ID is above the statement's");
	like(
		$err,
		qr/ERROR:  55000: snowflake_currval is not yet defined in this session.*ERROR:  55000: segment_currval of tag "par" is not yet defined in this session/s,
		"$name: DISCARD ALL forgets both (55000)");
	return $gather;
}

parallel_draw(
	'workers_only', 'SET parallel_leader_participation = off;',
	"SELECT g, idgen.snowflake_nextval() AS snow, idgen.segment_nextval('par') AS seg FROM src",
	$rows);
parallel_draw(
	'with_leader', 'SET parallel_leader_participation = on;',
	"SELECT g, idgen.snowflake_nextval() AS snow, idgen.segment_nextval('par') AS seg FROM src",
	$rows);
my $single = parallel_draw(
	'forced', "SET $force = on;",
	"SELECT idgen.snowflake_nextval() AS snow, idgen.segment_nextval('par') AS seg",
	1);
ok($single && $single->{'Single Copy'}, "$force: a single-copy Gather (the leader does not run it)");

# A revoke committed after a REPEATABLE READ transaction took its snapshot
# denies that transaction's next statements in every plan: a parallel scan
# whose workers alone draw (the error comes from a worker: its CONTEXT),
# the single-copy plan of $force, and segment_currval, as a serial plan
# (t/069, the spec segment_privilege) is denied.  Before the revoke the
# same parallel statement draws in its workers.  The session waits for the
# revoke on a sequence (read outside any snapshot), set once it committed.
$node->safe_psql(
	'postgres', q{
CREATE ROLE par_app LOGIN;
GRANT SELECT ON src TO par_app;
CREATE SEQUENCE revoked;
GRANT SELECT ON revoked TO par_app;
SELECT idgen.segment_create('parr', 1, 1000);
SELECT idgen.segment_revoke('parr', 'draw', 'public');
SELECT idgen.segment_grant('parr', 'draw', 'par_app');});
my $explain = 'EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) '
  . "SELECT idgen.segment_nextval('parr') FROM src";
my $rr_script = "$PostgreSQL::Test::Utils::tmp_check/rr_revoke.sql";
open my $fh, '>', $rr_script or die "$rr_script: $!";
print $fh qq{
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET parallel_leader_participation = off;
BEGIN ISOLATION LEVEL REPEATABLE READ;
\\echo plan
$explain;
\\echo end
DO \$\$ BEGIN
  WHILE (SELECT last_value FROM revoked) < 2 LOOP PERFORM pg_sleep(0.05); END LOOP;
END \$\$;
\\echo after
SAVEPOINT a;
$explain;
ROLLBACK TO a;
SET $force = on;
SELECT idgen.segment_nextval('parr');
ROLLBACK TO a;
RESET $force;
SELECT idgen.segment_currval('parr');
ROLLBACK;
};
close $fh;
my ($rr_out, $rr_err) = ('', '');
my $rr = IPC::Run::start(
	[
		'psql', '-X', '-A', '-t', '-q', '-v', 'VERBOSITY=verbose',
		'-d', $node->connstr('postgres') . ' user=par_app', '-f', $rr_script
	],
	'<', \undef, '>', \$rr_out, '2>', \$rr_err);
ok( $node->poll_query_until(
		'postgres',
		"SELECT count(*) > 0 FROM pg_stat_activity WHERE usename = 'par_app' AND query LIKE '%FROM revoked%'"),
	'revoke in parallel: the REPEATABLE READ transaction drew and waits');
$node->safe_psql('postgres',
	"SELECT idgen.segment_revoke('parr', 'draw', 'par_app'); SELECT setval('revoked', 2);");
$rr->finish;
my ($rr_json) = $rr_out =~ /^plan\n(.*)^end$/ms;
my $rr_plan = eval { decode_json($rr_json)->[0]{Plan} };
my $rr_gather = $rr_plan ? find_gather($rr_plan) : undef;
ok( $rr_gather
	  && ($rr_gather->{'Workers Launched'} // 0) > 0
	  && computes($rr_gather->{Plans}[0], qr/idgen\.segment_nextval\('parr'/),
	'revoke in parallel: before the revoke its workers drew')
  or diag($rr_out . $rr_err);
my ($after) = $rr_err =~ /(ERROR:  .*)/s;
$after //= '';
my @denied = $after =~ /ERROR:  42501: permission denied for segment tag "parr"/g;
is(scalar @denied, 3,
	'revoke in parallel: after it the transaction is denied three times (42501)')
  or diag($rr_err);
like($after,
	qr/\A[^\n]*42501[^\n]*\n(?:(?:DETAIL|HINT|LOCATION):[^\n]*\n)*CONTEXT:  parallel worker/,
	'revoke in parallel: the first denial comes from a parallel worker');
is($node->safe_psql('postgres',
	"SELECT count(*) FROM pg_stat_activity WHERE usename = 'par_app'"), '0',
	'revoke in parallel: the session ended');

$node->stop;
done_testing();
