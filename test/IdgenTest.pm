# IdgenTest.pm
#	Helpers for idgen's TAP tests that crash servers, move their clocks and
#	promote standbys.
#
# Clocks are moved with test/fakeclock.c, built here on first use: a node
# made with faketime => 1 starts with that library preloaded and reads its
# clock offset (e.g. "-2", "-0.005", "-1h", "+0") from a file on every call,
# so set_clock() changes the clock of the running server at once.  The
# monotonic clock is left alone, so PostgreSQL's timeouts and latches keep
# working.  start_node() dies unless the started server reads that clock.
# (Not libfaketime: it is not safe in PostgreSQL's SIGALRM handler, see
# fakeclock.c.)
#
# IDs are captured on the client side by "drawers": psql sessions running in
# the background that draw IDs in a loop and write every ID they receive to a
# file, so an ID counts as issued as soon as a client has seen it, whether or
# not any transaction holding it committed.
package IdgenTest;

use strict;
use warnings;

use Exporter 'import';
use File::Basename qw(dirname);
use File::Path ();
use File::Spec;
use IPC::Run;
use Time::HiRes qw(usleep time);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

our @EXPORT = qw(clients_lane idgen_node idgen_conf idgen_standby start_node enable_faketime fakeclock_env set_clock crash_node
  wait_ready wait_until start_drawer stop_drawers finish_drawer start_pgbench
  finish_pgbench draw_ids try_sql node_of_new_id first_disorder duplicates max_of min_of
  clock_error_re no_unexpected_errors start_load wait_for_clock drawn_count
  wait_drawn repo_file require_jdk write_files write_file run_cmd run_page_setup works cc_build
  neighbours_version default_version);

# The top of the source tree (this file is in test/), found when loaded
my $top = File::Spec->rel2abs(dirname(__FILE__) . '/..');

# A file of the source tree, by its path from the top
sub repo_file
{
	my ($path) = @_;
	return "$top/$path";
}

# The extension's default version, from idgen.control (dies without one)
sub default_version
{
	my ($v) = slurp_file(repo_file('idgen.control')) =~ /^default_version\s*=\s*'([^']+)'/m;
	die "idgen.control has no default_version" unless defined $v;
	return $v;
}

# Tests of neighbouring tools (failover managers, other languages' drivers)
# run on one PostgreSQL version only, IDGEN_NEIGHBOURS_MAJOR of
# test/pg_major.sh (default 15): this skips the whole test (plan skip_all)
# on any other version.  The skip line names no package, so test/run.sh
# does not count it as a missing one.
sub neighbours_version
{
	my $want = $ENV{IDGEN_NEIGHBOURS_MAJOR} // 15;
	my $have = `pg_config --version` // '';
	$have = $have =~ /PostgreSQL (\d+)/ ? $1 : 0;
	plan skip_all => "neighbouring tools are tested on PostgreSQL $want only, this is $have"
	  unless $have == $want;
	return;
}

# The clients of t/098 that run on this PostgreSQL version: 'all' on
# IDGEN_NEIGHBOURS_MAJOR, 'ruby' on IDGEN_CLIENTS_SECOND_MAJOR (the clients
# whose next Debian release's versions differ in a way docs/clients.md's
# code feels); elsewhere the whole test is skipped (plan skip_all), with a
# line that names no package
sub clients_lane
{
	my $all = $ENV{IDGEN_NEIGHBOURS_MAJOR} // 15;
	my $second = $ENV{IDGEN_CLIENTS_SECOND_MAJOR} // 17;
	my $have = `pg_config --version` // '';
	$have = $have =~ /PostgreSQL (\d+)/ ? $1 : 0;
	return 'all' if $have == $all;
	return 'ruby' if $have == $second;
	plan skip_all => "these clients are tested on PostgreSQL $all and $second only, this is $have";
	return;
}

# The clock error of snowflake.c, as psql shows it with VERBOSITY verbose
sub clock_error_re
{
	return
	  qr/ERROR:  58000: could not generate a snowflake ID: the system clock is \d+ ms behind the generator/;
}

