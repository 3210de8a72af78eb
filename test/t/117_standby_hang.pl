# 117_standby_hang.pl
#	A hanging standby costs one idgen.segment_standby_wait, not one for
#	every segment allocation; allocations with no standby where one is
#	expected are never silent.
#
# A primary and an asynchronous streaming standby; tag "t" held at step 10
# (idgen.segment_step_grow_after = 0, a chain of one), so that every 10 IDs
# the worker allocates, and waits for the standby to flush the
# allocation, idgen.segment_standby_wait = 2s at most.
#
#  1. healthy: the time to draw $n IDs;
#  2. the standby's walsender stopped (SIGSTOP: its standby hangs, still
#     connected): the first allocation waits the 2 s and is handed out
#     with the WARNING naming the standby, which is then excused; $n more
#     IDs are drawn, then $n again, timed: at least half the healthy rate
#     (before, each allocation waited 2 s: 5 IDs a second), one WARNING of
#     a late standby in all, and standby_timeouts counting every
#     allocation handed out without its flush;
#  3. the walsender let go: once the standby has caught up, it is waited
#     for again (a LOG line says so) and no allocation is counted late;
#  4. the standby stopped: the allocations, handed out with no streaming
#     standby where one streamed before, count in segment_status.unprotected,
#     with one WARNING (at most one a minute);
#  5. the standby promoted, with no standby of its own: the same, the
#     WARNING naming the promotion.
# Every ID goes into a table with a primary key: none twice.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use IdgenTest;

my $n = 20000;
my $primary = idgen_node('primary', allows_streaming => 1, conf => q{
idgen.segment_step_grow_after = 0
idgen.segment_chain_max = 1
idgen.segment_standby_wait = '2s'
});
$primary->start;
$primary->safe_psql('postgres', q{
	CREATE EXTENSION idgen;
	SELECT idgen.segment_create('t', 1, 10);
	CREATE TABLE ids (id bigint PRIMARY KEY);
});
wait_ready($primary);
my $standby = idgen_standby($primary, 'standby');
$standby->start;
$primary->wait_for_catchup($standby);

my $timeouts_sql = q{SELECT standby_timeouts FROM idgen.segment_status WHERE biz_tag = 't'};
# Draw $k IDs into ids; returns the seconds it took (dies on an error,
# statement_timeout included)
sub draw
{
	my ($k, $timeout) = @_;
	my $t0 = time;
	my ($rc, $out, $err) = try_sql($primary,
		"SET statement_timeout = '${timeout}s'; "
		  . "INSERT INTO ids SELECT idgen.segment_nextval('t') FROM generate_series(1, $k)");
	is($rc, 0, "$k IDs drawn") or diag $err;
	return time - $t0;
}

# 1. Healthy
draw(200, 60);    # the first allocations, the session's start
my $healthy = draw($n, 300);
note sprintf('healthy: %d IDs in %.2f s', $n, $healthy);
is($primary->safe_psql('postgres', $timeouts_sql), 0, 'healthy: no allocation late');

# 2. The standby hangs
my $pos = -s $primary->logfile;
my @walsnd = split /\n/,
  $primary->safe_psql('postgres', 'SELECT pid FROM pg_stat_replication');
is(scalar(@walsnd), 1, 'one walsender');
kill 'STOP', @walsnd;
# The first wait, then the rest; then timed.  A bound well above the
# healthy time: before, these would have taken 2 s per 10 IDs
my $bound = int(20 * $healthy) + 30;
draw($n, $bound);
my $hung = draw($n, $bound);
note sprintf('standby hanging: %d IDs in %.2f s', $n, $hung);
my $late_log = substr(slurp_file($primary->logfile), $pos);
cmp_ok($n / $hung, '>=', 0.5 * $n / $healthy,
	'with the standby hanging, at least half the healthy rate');
my @late = $late_log =~ /(did not flush its allocation within 2000 ms)/g;
is(scalar(@late), 1, 'one WARNING of the late standby, naming the bound');
like($late_log, qr/Allocations wait for it no more until it has caught up/,
	'which says it is waited for no more');
cmp_ok($primary->safe_psql('postgres', $timeouts_sql), '>=', $n / 10,
	'standby_timeouts counts every allocation handed out without its flush');

# 3. Caught up again
kill 'CONT', @walsnd;
$primary->wait_for_catchup($standby, 'flush');
my $timeouts = $primary->safe_psql('postgres', $timeouts_sql);
$pos = -s $primary->logfile;
draw(200, 300);
is($primary->safe_psql('postgres', $timeouts_sql), $timeouts,
	'caught up: no allocation late');
like(substr(slurp_file($primary->logfile), $pos),
	qr/the standby of walsender pid $walsnd[0] has caught up; segment allocations wait for it again/,
	'a LOG line says it is waited for again');

# 4. The standby gone: allocations are unprotected, and say so
my $unprotected_sql = q{SELECT unprotected FROM idgen.segment_status WHERE biz_tag = 't'};
is($primary->safe_psql('postgres', $unprotected_sql), 0, 'with a standby streaming: none unprotected');
$standby->stop;
$primary->poll_query_until('postgres', 'SELECT count(*) = 0 FROM pg_stat_replication')
  or die 'the walsender stays';
$pos = -s $primary->logfile;
draw(200, 300);
cmp_ok($primary->safe_psql('postgres', $unprotected_sql), '>', 0,
	'the standby gone: segment_status.unprotected counts the allocations');
my $log = substr(slurp_file($primary->logfile), $pos);
my @unprotected = $log =~ /(handed out with no streaming standby)/g;
is(scalar(@unprotected), 1, 'one WARNING (at most one a minute)');
like($log, qr/A standby streamed from this server before/, 'which says why one is expected');

# 5. Promoted with no standby of its own: unprotected too
$standby->start;
$primary->wait_for_catchup($standby);
$primary->stop;
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'not promoted';
wait_ready($standby);
$pos = -s $standby->logfile;
my ($rc, $out, $err) = try_sql($standby,
	"INSERT INTO ids SELECT idgen.segment_nextval('t') FROM generate_series(1, 200)");
is($rc, 0, 'the promoted standby draws') or diag $err;
cmp_ok($standby->safe_psql('postgres', $unprotected_sql), '>', 0,
	'promoted, no standby: its allocations count as unprotected');
like(substr(slurp_file($standby->logfile), $pos),
	qr/handed out with no streaming standby.*\n.*This server was promoted \(timeline above 1\)/,
	'with a WARNING naming the promotion');

is($standby->safe_psql('postgres', 'SELECT count(*) FROM ids'), 200 + 3 * $n + 200 + 200 + 200,
	'every ID drawn once, on both servers (the primary key took each)');

$standby->stop;
done_testing();
