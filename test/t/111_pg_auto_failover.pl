# 111_pg_auto_failover.pl
#	Failover through pg_auto_failover, under load, with skewed clocks
#	(issue 31).
#
# A real formation from Debian's postgresql-15-auto-failover: a monitor and
# two data nodes, each run by its own "pg_autoctl run", idgen preloaded on
# both with the settings docs/high-availability.md recommends: its lines at
# the end of postgresql.conf (after pg_autoctl's include), a fixed
# idgen.node_id, and pg_auto_failover's default synchronous replication.
# The first node's data directory is made by initdb and given idgen's lines
# before pg_autoctl registers it; the second is pg_autoctl's pg_basebackup
# of it.  Clients as in t/110_patroni.pl: snowflake inserts, snowflake
# draws without writes and segment draws, through a libpq multi-host
# connection string (target_session_attrs=read-write), every ID received
# written to a file.
#
# Three failovers under that load:
#  1. a planned switchover: pg_autoctl perform switchover;
#  2. an unplanned one: kill -9 of the primary's pg_autoctl (its process
#     group) and postmaster (the node is then started again and rejoins);
#  3. the same kill where the secondary's clock is 90 s behind the
#     primary's (test/fakeclock.c preloaded into each pg_autoctl, so into
#     the postgres it starts; checked with clock_timestamp()) and the
#     primary's walsender is stopped (SIGSTOP) for 1.5 s before the kill, so
#     its last WAL is never sent.
# Asserted as in t/110_patroni.pl: no ID received twice, each client's
# snowflake IDs increasing, the new primary's IDs above every ID received
# before each failover, its clock behind the old primary's last ID.
# Timings are only printed (notes), never asserted.
use strict;
use warnings;

use File::Path qw(make_path);
use POSIX ();
use IPC::Run;
use Time::HiRes qw(usleep time);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

neighbours_version();
plan skip_all =>
  "pg_autoctl not found: install Debian's postgresql-15-auto-failover"
  unless grep { -x "$_/pg_autoctl" } split /:/, $ENV{PATH};

my $tmp = $PostgreSQL::Test::Utils::tmp_check . '/autofailover';
make_path($tmp);
my $bindir = `pg_config --bindir`;
chomp $bindir;
my $user = 'postgres';
my (@procs, @datadirs);

# Whatever happens, no pg_autoctl or postgres is left behind
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

# pg_autoctl keeps its configuration and state under XDG directories, and
# reaches its local server through PGHOST
my %xdg = (
	XDG_CONFIG_HOME => "$tmp/config",
	XDG_DATA_HOME => "$tmp/share",
	PGHOST => $tmp);

# A data directory made by initdb, its lines after the include pg_autoctl
# will put at the top of postgresql.conf (which sizes shared_buffers by the
# machine's memory and listens on every address)
sub initdb
{
	my ($dir, $conf) = @_;
	system('initdb', '-D', $dir, '-U', $user, '--locale=C', '-A', 'trust',
		'-N') == 0
	  or die "initdb $dir failed";
	PostgreSQL::Test::Utils::append_to_file("$dir/postgresql.conf",
		$conf . <<"EOC");
listen_addresses = '127.0.0.1'
unix_socket_directories = '$tmp'
shared_buffers = 16MB
max_connections = 30
EOC
	return;
}
my $pgctl = "$bindir/pg_ctl";

# --- the monitor ---
my $mon_port = PostgreSQL::Test::Cluster::get_free_port();
push @datadirs, "$tmp/monitor";
# Shorter than the defaults (20 s and 30 s) to keep the test short; the old
# primary is dead in this test, so the demote timeout guards nothing here
initdb("$tmp/monitor", <<'EOC');
pgautofailover.node_considered_unhealthy_timeout = 10000
pgautofailover.primary_demote_timeout = 10000
EOC
start_proc(
	'monitor', \%xdg, 'pg_autoctl', 'create', 'monitor',
	'--pgdata', "$tmp/monitor", '--pgport', $mon_port,
	'--hostname', '127.0.0.1', '--auth', 'trust', '--no-ssl',
	'--pgctl', $pgctl, '--run');
my $monitor = {
	name => 'monitor',
	pg_port => $mon_port,
	db => 'pg_auto_failover',
	user => 'autoctl_node'
};
my $monitor_uri =
  "postgres://autoctl_node\@127.0.0.1:$mon_port/pg_auto_failover?sslmode=disable";
wait_until('the monitor',
	sub { (sql($monitor, 'SELECT count(*) FROM pgautofailover.node'))[0] == 0 });

