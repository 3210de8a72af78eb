# The idgen worker dies under load and comes back:
#  - SIGTERM: it exits, the postmaster starts it again after a second, and
#    the 4 pgbench clients carry on without a single error (they wait for
#    it, within idgen.segment_wait_timeout);
#  - SIGKILL: the postmaster treats that as a crash of a process attached
#    to shared memory and restarts every process; afterwards the worker is
#    back, new clients draw again, and no ID is drawn twice.
# Also: a caller whose tag cannot be loaded gives up after
# idgen.segment_wait_timeout with SQLSTATE 55000, and the slot of an unknown
# tag whose caller gave up is removed by the worker.
use strict;
use warnings;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);
use IdgenTest;

my $node = idgen_node('segment_kill', conf => qq{
idgen.segment_max_step = 100
idgen.segment_wait_timeout = '20s'
restart_after_crash = on
max_connections = 30
});
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION idgen;
	SELECT idgen.segment_create('k', step => 10);
	CREATE TABLE drawn (n bigserial, client int, id bigint);
	CREATE UNIQUE INDEX drawn_id ON drawn (id);
});

# 4 pgbench clients in the background for some seconds
sub start_clients
{
	my ($seconds) = @_;
	return start_pgbench($node,
		q{INSERT INTO drawn (client, id) SELECT :client_id, idgen.segment_nextval('k') FROM generate_series(1, 20);},
		clients => 4, jobs => 2, seconds => $seconds);
}

# PID of the running worker, or '' if there is none
sub worker_pid
{
	return $node->safe_psql('postgres',
		q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'idgen worker'});
}

# Wait until a worker other than $old runs; returns its PID ('' if none
# came within the test timeout)
sub wait_new_worker
{
	my ($old) = @_;
	my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
	while (time() < $deadline)
	{
		my $pid = eval { worker_pid() } // '';
		return $pid if $pid ne '' && $pid ne $old;
		usleep(100_000);
	}
	return '';
}

# Wait until clients have committed more rows than $n
sub wait_drawing
{
	my ($n) = @_;
	$node->poll_query_until('postgres', "SELECT count(*) > $n FROM drawn")
	  or die 'the clients draw no ID';
	return;
}

# 1. SIGTERM under load.  It shows something only if the clients were
# drawing when the worker stopped and still ran when the new one had
# started (so they drew across its absence): that is checked, and the
# round is run again with a longer load if it did not hold.
my ($run, $pid1, $pid2, $rc, $out, $err, $count_before, $spanned);
for my $round (1 .. 4)
{
	$run = start_clients(8 * 2**($round - 1));
	wait_drawing($node->safe_psql('postgres', 'SELECT count(*) FROM drawn'));
	$pid1 = worker_pid();
	like($pid1, qr/^\d+$/, "round $round: the worker runs");
	$count_before = $node->safe_psql('postgres', 'SELECT count(*) FROM drawn');
	kill 'TERM', $pid1;
	$pid2 = wait_new_worker($pid1);
	like($pid2, qr/^\d+$/, "SIGTERM, round $round: a new worker started");
	$spanned = $run->{h}->pumpable;
	($out, $err, $rc) = finish_pgbench($run);
	is($rc, 0, "SIGTERM, round $round: pgbench exits 0");
	unlike($err, qr/ERROR|aborted/, "SIGTERM, round $round: no client saw an error");
	last if $spanned;
	note "round $round: pgbench ended before the new worker started; again, longer";
}
ok($spanned, 'SIGTERM: the clients ran from before the worker stopped until after the new one started');
my $count_after = $node->safe_psql('postgres', 'SELECT count(*) FROM drawn');
cmp_ok($count_after, '>', $count_before,
	'SIGTERM: clients kept drawing after the worker was stopped');
is($node->safe_psql('postgres', 'SELECT count(*) = count(DISTINCT id) FROM drawn'),
	't', 'SIGTERM: no duplicate IDs');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM (
		SELECT id, lag(id) OVER (PARTITION BY client ORDER BY n) AS prev FROM drawn) s
	WHERE id <= prev}),
	'0', 'SIGTERM: each client\'s IDs strictly increase');

