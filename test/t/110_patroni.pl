# 110_patroni.pl
#	Failover through Patroni with etcd, under load, with skewed clocks
#	(issue 31).
#
# A real cluster from Debian's packages: one etcd, two PostgreSQL servers
# each run by its own Patroni, idgen preloaded on both through Patroni's
# postgresql.parameters, with the settings docs/high-availability.md
# recommends: synchronous_mode: true and a fixed idgen.node_id.  Clients
# insert snowflake IDs, draw snowflake IDs without writing and draw segment
# IDs, continuously, through a libpq multi-host connection string
# (target_session_attrs=read-write), reconnecting after every failure, and
# write every ID they receive to a file, whether or not it was committed.
#
# Three failovers under that load:
#  1. a planned switchover through patronictl;
#  2. an unplanned one: kill -9 of the primary's postmaster and of its
#     Patroni (the node is then started again and rejoins);
#  3. the same kill where the replica's clock is 90 s behind the primary's
#     (far more than a failover takes, so that the new primary's clock is
#     still below the old primary's last ID however slow the machine:
#     checked) (test/fakeclock.c preloaded into each Patroni, so into the
#     postgres it forks; checked with clock_timestamp()) and the primary's
#     walsender is stopped (SIGSTOP) for 1.5 s before the kill, so its last
#     WAL is never sent.
# Asserted: no ID received twice (snowflake and segment, all clients, all
# failovers); each client's snowflake IDs increase through every failover;
# after each failover the new primary's IDs are above every ID received
# before it; the new primary's clock was behind the old primary's last ID.
# Timings are only printed (notes), never asserted.
#
# Runs by hand, not in CI, whose outcomes docs/high-availability.md gives:
# IDGEN_HA_MODE=async runs the same with Patroni's default asynchronous
# mode (it is expected to fail); IDGEN_HA_MODE=auto asynchronously with
# idgen.node_id = 'auto' and a registry (a plain server started here), where
# the order assertions do not apply (a promoted node issues under a node id
# of its own, with its own clock) and are only noted.
use strict;
use warnings;

use File::Path qw(make_path);
use POSIX ();
use HTTP::Tiny;
use IPC::Run;
use Time::HiRes qw(usleep time);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

neighbours_version();
for my $prog (qw(patroni patronictl etcd))
{
	plan skip_all => "$prog not found: install Debian's patroni and etcd-server"
	  unless grep { -x "$_/$prog" } split /:/, $ENV{PATH};
}

my $mode = $ENV{IDGEN_HA_MODE} // 'sync';
die "IDGEN_HA_MODE is sync, async or auto" unless $mode =~ /^(sync|async|auto)$/;
my $tmp = $PostgreSQL::Test::Utils::tmp_check . '/patroni';
make_path($tmp);
my $bindir = `pg_config --bindir`;
chomp $bindir;
my $user = 'postgres';
my $http = HTTP::Tiny->new(timeout => 2);
my (@procs, @datadirs);

# Whatever happens, no etcd, Patroni or postgres is left behind
END
{
	for my $p (@procs)
	{
		kill 'TERM', -$p->{pid} if $p->{pid} && IdgenTest::alive($p->{pid});
	}
	usleep(500_000);
	for my $d (@datadirs)
	{
		system("pg_ctl -D $d -m immediate stop >/dev/null 2>&1")
		  if -e "$d/postmaster.pid";
	}
	for my $p (@procs)
	{
		kill 'KILL', -$p->{pid} if $p->{pid};
	}
}

# Start a program in a process group of its own, output to a log
sub start_proc
{
	my ($name, $env, @cmd) = @_;
	my $log = "$tmp/$name.log";
	my $pid = fork // die "fork: $!";
	if ($pid == 0)
	{
		setpgrp(0, 0);
		%ENV = (%ENV, %$env);
		open STDIN, '<', '/dev/null';
		open STDOUT, '>>', $log or die;
		open STDERR, '>&', \*STDOUT;
		{ exec @cmd; }
		POSIX::_exit(127);
	}
	my $p = { name => $name, pid => $pid, log => $log };
	push @procs, $p;
	return $p;
}

