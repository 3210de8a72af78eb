# Failover.pm
#
# The parts t/110_patroni.pl and t/111_pg_auto_failover.pl share: two data
# nodes run by a failover manager, clients drawing IDs through a libpq
# multi-host connection string, and the checks after each failover.  A node
# is a hash: name, pg_port, data (its data directory), clock (its
# test/fakeclock.c offset file), proc (its manager's process), and db and
# user where they are not postgres.
#
#   failover_init($tmp, $user)         scratch directory, database superuser
#   start_proc($name, \%env, @cmd)     a program in a process group of its own
#   track_datadir($dir)                stopped at the end whatever happens
#   node_clock($n, $offset)            sets a node's fake clock ("-90")
#   sql($n, $query), safe_sql(...)     psql on one node
#   start_clients(@nodes)              the clients, through both nodes
#   clients_progress()                 waits until every client has drawn
#   check_after($label, $n, $t0, %o)   the new primary's IDs are above all
#   kill_node($n, $group)              SIGKILL of a node's manager and postmaster
#   kill_with_clock_behind(%o)         the third failover of both tests
#   check_outcome(%o)                  stops the clients, asserts the outcome
package Failover;

use strict;
use warnings;
use POSIX ();
use IPC::Run;
use Time::HiRes qw(usleep time);
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

use Exporter 'import';
our @EXPORT = qw(failover_init start_proc track_datadir node_clock
  conn sql safe_sql start_clients clients_progress check_after kill_node
  kill_with_clock_behind check_outcome);

my ($tmp, $user);
my (@procs, @datadirs, @clients);

sub failover_init
{
	($tmp, $user) = @_;
	return;
}