# 2. SIGKILL under load: the whole server restarts
my $max_before_kill;
my $rows_now = $node->safe_psql('postgres', 'SELECT count(*) FROM drawn');
$run = start_clients(6);
wait_drawing($rows_now);
my $log_offset = -s $node->logfile;
kill 'KILL', $pid2;
($out, $err, $rc) = finish_pgbench($run);
note "pgbench after SIGKILL: exit code $rc";
my $pid3 = wait_new_worker($pid2);
like($pid3, qr/^\d+$/, 'SIGKILL: the worker is back after the restart');
like(slurp_file($node->logfile, $log_offset),
	qr/background worker "idgen worker" \(PID $pid2\) was terminated by signal 9/,
	'SIGKILL: the postmaster saw the worker die');
$max_before_kill = $node->safe_psql('postgres', 'SELECT max(id) FROM drawn');

# New clients draw again, without errors, above everything committed before
$node->pgbench(
	'-n -c 4 -j 2 -t 200',
	0,
	[qr{processed: 800/800}],
	[qr{^$}],
	'SIGKILL: clients draw again after the restart',
	{ 'draw' => q{INSERT INTO drawn (client, id) SELECT :client_id + 100, idgen.segment_nextval('k') FROM generate_series(1, 20);} });
is($node->safe_psql('postgres', 'SELECT count(*) = count(DISTINCT id) FROM drawn'),
	't', 'SIGKILL: no duplicate IDs');
is($node->safe_psql('postgres',
	"SELECT min(id) > $max_before_kill FROM drawn WHERE client > 100"),
	't', 'SIGKILL: IDs after the restart are above every ID committed before');

# 3. A tag whose row stays locked: the caller gives up after the timeout
$node->safe_psql('postgres', q{SELECT idgen.segment_create('locked')});
my $locker = $node->background_psql('postgres');
$locker->query_safe('BEGIN');
$locker->query_safe(
	q{SELECT * FROM idgen.segment_alloc WHERE biz_tag = 'locked' FOR UPDATE});
($rc, $out, $err) = $node->psql('postgres',
	"SET idgen.segment_wait_timeout = '500ms';\n\\set VERBOSITY verbose\nSELECT idgen.segment_nextval('locked')");
like($err,
	qr/ERROR:  55000: could not draw an ID for segment tag "locked": the idgen worker did not load a segment within 500 ms/,
	'locked row: the caller times out with SQLSTATE 55000');
like($node->safe_psql('postgres', q{SELECT idgen.segment_nextval('k')}),
	qr/^\d+$/, 'locked row: other tags are served meanwhile');
$locker->query_safe('COMMIT');
$locker->quit;
is($node->safe_psql('postgres', q{SELECT idgen.segment_nextval('locked')}),
	'1', 'locked row: once released, the tag is loaded');

# 4. An unknown tag whose caller did not wait for the answer.  The table is
# locked meanwhile, so the worker cannot answer before the caller gives up
# (otherwise it may, and the caller gets the unknown-tag error instead).
$locker = $node->background_psql('postgres');
$locker->query_safe('BEGIN');
$locker->query_safe('LOCK TABLE idgen.segment_alloc IN ACCESS EXCLUSIVE MODE');
($rc, $out, $err) = $node->psql('postgres',
	"SET idgen.segment_wait_timeout = 0;\n\\set VERBOSITY verbose\nSELECT idgen.segment_nextval('typo')");
like($err, qr/ERROR:  55000: could not draw an ID for segment tag "typo"/,
	'unknown tag, no wait: the caller gives up at once');
$locker->query_safe('COMMIT');
$locker->quit;
ok($node->poll_query_until('postgres',
	q{SELECT state = 'unknown' FROM idgen.segment_status WHERE biz_tag = 'typo'}),
	'unknown tag: the worker marks the slot unknown');
ok($node->poll_query_until('postgres',
	q{SELECT count(*) = 0 FROM idgen.segment_status WHERE biz_tag = 'typo'}),
	'unknown tag: the worker removes the slot later');

$node->stop;
done_testing();
