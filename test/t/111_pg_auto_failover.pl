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
use IPC::Run;
use Time::HiRes qw(usleep time);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;
use Failover;

neighbours_version();
plan skip_all =>
  "pg_autoctl not found: install Debian's postgresql-15-auto-failover"
  unless grep { -x "$_/pg_autoctl" } split /:/, $ENV{PATH};

my $tmp = $PostgreSQL::Test::Utils::tmp_check . '/autofailover';
make_path($tmp);
my $bindir = `pg_config --bindir`;
chomp $bindir;
my $user = 'postgres';
failover_init($tmp, $user);

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
track_datadir("$tmp/monitor");
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
	track_datadir($n->{data});
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

# Start (create the first time, then run) a node's pg_autoctl with its
# fake clock: LD_PRELOAD and IDGEN_FAKECLOCK_FILE in pg_autoctl's
# environment reach the postgres it starts
sub start_keeper
{
	my ($n) = @_;
	my @cmd;
	node_clock($n, '+0') unless -e $n->{clock};
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

start_clients($node{n1}, $node{n2});
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

# --- 2. unplanned: kill -9 of the primary and its pg_autoctl ---
$old = $primary;
$t0 = time();
kill_node($old, 1);
$primary = leader();
is($primary->{name}, other($old)->{name}, 'kill: the secondary took over');
check_after('kill', $primary, $t0);
start_keeper($old);
replica_ready($old);
clients_progress();

# --- 3. kill while the secondary's clock is 90 s behind and its WAL held ---
# (pg_autoctl killed with its process group)
$primary = kill_with_clock_behind(
	old => $primary,
	next => other($primary),
	standby => 'secondary',
	group => 1,
	leader => \&leader,
	restart => \&start_keeper,
	ready => \&replica_ready);

# --- the outcome ---
check_outcome(primary => $primary, standby => other($primary));

done_testing();