# Whatever happens, no manager, client or postgres is left behind.  $? is
# the test's exit status while END blocks run: pg_ctl must not change it
# (a server that stopped between the check and pg_ctl makes it fail)
END
{
	local $?;
	for my $p (@procs)
	{
		kill 'TERM', -$p->{pid} if $p->{pid} && IdgenTest::alive($p->{pid});
	}
	usleep(500_000) if @procs;
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

# Start a program in a process group of its own, output to $tmp/$name.log
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

sub track_datadir
{
	push @datadirs, @_;
	return;
}

# Set a node's clock offset (test/fakeclock.c reads the file on each call)
sub node_clock
{
	my ($n, $offset) = @_;
	write_files($tmp, "clock_$n->{name}.tmp" => "$offset\n");
	rename "$tmp/clock_$n->{name}.tmp", $n->{clock} or die "rename: $!";
	note "clock of $n->{name} set to $offset";
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

# Clients through a multi-host connection string to @nodes
# (target_session_attrs=read-write), each a psql loop that connects again
# whenever its connection is lost and writes every ID it receives to its
# .out file, committed or not: two insert snowflake IDs into table ids, one
# draws snowflake IDs without writing, one draws segment IDs of tag orders
sub start_clients
{
	my (@nodes) = @_;
	my $multi = 'host=' . join(',', map { '127.0.0.1' } @nodes)
	  . ' port=' . join(',', map { $_->{pg_port} } @nodes)
	  . " dbname=postgres user=$user target_session_attrs=read-write connect_timeout=3";
	my %client_sql = (
		insert1 => "INSERT INTO ids (src) SELECT 'c' FROM generate_series(1, 10) RETURNING id;",
		insert2 => "INSERT INTO ids (src) SELECT 'c' FROM generate_series(1, 10) RETURNING id;",
		select => 'SELECT idgen.snowflake_nextval() FROM generate_series(1, 10);',
		segment => "SELECT idgen.segment_nextval('orders') FROM generate_series(1, 10);",
	);
	for my $c (sort keys %client_sql)
	{
		my $script = "$tmp/client_$c.sql";
		write_files($tmp, "client_$c.sql" => "$client_sql{$c}\n" x 200);
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
	return;
}

# IDs a client has received so far, in order
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

# After a failover: the new primary's IDs above every ID received before.
# With unordered => 1 (a promoted node that issues under a node id of its
# own) the snowflake comparison is only noted
sub check_after
{
	my ($label, $n, $t0, %o) = @_;
	my ($smax, $gmax) = (snowflake_max(), segment_max());
	my $new = safe_sql($n, 'SELECT idgen.snowflake_nextval()');
	my $seg = safe_sql($n, "SELECT idgen.segment_nextval('orders')");
	note sprintf('%s: %.1f s from the start to a writable new primary %s',
		$label, time() - $t0, $n->{name});
	if ($o{unordered})
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

# Kill a node's postmaster and its manager with SIGKILL: the manager's
# process alone, or with $group its whole process group
sub kill_node
{
	my ($n, $group) = @_;
	open my $fh, '<', "$n->{data}/postmaster.pid" or die "no postmaster.pid: $!";
	my $pm = <$fh>;
	close $fh;
	chomp $pm;
	kill 'KILL', ($group ? -$n->{proc}{pid} : $n->{proc}{pid}), $pm;
	note "killed manager $n->{proc}{pid}" . ($group ? ' (its group)' : '')
	  . " and postmaster $pm of $n->{name}";
	wait_until('the killed processes to go', sub {
		waitpid($n->{proc}{pid}, 1);
		!IdgenTest::alive($pm) && !IdgenTest::alive($n->{proc}{pid});
	});
	return;
}

# Wait until a standby of $n streams and is waited for: it has flushed up
# to where $n was, and over a stretch in which every client drew (so
# segment allocations were made), no allocation went out past it (the
# sum of segment_status's standby_timeouts and unprotected is unchanged)
sub standby_waited_for
{
	my ($n) = @_;
	my $late = 'SELECT coalesce(sum(standby_timeouts + unprotected), 0) FROM idgen.segment_status';
	# A query that fails (the primary restarting under its manager) is
	# a reason to look again, not to give up
	my $ask = sub {
		my ($rc, $out, $err) = sql($n, $_[0]);
		note "on $n->{name}, failed: $_[0]: $err" if $rc;
		return $rc ? undef : $out;
	};
	wait_until("a standby of $n->{name} that is waited for", sub {
		my $before = $ask->($late) // return 0;
		my $at = $ask->('SELECT pg_current_wal_lsn()') // return 0;
		wait_until("a standby to stream and flush up to $at", sub {
			($ask->("SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming' AND flush_lsn >= '$at'") // 0) > 0;
		});
		clients_progress();
		my $after = $ask->($late) // return 0;
		note "$n->{name}: $before -> $after segment allocations out late or unprotected; waiting again"
		  if $after != $before;
		return $after == $before;
	});
	return;
}

# The third failover: the standby's clock set 90 s behind the primary's
# (far more than a failover takes, so that the new primary's clock is still
# below the old primary's last ID however slow the machine: checked), the
# primary's walsenders stopped (SIGSTOP) for 1.5 s so that what it writes
# from then on never leaves it (a stopped walreceiver would not do: the
# kernel's socket buffers keep what was sent to it), then the primary and
# its manager killed.  %o: old, next (the nodes), standby (the word for
# it), group (kill_node's), leader, restart and ready (callbacks: the
# writable primary once there is one, start a node's manager again, wait
# until a node streams as standby), unordered (check_after's), label (for
# the test names, default "clock").  Returns the new primary
sub kill_with_clock_behind
{
	my (%o) = @_;
	my ($old, $next, $standby) = @o{qw(old next standby)};
	my $l = $o{label} // 'clock';
	# The scenario holds back WAL from a standby that streams and is waited
	# for.  A standby that had just rejoined, or whose walsender had just
	# been ended, lets allocations out unwaited for (unprotected), and one
	# that lagged past idgen.segment_standby_wait is excused until it
	# catches up (standby_timeouts): cases this test is not about (t/117
	# is).  So wait until a standby streams, has flushed up to
	# where the primary was, and no allocation went out late or
	# unprotected while the clients drew
	standby_waited_for($old);
	node_clock($next, '-90');
	my $skew = safe_sql($old, 'SELECT extract(epoch FROM clock_timestamp())')
	  - safe_sql($next, 'SELECT extract(epoch FROM clock_timestamp())');
	cmp_ok($skew, '>', 80, "$l: the $standby\'s clock is behind the primary's ($skew s)");
	my @walsnd = split /\n/, safe_sql($old, 'SELECT pid FROM pg_stat_replication');
	kill 'STOP', @walsnd;
	usleep(1_500_000);
	my $last_old = snowflake_max();
	my $held = safe_sql($old, 'SELECT pg_current_wal_lsn()');
	note "clock: WAL held back: the primary is at $held, the $standby has received "
	  . safe_sql($next, 'SELECT pg_last_wal_receive_lsn()');
	my $t0 = time();
	kill 'KILL', @walsnd;
	kill_node($old, $o{group});
	my $primary = $o{leader}->();
	is($primary->{name}, $next->{name}, "$l: the $standby with the slow clock took over");
	is(safe_sql($primary, "SELECT clock_timestamp() < idgen.id_timestamp($last_old)"),
		't', "$l: the new primary's clock is below the old primary's last ID");
	check_after($o{label} // 'clock behind', $primary, $t0, unordered => $o{unordered});
	$o{restart}->($old);
	$o{ready}->($old);
	clients_progress();
	return $primary;
}

# Stop the clients and assert the outcome: no call failed with an error of
# idgen, no ID received twice (snowflake IDs across clients, segment IDs),
# and, unless $o{unordered}, each client's snowflake IDs in increasing
# order.  $o{primary} and $o{standby}: nodes whose snowflake_status is noted
sub check_outcome
{
	my (%o) = @_;
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
		  unless $o{unordered};
	}
	my @dups = duplicates(@snow);
	is(scalar @dups, 0, 'no snowflake ID received twice, across clients and failovers')
	  or diag "duplicates: @dups[0 .. ($#dups > 9 ? 9 : $#dups)]";
	@dups = duplicates(@seg);
	is(scalar @dups, 0, 'no segment ID received twice across failovers')
	  or diag "duplicates: @dups[0 .. ($#dups > 9 ? 9 : $#dups)]";
	# Notes only: a node the manager is restarting may not answer
	for my $n ($o{primary}, $o{standby})
	{
		note "snowflake_status of $n->{name}: "
		  . (sql($n, 'SELECT row_to_json(s) FROM idgen.snowflake_status() s'))[1];
	}
	return;
}

1;