# Wait (up to the test timeout) until $cond returns true; dies with $what
sub wait_until
{
	my ($what, $cond) = @_;
	my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
	until ($cond->())
	{
		die "timed out waiting for $what" if time() > $deadline;
		usleep(100_000);
	}
	return;
}

# --- etcd ---
my $etcd_port = PostgreSQL::Test::Cluster::get_free_port();
my $peer_port = PostgreSQL::Test::Cluster::get_free_port();
my $etcd = start_proc(
	'etcd', {}, 'etcd', '--name', 'e1', '--data-dir', "$tmp/etcd",
	'--listen-client-urls', "http://127.0.0.1:$etcd_port",
	'--advertise-client-urls', "http://127.0.0.1:$etcd_port",
	'--listen-peer-urls', "http://127.0.0.1:$peer_port",
	'--initial-advertise-peer-urls', "http://127.0.0.1:$peer_port",
	'--initial-cluster', "e1=http://127.0.0.1:$peer_port");
wait_until('etcd',
	sub { $http->get("http://127.0.0.1:$etcd_port/health")->{success} });

# --- two Patroni nodes ---
my $sync = $mode eq 'sync' ? 'true' : 'false';
my $node_id = '1';
if ($mode eq 'auto')
{
	my $registry = idgen_node('registry', preload => 0,
		conf => "idgen.node_lease_guard = '2min'\n");
	$registry->start;
	$registry->safe_psql('postgres', q{
		CREATE EXTENSION idgen;
		CREATE ROLE leaser LOGIN;
		GRANT EXECUTE ON FUNCTION
			idgen.node_lease_acquire(text, text, int, int, int, bigint),
			idgen.node_lease_renew(text, int, text, int, bigint) TO leaser;
	});
	$node_id = "auto\n        idgen.node_namespace: ha\n"
	  . "        idgen.node_registry: 'host=" . $registry->host
	  . ' port=' . $registry->port . " dbname=postgres user=leaser'";
}
my %node;
for my $name (qw(n1 n2))
{
	my $n = {
		name => $name,
		pg_port => PostgreSQL::Test::Cluster::get_free_port(),
		api_port => PostgreSQL::Test::Cluster::get_free_port(),
		data => "$tmp/$name/data",
		conf => "$tmp/$name.yml",
		clock => "$tmp/clock_$name.rc",
	};
	make_path("$tmp/$name");
	chmod 0700, "$tmp/$name";
	push @datadirs, $n->{data};
	# Patroni's YAML: idgen's lines are in postgresql.parameters of the
	# DCS configuration, so every node gets the same ones
	write_files($tmp, "$name.yml" => <<"EOY");
scope: idgen
name: $name
restapi:
  listen: 127.0.0.1:$n->{api_port}
  connect_address: 127.0.0.1:$n->{api_port}
etcd3:
  hosts: 127.0.0.1:$etcd_port
bootstrap:
  dcs:
    ttl: 20
    loop_wait: 2
    retry_timeout: 5
    maximum_lag_on_failover: 33554432
    synchronous_mode: $sync
    postgresql:
      use_pg_rewind: true
      parameters:
        shared_preload_libraries: idgen
        idgen.node_id: $node_id
        idgen.database: postgres
        idgen.max_lead: 2min
        wal_log_hints: 'on'
        max_connections: 30
        shared_buffers: 16MB
  initdb:
    - encoding: UTF8
    - locale: C
  pg_hba:
    - local all all trust
    - host all all 127.0.0.1/32 trust
    - host replication all 127.0.0.1/32 trust
postgresql:
  listen: 127.0.0.1:$n->{pg_port}
  connect_address: 127.0.0.1:$n->{pg_port}
  data_dir: $n->{data}
  bin_dir: $bindir
  pgpass: $tmp/$name/pgpass
  authentication:
    superuser:
      username: $user
      password: unused
    replication:
      username: replicator
      password: unused
  parameters:
    unix_socket_directories: '$tmp/$name'
EOY
	$node{$name} = $n;
}