# javac and java from PATH; skips the whole test (plan skip_all) without them
sub require_jdk
{
	my ($javac, $java);
	for my $dir (split /:/, $ENV{PATH} // '')
	{
		$javac //= "$dir/javac" if -x "$dir/javac";
		$java //= "$dir/java" if -x "$dir/java";
	}
	plan skip_all =>
	  'javac not found: install Debian\'s default-jdk-headless (test/setup.sh does)'
	  unless $javac && $java;
	return ($javac, $java);
}

# Write files under $dir: a hash of relative path => text (directories made)
sub write_files
{
	my ($dir, %files) = @_;

	while (my ($path, $text) = each %files)
	{
		my $file = "$dir/$path";
		File::Path::make_path(dirname($file));
		open(my $f, '>', $file) or die "$file: $!";
		print $f $text;
		close($f);
	}
}

# Write $text to $path, whose folder exists; returns $path
sub write_file
{
	my ($path, $text) = @_;
	open my $fh, '>', $path or die "$path: $!";
	print $fh $text;
	close $fh;
	return $path;
}

# Run the setup block of docs/clients.md (its code, written to
# $dir/setup.sh; without it, the script written before runs again) as this
# user, a superuser, with bash -e: its "runuser -u postgres --" runs the
# command as it is (a stand-in runuser in $dir/bin).  Returns (ok, stdout,
# stderr), as run_cmd.
sub run_page_setup
{
	my ($dir, $code) = @_;

	File::Path::make_path("$dir/bin");
	write_file("$dir/bin/runuser", "#!/bin/sh\nwhile [ \"\$1\" != -- ]; do shift; done\nshift\nexec \"\$@\"\n");
	chmod 0755, "$dir/bin/runuser";
	write_file("$dir/setup.sh", $code) if defined $code;
	return run_cmd([ 'bash', '-e', "$dir/setup.sh" ], env => { PATH => "$dir/bin:$ENV{PATH}" });
}

# Run a command (an array reference), its stdin empty; returns (ok, stdout,
# stderr).  Options: env => { VAR => value } added to the environment, dir =>
# the folder it runs in.  A program that is missing is a failure, with
# IPC::Run's message in stderr.
sub run_cmd
{
	my ($cmd, %opt) = @_;
	my ($out, $err) = ('', '');
	local %ENV = (%ENV, %{ $opt{env} // {} });
	my @init = defined $opt{dir}
	  ? (init => sub { chdir($opt{dir}) or die "chdir $opt{dir}: $!" })
	  : ();
	my $ok = eval { IPC::Run::run($cmd, '<', \'', '>', \$out, '2>', \$err, @init) };
	$err .= $@ unless $ok;
	return ($ok, $out, $err);
}

# Whether a command (run_cmd's arguments) succeeds
sub works
{
	my ($ok) = run_cmd(@_);
	return $ok;
}

# Settings every test node gets (shared_preload_libraries is added by
# idgen_conf)
my $base_conf = <<'EOC';
idgen.database = 'postgres'
log_statement = none
EOC

# Compile C source $src into $out with cc (or $CC) and the given flags;
# dies with the compiler's messages
sub cc_build
{
	my ($out, $src, @flags) = @_;
	my $cc = $ENV{CC} // 'cc';
	my ($stdout, $stderr);

	IPC::Run::run([ $cc, @flags, '-o', $out, $src ],
		'>', \$stdout, '2>', \$stderr)
	  or die "could not build $src with $cc: $stderr";
	return;
}

# test/fakeclock.c built into tmp_check once per run (by the first test
# that needs it; the file appears whole, by rename); its path
sub fakeclock_lib
{
	my $lib = $PostgreSQL::Test::Utils::tmp_check . '/fakeclock.so';

	return $lib if -e $lib;
	my $tmp = "$lib.$$";
	cc_build($tmp, repo_file('test/fakeclock.c'),
		qw(-shared -fPIC -O2 -Wall -Wextra -Werror));
	rename $tmp, $lib or die "could not rename $tmp: $!";
	return $lib;
}

# The environment that gives a process (a server, pg_upgrade, a program)
# the fake clock of a clock file (a node's is $node->{idgen_clock}), as a
# list of name => value.  With $only (a program's name), only that
# program's processes take it: a cluster manager started with
# fakeclock_env($file, 'postgres') keeps the real clock and its servers
# take the fake one
sub fakeclock_env
{
	my ($file, $only) = @_;

	return (LD_PRELOAD => fakeclock_lib(), IDGEN_FAKECLOCK_FILE => $file,
		$only ? (IDGEN_FAKECLOCK_ONLY => $only) : ());
}

# Give a node a fake clock, starting at the real time
sub enable_faketime
{
	my ($node) = @_;

	fakeclock_lib();
	$node->{idgen_clock} =
	  $PostgreSQL::Test::Utils::tmp_check . '/clock_' . $node->name . '.rc';
	set_clock($node, '+0');
	return;
}

# postgresql.conf text that preloads idgen.
#   node_id => N, 'auto' or 'citus' (default 1; undef: no idgen.node_id line),
#   libraries => [ names ] of libraries preloaded before idgen (e.g.
#   [ 'citus' ], which must come first), conf => extra postgresql.conf text
sub idgen_conf
{
	my (%opt) = @_;
	my $node_id = exists $opt{node_id} ? $opt{node_id} : 1;
	my $libs = join(',', @{ $opt{libraries} // [] }, 'idgen');
	my $conf = "shared_preload_libraries = '$libs'\n" . $base_conf;

	if (defined $node_id)
	{
		$node_id = "'$node_id'" unless $node_id =~ /^\d+$/;
		$conf .= "idgen.node_id = $node_id\n";
	}
	return $conf . ($opt{conf} // '');
}

# A new, initialized (not started) node, with idgen preloaded unless
# preload => 0 (a plain server: a registry, a foreign shard).
#   node_id, libraries => as for idgen_conf,
#   allows_streaming => 0|1|'logical', faketime => 0|1,
#   conf => extra postgresql.conf text
sub idgen_node
{
	my ($name, %opt) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);

	$node->init(allows_streaming => $opt{allows_streaming} // 0);
	if ($opt{preload} // 1)
	{
		$node->append_conf('postgresql.conf', idgen_conf(%opt));
	}
	elsif (defined $opt{conf})
	{
		$node->append_conf('postgresql.conf', $opt{conf});
	}
	# Keep WAL for standbys without slots, across backups and checkpoints
	$node->append_conf('postgresql.conf', "wal_keep_size = '256MB'\n")
	  if $opt{allows_streaming};
	enable_faketime($node) if $opt{faketime};
	return $node;
}

# A streaming standby of $primary made by pg_basebackup (its configuration,
# node id included, is the primary's).  Options as for idgen_node.
sub idgen_standby
{
	my ($primary, $name, %opt) = @_;
	my $backup = "backup_for_$name";
	my $node = PostgreSQL::Test::Cluster->new($name);

	$primary->backup($backup);
	$node->init_from_backup($primary, $backup, has_streaming => 1);
	$node->append_conf('postgresql.conf', $opt{conf}) if $opt{conf};
	enable_faketime($node) if $opt{faketime};
	return $node;
}

# Start a node, with its fake clock if it has one
sub start_node
{
	my ($node, %params) = @_;

	my $started;
	{
		local %ENV = %ENV;
		%ENV = (%ENV, fakeclock_env($node->{idgen_clock})) if $node->{idgen_clock};
		$started = $node->start(%params);
	}
	check_fake_clock($node) if $started && $node->{idgen_clock};
	return $started;
}

# A node's clock offset in seconds, as its clock file says
sub clock_offset
{
	my ($node) = @_;

	open my $fh, '<', $node->{idgen_clock}
	  or die "could not read $node->{idgen_clock}: $!";
	my $text = <$fh>;
	close $fh;
	$text =~ /^\s*([+-]?)(\d+(?:\.\d*)?)([smhd]?)\s*$/
	  or die "clock file $node->{idgen_clock} says \"$text\"";
	my $secs = $2 * { '' => 1, s => 1, m => 60, h => 3600, d => 86400 }->{$3};
	return $1 eq '-' ? -$secs : $secs;
}

# Die unless a started node reads its fake clock: clock_timestamp() in the
# server is the real time plus the file's offset, as read before and after
# the query (1 ms for rounding).  A test whose clock silently did not move
# would pass without testing a step at all.  Skipped when the server takes
# no query (a standby without hot_standby).
sub check_fake_clock
{
	my ($node) = @_;
	my $offset = clock_offset($node);
	my $before = time;
	my ($ret, $now) = $node->psql('postgres',
		'SELECT extract(epoch FROM clock_timestamp())');
	my $after = time;

	return if $ret != 0;
	die sprintf(
		"the fake clock of node %s is not in effect: the server reads %.3f, the real time %.3f .. %.3f, offset %s s",
		$node->name, $now, $before, $after, $offset)
	  unless $now >= $before + $offset - 0.001
	  && $now <= $after + $offset + 0.001;
	return;
}

# Set a node's clock offset from the real time: "+0", "-0.005", "-2", "-1h"
sub set_clock
{
	my ($node, $offset) = @_;
	my $file = $node->{idgen_clock} or die "node has no fake clock";

	# Replace the file atomically: fakeclock.c reads it on every call
	open my $fh, '>', "$file.tmp" or die "could not write $file.tmp: $!";
	print $fh "$offset\n";
	close $fh;
	rename "$file.tmp", $file or die "could not rename $file.tmp: $!";
	note "clock of node " . $node->name . " set to $offset";
	return;
}

# Is a process alive (and not a zombie)?
sub alive
{
	my ($pid) = @_;

	open my $fh, '<', "/proc/$pid/stat" or return 0;
	my $stat = <$fh>;
	close $fh;
	return 0 unless defined $stat;
	return $stat !~ /^\d+ \(.*\) Z /s;
}

# Pids of a process's children
sub children
{
	my ($ppid) = @_;
	my @kids;

	opendir my $dh, '/proc' or die "could not read /proc: $!";
	for my $pid (grep { /^\d+$/ } readdir $dh)
	{
		open my $fh, '<', "/proc/$pid/stat" or next;
		my $stat = <$fh>;
		close $fh;
		push @kids, $pid
		  if defined $stat && $stat =~ /^\d+ \(.*\) \S (\d+) /s && $1 == $ppid;
	}
	closedir $dh;
	return @kids;
}

# Crash a running node with SIGKILL: the postmaster only (its children see
# it die and exit on their own, finishing what they are doing), or with
# all => 1 every server process at once.  Returns once all of them are gone.
sub crash_node
{
	my ($node, %opt) = @_;
	my $pm = $node->{_pid} or die "node " . $node->name . " is not running";
	my @kids = children($pm);

	note "killing node " . $node->name . " with SIGKILL: postmaster $pm"
	  . ($opt{all} ? " and children @kids" : "");
	kill 'KILL', $pm, ($opt{all} ? @kids : ());
	$node->{_pid} = undef;

	# The postmaster's pid must be gone for good (not even a zombie), or
	# the new postmaster takes the old lock file for a live one
	my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
	while (-e "/proc/$pm" || grep { alive($_) } @kids)
	{
		if (time() > $deadline)
		{
			my @left = grep { alive($_) } $pm, @kids;
			diag "server processes still alive after the crash: @left";
			kill 'KILL', @left;
			$deadline = time() + 10;
		}
		usleep(20_000);
	}
	return;
}

# Wait until the node's worker runs and has published a reservation
sub wait_ready
{
	my ($node) = @_;

	$node->poll_query_until('postgres',
		"SELECT worker_running AND reserved_until IS NOT NULL FROM idgen.snowflake_status()"
	) or die "idgen worker of node " . $node->name . " did not get ready";
	return;
}

# Wait (polling every 0.1 s, up to the test timeout) until $cond returns
# true; dies naming $what after the timeout
sub wait_until
{
	my ($what, $cond) = @_;
	my $deadline = Time::HiRes::time() + $PostgreSQL::Test::Utils::timeout_default;
	until ($cond->())
	{
		die "timed out waiting for $what" if Time::HiRes::time() > $deadline;
		Time::HiRes::usleep(100_000);
	}
	return;
}

my $drawer_seq = 0;

# Start the usual load on a node: a psql session selecting IDs, one
# inserting them, and 2 pgbench clients inserting; returns once the table
# "ids" holds $rows rows.  Returns the drawers and the pgbench run.
sub start_load
{
	my ($node, $rows) = @_;
	my @drawers = (
		start_drawer($node, name => 'select'),
		start_drawer(
			$node,
			name => 'insert',
			sql =>
			  "INSERT INTO ids (src) SELECT 'psql' FROM generate_series(1, 20) RETURNING id;"
		));
	my $pgbench = start_pgbench($node,
		"INSERT INTO ids (src) VALUES ('pgbench');", clients => 2);

	$node->poll_query_until('postgres', "SELECT count(*) >= $rows FROM ids")
	  or die "no load on node " . $node->name;
	# Every session has received IDs (waited for, not assumed)
	for my $d (@drawers)
	{
		wait_drawn($d, 0) > 0
		  or die "session $d->{name} of node " . $node->name . " drew no ID";
	}
	return (\@drawers, $pgbench);
}

# Call snowflake_nextval every 200 ms for up to $seconds until it succeeds.
# Returns the number of failures, how many of them were not the clock error,
# the first ID (undef if none came) and a list of how many ms behind the
# generator each clock error said the clock was.
sub wait_for_clock
{
	my ($node, $seconds) = @_;
	my ($errors, $other, $first) = (0, 0, undef);
	my @behind;
	my $deadline = time() + $seconds;

	while (time() < $deadline)
	{
		my ($ret, $out, $err) =
		  try_sql($node, 'SELECT idgen.snowflake_nextval()');
		if ($ret == 0)
		{
			$first = $out + 0;
			last;
		}
		$errors++;
		$other++ unless $err =~ clock_error_re();
		push @behind, $1 if $err =~ /the system clock is (\d+) ms behind/;
		usleep(200_000);
	}
	return ($errors, $other, $first, \@behind);
}

# Start a background psql session drawing IDs until a row appears in table
# idgen_test_stop (create it first) or the server goes away.
#   sql => a statement returning IDs, one per row
#   db => the database (default postgres; idgen_test_stop is looked up there)
#   pause => seconds psql sleeps between batches (0 for full speed)
#   batches => how many batches at most
sub start_drawer
{
	my ($node, %opt) = @_;
	my $n = ++$drawer_seq;
	my $dir = $PostgreSQL::Test::Utils::tmp_check;
	my $sql = $opt{sql}
	  // 'SELECT idgen.snowflake_nextval() FROM generate_series(1, 20);';
	my $pause = $opt{pause} // 0;
	my $batches = $opt{batches} // 20000;
	my %d = (
		name => $opt{name} // "drawer$n",
		script => "$dir/drawer_$n.sql",
		out => "$dir/drawer_$n.out",
		err => "$dir/drawer_$n.err");

	open my $fh, '>', $d{script} or die "could not write $d{script}: $!";
	print $fh "\\set stop false\n";
	for (1 .. $batches)
	{
		print $fh "$sql\n";
		# psql sleeps, not the server: pg_sleep() follows the fake clock
		print $fh "\\! sleep $pause\n" if $pause;
		print $fh "SELECT EXISTS (SELECT FROM idgen_test_stop) AS stop \\gset\n"
		  . "\\if :stop\n\\echo STOPPED\n\\q\n\\endif\n";
	}
	print $fh "\\echo EXHAUSTED\n";
	close $fh;

	$d{h} = IPC::Run::start(
		[
			'psql', '-X', '-A', '-t', '-q', '-v', 'VERBOSITY=verbose',
			'-d', $node->connstr($opt{db} // 'postgres'), '-f', $d{script}
		],
		'<', \undef, '>', $d{out}, '2>', $d{err});
	return \%d;
}

# Wait for a drawer's psql to end; returns (ids in the order received,
# stderr text, how it ended: "stopped", "exhausted" or "lost")
sub finish_drawer
{
	my ($d) = @_;
	my (@ids, $end);

	eval {
		my $t = IPC::Run::timer($PostgreSQL::Test::Utils::timeout_default);
		$t->start;
		# check, not is_expired: a timer the harness does not own expires
		# only when checked
		while ($d->{h}->pumpable && $t->check)
		{
			$d->{h}->pump_nb;
			usleep(20_000);
		}
		$d->{h}->kill_kill if $d->{h}->pumpable;
		$d->{h}->finish;
	};
	open my $fh, '<', $d->{out} or die "could not read $d->{out}: $!";
	$end = 'lost';
	while (my $line = <$fh>)
	{
		chomp $line;
		if ($line =~ /^\d+$/) { push @ids, $line + 0; }
		elsif ($line eq 'STOPPED') { $end = 'stopped'; }
		elsif ($line eq 'EXHAUSTED') { $end = 'exhausted'; }
	}
	close $fh;
	my $err = PostgreSQL::Test::Utils::slurp_file($d->{err});
	return (\@ids, $err, $end);
}

# How many IDs a drawer has received so far (psql writes each result to
# its file as soon as it has it)
sub drawn_count
{
	my ($d) = @_;
	my $n = 0;

	open my $fh, '<', $d->{out} or return 0;
	while (my $line = <$fh>)
	{
		$n++ if $line =~ /^\d+\n/;
	}
	close $fh;
	return $n;
}

# Wait until a drawer has received more than $n IDs, or has ended, or the
# test timeout has passed; returns how many it has received
sub wait_drawn
{
	my ($d, $n) = @_;
	my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
	my $got;

	while (($got = drawn_count($d)) <= $n && time() < $deadline)
	{
		last unless $d->{h}->pumpable;
		usleep(20_000);
	}
	return $got;
}

# Ask every drawer of a node to stop after its current batch
sub stop_drawers
{
	my ($node) = @_;

	$node->safe_psql('postgres', 'INSERT INTO idgen_test_stop VALUES (true)');
	return;
}

my $pgbench_seq = 0;

# pgbench in the background: clients => N (default 2) run $sql (one
# transaction each time) in jobs => N threads (default 1) for up to
# seconds => N (default 60), or each exactly transactions => N times; in
# database db => name (default postgres); it ends early when the server
# goes away
sub start_pgbench
{
	my ($node, $sql, %opt) = @_;
	my $script = $PostgreSQL::Test::Utils::tmp_check . '/pgbench_'
	  . $node->name . '_' . ++$pgbench_seq . '.sql';
	my @length =
	  defined $opt{transactions}
	  ? ('-t', $opt{transactions})
	  : ('-T', $opt{seconds} // 60);

	open my $fh, '>', $script or die "could not write $script: $!";
	print $fh "$sql\n";
	close $fh;
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[
			'pgbench', '-n', '-c', $opt{clients} // 2, '-j', $opt{jobs} // 1,
			@length, '-f', $script,
			$node->connstr($opt{db} // 'postgres')
		],
		'<', \undef, '>', \$out, '2>', \$err);
	return { h => $h, out => \$out, err => \$err };
}

# Wait for a background pgbench to end; returns its stdout, stderr and
# exit code
sub finish_pgbench
{
	my ($p) = @_;

	eval {
		my $t = IPC::Run::timer($PostgreSQL::Test::Utils::timeout_default);
		$t->start;
		while ($p->{h}->pumpable && $t->check)
		{
			$p->{h}->pump_nb;
			usleep(20_000);
		}
		$p->{h}->kill_kill if $p->{h}->pumpable;
		$p->{h}->finish;
	};
	my $rc = eval { $p->{h}->result(0) } // -1;
	return (${ $p->{out} }, ${ $p->{err} }, $rc);
}

# Draw IDs in the foreground with one query; returns them in the order
# received
sub draw_ids
{
	my ($node, $n) = @_;
	my $out = $node->safe_psql('postgres',
		"SELECT idgen.snowflake_nextval() FROM generate_series(1, $n)");
	return [ map { $_ + 0 } split /\n/, $out ];
}

# Run SQL that may fail, in database db => name (default postgres); returns
# (exit code, stdout, stderr), with the SQLSTATE in error messages
sub try_sql
{
	my ($node, $sql, %opt) = @_;
	my ($ret, $out, $err) = $node->psql($opt{db} // 'postgres', $sql,
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	return ($ret, $out, $err);
}

# The node id of a new snowflake ID drawn on $node (id_decode), or the
# error (with its SQLSTATE) when the call fails
sub node_of_new_id
{
	my ($node) = @_;
	my ($ret, $out, $err) = try_sql($node,
		'SELECT (idgen.id_decode(idgen.snowflake_nextval())).node_id');
	return $ret == 0 ? $out : $err;
}

# Index of the first ID not greater than the one before it, or -1
sub first_disorder
{
	my ($ids) = @_;

	for my $i (1 .. $#$ids)
	{
		return $i if $ids->[$i] <= $ids->[ $i - 1 ];
	}
	return -1;
}

# IDs that occur more than once among all the lists given
sub duplicates
{
	my %seen;
	my @dups;

	for my $list (@_)
	{
		for my $id (@$list)
		{
			push @dups, $id if $seen{$id}++ == 1;
		}
	}
	return @dups;
}

# The server log of a node has no ERROR but those of idgen's generators
# that the tests provoke (so the worker never failed)
sub no_unexpected_errors
{
	my ($node) = @_;
	my @bad = grep {
		/ (ERROR|PANIC):  /
		  && !/could not generate a snowflake ID|cannot generate snowflake IDs during recovery/
	} split /\n/, PostgreSQL::Test::Utils::slurp_file($node->logfile);

	is(scalar @bad, 0, 'no unexpected error in the log of node ' . $node->name)
	  or diag join("\n", @bad[0 .. ($#bad > 9 ? 9 : $#bad)]);
	return;
}

# Largest and smallest of a list (0 / undef when empty)
sub max_of
{
	my $m = 0;

	for (@_) { $m = $_ if $_ > $m; }
	return $m;
}

sub min_of
{
	my $m;

	for (@_) { $m = $_ if !defined $m || $_ < $m; }
	return $m;
}

1;