# --- two data nodes ---
my %node;
for my $name (qw(n1 n2))
{
	my $n = {
		name => $name,
		pg_port => PostgreSQL::Test::Cluster::get_free_port(),
		data => "$tmp/$name",
		clock => "$tmp/clock_$name.rc",
	};
	push @datadirs, $n->{data};
	$node{$name} = $n;
}

# idgen's lines go at the end of postgresql.conf, after the include that
# pg_autoctl puts at its top (postgresql-auto-failover.conf sets
# shared_preload_libraries too); pg_basebackup copies them to the secondary
my $idgen_conf = <<'EOC';
shared_preload_libraries = 'pg_stat_statements,idgen'
idgen.node_id = 1
idgen.database = 'postgres'
idgen.max_lead = '2min'
EOC
initdb($node{n1}{data}, $idgen_conf);

# Set a node's clock offset (test/fakeclock.c reads the file on each call)
sub clock
{
	my ($n, $offset) = @_;
	write_files($tmp, "clock_$n->{name}.tmp" => "$offset\n");
	rename "$tmp/clock_$n->{name}.tmp", $n->{clock} or die "rename: $!";
	note "clock of $n->{name} set to $offset";
	return;
}

# Start (create the first time, then run) a node's pg_autoctl with its
# fake clock: LD_PRELOAD and IDGEN_FAKECLOCK_FILE in pg_autoctl's
# environment reach the postgres it starts
sub start_keeper
{
	my ($n) = @_;
	my @cmd;
	clock($n, '+0') unless -e $n->{clock};
	if ($n->{created}++)
	{
		@cmd = ('pg_autoctl', 'run', '--pgdata', $n->{data});
	}
	else
	{
		@cmd = (
			'pg_autoctl', 'create', 'postgres', '--pgdata', $n->{data},
			'--pgport', $n->{pg_port}, '--hostname', '127.0.0.1',
			'--listen', '127.0.0.1',
			'--name', $n->{name}, '--username', $user, '--dbname', 'postgres',
			'--auth', 'trust', '--no-ssl', '--pgctl', $pgctl,
			'--monitor', $monitor_uri, '--run');
	}
	$n->{proc} = start_proc("keeper_$n->{name}",
		{ %xdg, IdgenTest::fakeclock_env($n->{clock}) }, @cmd);
	return;
}