# Set a node's clock offset (test/fakeclock.c reads the file on each call)
sub clock
{
	my ($n, $offset) = @_;
	write_files($tmp, "clock_$n->{name}.tmp" => "$offset\n");
	rename "$tmp/clock_$n->{name}.tmp", $n->{clock} or die "rename: $!";
	note "clock of $n->{name} set to $offset";
	return;
}

# Start a node's Patroni with its fake clock: LD_PRELOAD and
# IDGEN_FAKECLOCK_FILE in Patroni's environment reach the postgres it forks
sub start_patroni
{
	my ($n) = @_;
	clock($n, '+0') unless -e $n->{clock};
	$n->{proc} = start_proc("patroni_$n->{name}",
		{ IdgenTest::fakeclock_env($n->{clock}) },
		'patroni', $n->{conf});
	return;
}

# What a node's REST API says about it (HTTP status of GET /path)
sub api
{
	my ($n, $path) = @_;
	return $http->get("http://127.0.0.1:$n->{api_port}/$path")->{status};
}

sub conn
{
	my ($n) = @_;
	return "host=127.0.0.1 port=$n->{pg_port} dbname=postgres user=$user";
}

# psql on one node; returns (exit code, stdout, stderr)
sub sql
{
	my ($n, $query) = @_;
	my ($out, $err) = ('', '');
	IPC::Run::run(
		[ 'psql', '-X', '-A', '-t', '-q', '-v', 'ON_ERROR_STOP=1', '-d', conn($n), '-c', $query ],
		'<', \undef, '>', \$out, '2>', \$err);
	chomp $out;
	return ($? >> 8, $out, $err);
}

sub safe_sql
{
	my ($n, $query) = @_;
	my ($rc, $out, $err) = sql($n, $query);
	die "query on $n->{name} failed: $query\n$err" if $rc;
	return $out;
}

# The leader (running and writable), once there is one
sub leader
{
	my $leader;
	wait_until('a leader', sub {
		($leader) = grep { (api($_, 'primary') // 0) == 200 } values %node;
		return $leader && (sql($leader, 'SELECT 1'))[1] eq '1'
		  && (sql($leader, 'SELECT pg_is_in_recovery()'))[1] eq 'f';
	});
	return $leader;
}

sub other { my ($n) = @_; return $node{ $n->{name} eq 'n1' ? 'n2' : 'n1' }; }

# Wait until $n streams from the leader (as its synchronous standby in
# synchronous mode)
sub replica_ready
{
	my ($n) = @_;
	my $want = $mode eq 'sync' ? 'sync' : 'replica';
	wait_until("$n->{name} as $want standby", sub {
		(api($n, $want) // 0) == 200
		  && (sql($n, 'SELECT status FROM pg_stat_wal_receiver'))[1] eq 'streaming';
	});
	return;
}

start_patroni($node{n1});
my $primary = leader();
is($primary->{name}, 'n1', 'Patroni bootstrapped n1 as the leader');
safe_sql($primary, q{
	CREATE EXTENSION idgen;
	CREATE TABLE ids (id bigint PRIMARY KEY DEFAULT idgen.snowflake_nextval(),
		src text NOT NULL);
	SELECT idgen.segment_create('orders', step => 100);
});
start_patroni($node{n2});
replica_ready($node{n2});
like(safe_sql($node{n2}, 'SHOW shared_preload_libraries'),
	qr/idgen/, 'idgen is preloaded on the replica Patroni made');

# --- clients through a multi-host connection string ---
my $multi = 'host=127.0.0.1,127.0.0.1 port='
  . join(',', map { $node{$_}{pg_port} } qw(n1 n2))
  . " dbname=postgres user=$user target_session_attrs=read-write connect_timeout=3";
my %client_sql = (
	insert1 => "INSERT INTO ids (src) SELECT 'c' FROM generate_series(1, 10) RETURNING id;",
	insert2 => "INSERT INTO ids (src) SELECT 'c' FROM generate_series(1, 10) RETURNING id;",
	select => 'SELECT idgen.snowflake_nextval() FROM generate_series(1, 10);',
	segment => "SELECT idgen.segment_nextval('orders') FROM generate_series(1, 10);",
);
my @clients;
for my $c (sort keys %client_sql)
{
	my $script = "$tmp/client_$c.sql";
	write_files($tmp, "client_$c.sql" => "$client_sql{$c}\n" x 200);
	# psql leaves when its connection is lost; the loop connects again
	push @clients,
	  {
		name => $c,
		out => "$tmp/client_$c.out",
		err => "$tmp/client_$c.err",
		proc => start_proc(
			"client_$c", {}, 'bash', '-c',
			"while [ ! -e $tmp/stop ]; do psql -X -A -t -q -v VERBOSITY=verbose "
			  . "-d '$multi' -f $script >>$tmp/client_$c.out 2>>$tmp/client_$c.err; "
			  . "sleep 0.1; done")
	  };
}

# IDs each client has received so far, in order
sub received
{
	my ($c) = @_;
	open my $fh, '<', $c->{out} or return [];
	my @ids = map { /^(\d+)$/ ? $1 + 0 : () } <$fh>;
	close $fh;
	return \@ids;
}

sub snowflake_max
{
	return max_of(map { @{ received($_) } } grep { $_->{name} ne 'segment' } @clients);
}

sub segment_max
{
	return max_of(map { @{ received($_) } } grep { $_->{name} eq 'segment' } @clients);
}

# Wait until every client has received more IDs than it had
sub clients_progress
{
	my @before = map { scalar @{ received($_) } } @clients;
	for my $i (0 .. $#clients)
	{
		wait_until("client $clients[$i]{name} to draw",
			sub { scalar @{ received($clients[$i]) } > $before[$i] + 20 });
	}
	return;
}

# After a failover: the new primary's IDs above every ID received before
sub check_after
{
	my ($label, $n, $t0) = @_;
	my ($smax, $gmax) = (snowflake_max(), segment_max());
	my $new = safe_sql($n, 'SELECT idgen.snowflake_nextval()');
	my $seg = safe_sql($n, "SELECT idgen.segment_nextval('orders')");
	note sprintf('%s: %.1f s from the start to a writable new primary %s',
		$label, time() - $t0, $n->{name});
	if ($mode eq 'auto')
	{
		note "$label: the new primary's snowflake ID $new, node id "
		  . safe_sql($n, "SELECT node_id FROM idgen.id_decode($new)")
		  . ", is " . ($new > $smax ? 'above' : 'below') . " the largest received before, $smax";
	}
	else
	{
		cmp_ok($new, '>', $smax,
			"$label: a snowflake ID of the new primary is above every one received before");
	}
	cmp_ok($seg, '>', $gmax,
		"$label: a segment ID of the new primary is above every one received before");
	clients_progress();
	return;
}

clients_progress();

# --- 1. planned switchover through patronictl ---
my $old = $primary;
my $t0 = time();
my $cand = other($old);
my ($sw_out, $sw_err) = ('', '');
IPC::Run::run(
	[ 'patronictl', '-c', $old->{conf}, 'switchover', '--leader', $old->{name},
	  '--candidate', $cand->{name}, '--force' ],
	'>', \$sw_out, '2>', \$sw_err)
  or die "patronictl switchover failed: $sw_out $sw_err";
wait_until('the switchover', sub { (api($cand, 'primary') // 0) == 200 });
$primary = leader();
is($primary->{name}, $cand->{name}, 'switchover: the candidate leads');
check_after('switchover', $primary, $t0);
replica_ready($old);

# Kill a node's postmaster and its Patroni with SIGKILL
sub kill_node
{
	my ($n) = @_;
	open my $fh, '<', "$n->{data}/postmaster.pid" or die "no postmaster.pid: $!";
	my $pm = <$fh>;
	close $fh;
	chomp $pm;
	kill 'KILL', $n->{proc}{pid}, $pm;
	note "killed Patroni $n->{proc}{pid} and postmaster $pm of $n->{name}";
	wait_until('the killed processes to go', sub {
		waitpid($n->{proc}{pid}, 1);
		!IdgenTest::alive($pm) && !IdgenTest::alive($n->{proc}{pid});
	});
	return;
}

# --- 2. unplanned: kill -9 of the primary and its Patroni ---
$old = $primary;
$t0 = time();
kill_node($old);
$primary = leader();
is($primary->{name}, other($old)->{name}, 'kill: the replica took over');
check_after('kill', $primary, $t0);
start_patroni($old);
replica_ready($old);
clients_progress();

# --- 3. kill while the replica's clock is 90 s behind and its WAL held ---
$old = $primary;
my $next = other($old);
clock($next, '-90');
my $skew = safe_sql($old, 'SELECT extract(epoch FROM clock_timestamp())')
  - safe_sql($next, 'SELECT extract(epoch FROM clock_timestamp())');
cmp_ok($skew, '>', 80, "clock: the replica's clock is behind the primary's ($skew s)");
# Hold the primary's WAL back: its walsenders stopped (SIGSTOP), so that
# what it writes from now on never leaves it (a stopped walreceiver would
# not do: the kernel's socket buffers keep what was sent to it)
my @walsnd = split /\n/, safe_sql($old, 'SELECT pid FROM pg_stat_replication');
kill 'STOP', @walsnd;
usleep(1_500_000);
my $last_old = snowflake_max();
my $held = safe_sql($old, 'SELECT pg_current_wal_lsn()');
note "clock: WAL held back: the primary is at $held, the replica has received "
  . safe_sql($next, 'SELECT pg_last_wal_receive_lsn()');
$t0 = time();
kill 'KILL', @walsnd;
kill_node($old);
$primary = leader();
is($primary->{name}, $next->{name}, 'clock: the replica with the slow clock took over');
is(safe_sql($primary, "SELECT clock_timestamp() < idgen.id_timestamp($last_old)"),
	't', "clock: the new primary's clock is below the old primary's last ID");
check_after('clock behind', $primary, $t0);
start_patroni($old);
replica_ready($old);
clients_progress();

# --- the outcome ---
write_files($tmp, 'stop' => '');
for my $c (@clients)
{
	wait_until("client $c->{name} to stop",
		sub { waitpid($c->{proc}{pid}, 1); !IdgenTest::alive($c->{proc}{pid}) });
}
my (@snow, @seg);
for my $c (@clients)
{
	my $ids = received($c);
	my $err = slurp_file($c->{err});
	# A statement that failed (an error, or a session psql left when its
	# connection was lost), idgen's errors among them, and a connection
	# attempt that found no writable server
	my $failed = () = $err =~ /: ERROR:  |: error: connection to server was lost/g;
	my $idgen = () = $err =~ /ERROR:  (?:58000|55000|25006)/g;
	my $refused = () = $err =~ /^psql: error:/mg;
	note "client $c->{name}: " . scalar(@$ids)
	  . " IDs received; $failed statements failed ($idgen with an error of idgen), $refused connection attempts failed";
	is($idgen, 0, "client $c->{name}: no call failed with an error of idgen");
	if ($c->{name} eq 'segment') { push @seg, $ids; next; }
	push @snow, $ids;
	is(first_disorder($ids), -1,
		"client $c->{name}: its snowflake IDs increase through every failover")
	  unless $mode eq 'auto';
}
my @dups = duplicates(@snow);
is(scalar @dups, 0, 'no snowflake ID received twice, across clients and failovers')
  or diag "duplicates: @dups[0 .. ($#dups > 9 ? 9 : $#dups)]";
@dups = duplicates(@seg);
is(scalar @dups, 0, 'no segment ID received twice across failovers')
  or diag "duplicates: @dups[0 .. ($#dups > 9 ? 9 : $#dups)]";
note 'snowflake_status of the primary: '
  . safe_sql($primary, 'SELECT row_to_json(s) FROM idgen.snowflake_status() s');
note 'snowflake_status of the rejoined replica: '
  . (sql(other($primary), 'SELECT row_to_json(s) FROM idgen.snowflake_status() s'))[1];

done_testing();