sub conn
{
	my ($n) = @_;
	return "host=127.0.0.1 port=$n->{pg_port} dbname=" . ($n->{db} // 'postgres')
	  . ' user=' . ($n->{user} // $user);
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

# A node's state as the monitor sees it: "reported/goal"
sub state
{
	my ($n) = @_;
	return (sql($monitor,
		"SELECT reportedstate || '/' || goalstate FROM pgautofailover.node WHERE nodename = '$n->{name}'"))[1];
}

# The primary (writable; "single" or "wait_primary" while it has no
# secondary), once there is one
sub leader
{
	my $leader;
	wait_until('a writable primary', sub {
		($leader) =
		  grep { state($_) =~ m{^(single|primary|wait_primary)/\1$} } values %node;
		return $leader
		  && (sql($leader, 'SHOW transaction_read_only'))[1] eq 'off'
		  && (sql($leader, 'SELECT pg_is_in_recovery()'))[1] eq 'f';
	});
	return $leader;
}

sub other { my ($n) = @_; return $node{ $n->{name} eq 'n1' ? 'n2' : 'n1' }; }

# Wait until $n is the secondary, streaming, synchronous on the primary
sub replica_ready
{
	my ($n) = @_;
	my $p = other($n);
	wait_until("$n->{name} as synchronous secondary", sub {
		state($n) eq 'secondary/secondary'
		  && (sql($n, 'SELECT status FROM pg_stat_wal_receiver'))[1] eq 'streaming'
		  && (sql($p,
			"SELECT sync_state IN ('sync', 'quorum') FROM pg_stat_replication WHERE application_name = 'pgautofailover_standby_"
			  . ($n->{name} eq 'n1' ? 1 : 2) . "'"))[1] eq 't';
	});
	return;
}

start_keeper($node{n1});
my $primary = leader();
is($primary->{name}, 'n1', 'pg_autoctl registered n1 as the primary');
like(
	slurp_file("$node{n1}{data}/postgresql.conf"),
	qr/^include 'postgresql-auto-failover.conf'.*^shared_preload_libraries = 'pg_stat_statements,idgen'/ms,
	"idgen's lines come after pg_autoctl's include");
safe_sql($primary, q{
	CREATE EXTENSION idgen;
	CREATE TABLE ids (id bigint PRIMARY KEY DEFAULT idgen.snowflake_nextval(),
		src text NOT NULL);
	SELECT idgen.segment_create('orders', step => 100);
});
start_keeper($node{n2});
replica_ready($node{n2});
like(safe_sql($node{n2}, 'SHOW shared_preload_libraries'),
	qr/idgen/, 'idgen is preloaded on the secondary pg_autoctl made');
like(safe_sql($primary, 'SHOW synchronous_standby_names'),
	qr/pgautofailover_standby/, "pg_auto_failover's replication is synchronous");

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
	cmp_ok($new, '>', $smax,
		"$label: a snowflake ID of the new primary is above every one received before");
	cmp_ok($seg, '>', $gmax,
		"$label: a segment ID of the new primary is above every one received before");
	clients_progress();
	return;
}

clients_progress();

# --- 1. planned switchover through pg_autoctl ---
my $old = $primary;
my $t0 = time();
my $cand = other($old);
my ($sw_out, $sw_err) = ('', '');
{
	local %ENV = (%ENV, %xdg);
	IPC::Run::run(
		[ 'pg_autoctl', 'perform', 'switchover', '--monitor', $monitor_uri,
		  '--wait', $PostgreSQL::Test::Utils::timeout_default ],
		'<', \undef, '>', \$sw_out, '2>', \$sw_err)
	  or die "pg_autoctl perform switchover failed: $sw_out $sw_err";
}
$primary = leader();
is($primary->{name}, $cand->{name}, 'switchover: the candidate leads');
check_after('switchover', $primary, $t0);
replica_ready($old);

# Kill a node's postmaster and its pg_autoctl (the process group) with
# SIGKILL
sub kill_node
{
	my ($n) = @_;
	open my $fh, '<', "$n->{data}/postmaster.pid" or die "no postmaster.pid: $!";
	my $pm = <$fh>;
	close $fh;
	chomp $pm;
	kill 'KILL', -$n->{proc}{pid}, $pm;
	note "killed pg_autoctl $n->{proc}{pid} (its group) and postmaster $pm of $n->{name}";
	wait_until('the killed processes to go', sub {
		waitpid($n->{proc}{pid}, 1);
		!IdgenTest::alive($pm) && !IdgenTest::alive($n->{proc}{pid});
	});
	return;
}

# --- 2. unplanned: kill -9 of the primary and its pg_autoctl ---
$old = $primary;
$t0 = time();
kill_node($old);
$primary = leader();
is($primary->{name}, other($old)->{name}, 'kill: the secondary took over');
check_after('kill', $primary, $t0);
start_keeper($old);
replica_ready($old);
clients_progress();

# --- 3. kill while the secondary's clock is 90 s behind and its WAL held ---
$old = $primary;
my $next = other($old);
clock($next, '-90');
my $skew = safe_sql($old, 'SELECT extract(epoch FROM clock_timestamp())')
  - safe_sql($next, 'SELECT extract(epoch FROM clock_timestamp())');
cmp_ok($skew, '>', 80, "clock: the secondary's clock is behind the primary's ($skew s)");
# Hold the primary's WAL back: its walsenders stopped (SIGSTOP), so that
# what it writes from now on never leaves it (a stopped walreceiver would
# not do: the kernel's socket buffers keep what was sent to it)
my @walsnd = split /\n/, safe_sql($old, 'SELECT pid FROM pg_stat_replication');
kill 'STOP', @walsnd;
usleep(1_500_000);
my $last_old = snowflake_max();
my $held = safe_sql($old, 'SELECT pg_current_wal_lsn()');
note "clock: WAL held back: the primary is at $held, the secondary has received "
  . safe_sql($next, 'SELECT pg_last_wal_receive_lsn()');
$t0 = time();
kill 'KILL', @walsnd;
kill_node($old);
$primary = leader();
is($primary->{name}, $next->{name}, 'clock: the secondary with the slow clock took over');
is(safe_sql($primary, "SELECT clock_timestamp() < idgen.id_timestamp($last_old)"),
	't', "clock: the new primary's clock is below the old primary's last ID");
check_after('clock behind', $primary, $t0);
start_keeper($old);
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
		"client $c->{name}: its snowflake IDs increase through every failover");
}
my @dups = duplicates(@snow);
is(scalar @dups, 0, 'no snowflake ID received twice, across clients and failovers')
  or diag "duplicates: @dups[0 .. ($#dups > 9 ? 9 : $#dups)]";
@dups = duplicates(@seg);
is(scalar @dups, 0, 'no segment ID received twice across failovers')
  or diag "duplicates: @dups[0 .. ($#dups > 9 ? 9 : $#dups)]";
note 'snowflake_status of the primary: '
  . safe_sql($primary, 'SELECT row_to_json(s) FROM idgen.snowflake_status() s');
note 'snowflake_status of the rejoined secondary: '
  . (sql(other($primary), 'SELECT row_to_json(s) FROM idgen.snowflake_status() s'))[1];

done_testing();
