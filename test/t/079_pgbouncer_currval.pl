# 079_pgbouncer_currval.pl
#	currval behind a pooler (issue 22, point 5; issue 24, point 2):
#	pgbouncer in transaction mode resets each server connection with
#	DISCARD ALL after every transaction, which forgets snowflake_currval()
#	and segment_currval() as it forgets currval().
#
# pgbouncer has a pool of 4 server connections and serves more clients
# than that, so clients take turns on shared server connections and
# transactions of different clients run at once on different ones:
#
#  - 8 pgbench clients run 2,000 transactions; each first records what both
#    currval functions give before it has drawn (55000 "not yet defined",
#    never another client's ID), then inserts a row with a snowflake
#    default and one with a segment default (RETURNING the IDs), then
#    records both currvals beside the IDs it inserted.  Asserted: no
#    duplicate, each client's snowflake IDs increase, in every transaction
#    both currvals are the IDs that transaction inserted, and every
#    transaction read 55000 before its draws, including transactions that
#    came to a server connection right after another client's draws there
#    (there are such, as 8 clients share 4 connections).
#  - 4 transactions held open at once (so on the 4 server connections)
#    draw in turn; each reads its own IDs.  Then 4 new clients, each in an
#    open transaction on one of those connections, read 55000 from both.
#
#  - What survives a transaction under those settings (issue 29, point 6;
#    each sentence of docs/many-servers.md, "Behind a connection pooler"),
#    on a second pgbouncer database "single" with one server connection, so
#    a client's transactions run on the same one (its pid is asserted):
#    a plain SET is gone in the next transaction; SET LOCAL and
#    set_config(..., true) last to the end of their transaction;
#    ALTER DATABASE/ROLE ... SET reach a server connection opened after
#    them (not one already open, until pgbouncer's RECONNECT) and then stay
#    through DISCARD ALL; currval is forgotten by the client's own next
#    transaction; so are a session advisory lock and LISTEN; TimeZone, a
#    parameter pgbouncer tracks, is set again for its client.  And on the first database, as another application:
#    its SET, prepared statement and temporary table are gone in its next
#    transaction (the reset applies to every client of that pgbouncer).
#
# Skipped where Debian's package pgbouncer is not installed (test/setup.sh
# installs it).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use IPC::Run;
use IdgenTest;

my ($pgbouncer) =
  grep { -x $_ } (map { "$_/pgbouncer" } split(/:/, $ENV{PATH} // ''), '/usr/sbin');
plan skip_all => 'pgbouncer is not installed (Debian package pgbouncer)'
  unless $pgbouncer;

my $pool = 4;
my $clients = 8;
my $per_client = 250;
my $total = $clients * $per_client;

my $not_defined_snow =
  '55000 snowflake_currval is not yet defined in this session';
my $not_defined_seg =
  '55000 segment_currval of tag "pool" is not yet defined in this session';

my $node = idgen_node('pooled');
start_node($node);
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION idgen;
SELECT idgen.segment_create('pool', 1, 100);
CREATE TABLE snow (id bigint PRIMARY KEY DEFAULT idgen.snowflake_nextval(), c int);
CREATE TABLE seg (id bigint PRIMARY KEY DEFAULT idgen.segment_nextval('pool'), c int);
-- what one transaction saw: its backend, before drawing and after
CREATE SEQUENCE ev;
CREATE TABLE before_draw (xid bigint PRIMARY KEY, client int, pid int,
  ev bigint, snow_state text, seg_state text);
CREATE TABLE after_draw (xid bigint PRIMARY KEY, client int, pid int,
  ev bigint, snow_id bigint, seg_id bigint, snow_cur bigint, seg_cur bigint);
-- a currval, or the SQLSTATE and message of its error
CREATE FUNCTION currval_state(kind text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  IF kind = 'snowflake' THEN
    RETURN idgen.snowflake_currval()::text;
  END IF;
  RETURN idgen.segment_currval('pool')::text;
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ' ' || SQLERRM;
END $$;});
wait_ready($node);

# pgbouncer on a Unix socket of its own, a pool of $pool server connections
my $dir = PostgreSQL::Test::Utils::tempdir_short();
my $port = PostgreSQL::Test::Cluster::get_free_port();
my $user = (getpwuid($<))[0];
open my $fh, '>', "$dir/userlist.txt" or die "could not write userlist: $!";
print $fh qq{"$user" ""\n};
close $fh;
my $host = $node->host;
my $node_port = $node->port;
open $fh, '>', "$dir/pgbouncer.ini" or die "could not write pgbouncer.ini: $!";
print $fh <<"EOC";
[databases]
postgres = host=$host port=$node_port dbname=postgres
single = host=$host port=$node_port dbname=postgres pool_size=1

[pgbouncer]
listen_addr =
listen_port = $port
unix_socket_dir = $dir
auth_type = trust
auth_file = $dir/userlist.txt
admin_users = $user
pool_mode = transaction
default_pool_size = $pool
min_pool_size = 0
reserve_pool_size = 0
max_client_conn = 50
server_reset_query = DISCARD ALL
server_reset_query_always = 1
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
EOC
close $fh;
my ($bout, $berr) = ('', '');
my $bouncer = IPC::Run::start([ $pgbouncer, "$dir/pgbouncer.ini" ],
	'<', \undef, '>', \$bout, '2>', \$berr);

my @psql = (
	'psql', '-XAtq', '-v', 'VERBOSITY=verbose', '-h', $dir, '-p', $port,
	'-U', $user, '-d', 'postgres');

# A psql through pgbouncer: (exit code, stdout, stderr with SQLSTATEs)
sub pooled_psql
{
	my ($sql) = @_;
	my ($out, $err) = ('', '');
	IPC::Run::run([ @psql, '-c', $sql ], '<', \undef, '>', \$out, '2>', \$err);
	chomp $out;
	return ($? >> 8, $out, $err);
}

# Wait until pgbouncer accepts clients
my $ready = 0;
for (1 .. 600)
{
	my ($rc) = pooled_psql('SELECT 1');
	if ($rc == 0) { $ready = 1; last; }
	last unless $bouncer->pumpable;
	usleep(100_000);
}
ok($ready, 'pgbouncer accepts clients')
  or diag($berr . slurp_file("$dir/pgbouncer.log"));

# A client of pgbouncer that stays connected: a psql reading a pipe
sub open_client
{
	my %c = (in => '', out => '', err => '');
	$c{h} = IPC::Run::start(\@psql, '<', \$c{in}, '>', \$c{out}, '2>', \$c{err});
	return \%c;
}

# Run statements in a client; returns their output once psql has run them
sub client_sql
{
	my ($c, $sql) = @_;
	my $t = IPC::Run::timer($PostgreSQL::Test::Utils::timeout_default);

	$c->{out} = '';
	$c->{in} .= "$sql\n\\echo __done__\n";
	$t->start;
	while ($c->{out} !~ /^__done__$/m)
	{
		die "psql through pgbouncer did not answer: $c->{err}"
		  if !$t->check || !$c->{h}->pumpable;
		$c->{h}->pump_nb;
		usleep(10_000);
	}
	(my $out = $c->{out}) =~ s/^__done__\n//m;
	chomp $out;
	return $out;
}

sub close_client
{
	my ($c) = @_;
	$c->{in} .= "\\q\n";
	$c->{h}->finish;
	return;
}

# $pool clients, each in a transaction left open, so each holds its own
# server connection: returns the clients, and per client its backend's pid
# and what both currvals give at the start of its transaction
sub hold_all_connections
{
	my (@c, @seen);
	for (1 .. $pool)
	{
		my $c = open_client();
		push @c, $c;
		push @seen,
		  [
			split /\|/,
			client_sql(
				$c,
				q{BEGIN; SELECT pg_backend_pid(), currval_state('snowflake'), currval_state('segment');}
			) ];
	}
	return (\@c, \@seen);
}

# All server connections of the pool, opened by as many transactions at
# once (pgbouncer must give each its own)
my ($held, $seen) = hold_all_connections();
my %pool_pids = map { $_->[0] => 1 } @$seen;
is(scalar(keys %pool_pids), $pool,
	"$pool open transactions through pgbouncer hold $pool server connections");
close_client($_) for map { client_sql($_, 'COMMIT;'); $_ } @$held;

# $pool new clients hold the pool's server connections again, and each
# reads 55000 from both currvals; returns the clients, in their open
# transactions
sub new_clients_see_nothing
{
	my ($who, $what) = @_;
	my ($held, $seen) = hold_all_connections();
	is( join(',', sort map { $_->[0] } @$seen),
		join(',', sort keys %pool_pids),
		"the same server connections are held by $who");
	is( join(';', map { "$_->[1]|$_->[2]" } @$seen),
		join(';', ("$not_defined_snow|$not_defined_seg") x $pool),
		"each reads 55000 from both currvals$what");
	return $held;
}

# 8 pgbench clients on those 4 connections
my $script = "$dir/insert.sql";
open $fh, '>', $script or die "could not write $script: $!";
print $fh <<'EOS';
BEGIN;
INSERT INTO before_draw SELECT pg_current_xact_id()::text::bigint, :client_id, pg_backend_pid(), nextval('ev'), currval_state('snowflake'), currval_state('segment');
INSERT INTO snow (c) VALUES (:client_id) RETURNING id AS snow_id \gset
INSERT INTO seg (c) VALUES (:client_id) RETURNING id AS seg_id \gset
INSERT INTO after_draw SELECT pg_current_xact_id()::text::bigint, :client_id, pg_backend_pid(), nextval('ev'), :snow_id, :seg_id, idgen.snowflake_currval(), idgen.segment_currval('pool');
COMMIT;
EOS
close $fh;
my ($pout, $perr) = ('', '');
IPC::Run::run(
	[
		'pgbench', '-n', '-h', $dir, '-p', $port, '-U', $user, '-c', $clients,
		'-j', '2', '-t', $per_client, '-f', $script, 'postgres'
	],
	'<', \undef, '>', \$pout, '2>', \$perr);
is($? >> 8, 0, "$clients pgbench clients through pgbouncer ran without errors")
  or diag($perr);
like($pout, qr/number of transactions actually processed: $total\/$total/,
	"$total transactions") or diag($pout);

is($node->safe_psql('postgres', 'SELECT count(*), count(DISTINCT id) FROM snow'),
	"$total|$total", "snowflake defaults: $total rows, no duplicate");
is($node->safe_psql('postgres', 'SELECT count(*), count(DISTINCT id) FROM seg'),
	"$total|$total", "segment defaults: $total rows, no duplicate");
is( $node->safe_psql(
		'postgres', q{
SELECT count(*) FROM (
  SELECT snow_id <= lag(snow_id) OVER (PARTITION BY client ORDER BY ev) AS back
  FROM after_draw) s WHERE back}),
	'0',
	'each client\'s snowflake IDs increase from transaction to transaction');

# What the transactions saw
my ($pids, $shared) = split /\|/, $node->safe_psql(
	'postgres', q{
SELECT count(DISTINCT pid),
       count(*) FILTER (WHERE clients > 1)
FROM (SELECT pid, count(DISTINCT client) AS clients FROM after_draw GROUP BY pid) p});
ok($pids > 1 && $pids <= $pool,
	"the transactions ran on $pids server connections (of the pool of $pool)");
ok($shared > 0,
	"$shared server connections served transactions of several clients");
is( $node->safe_psql(
		'postgres', q{
SELECT count(*), count(*) FILTER (WHERE snow_cur = snow_id),
       count(*) FILTER (WHERE seg_cur = seg_id),
       count(*) FILTER (WHERE snow_id IN (SELECT id FROM snow)
                          AND seg_id IN (SELECT id FROM seg))
FROM after_draw}),
	"$total|$total|$total|$total",
	'in every transaction, snowflake_currval and segment_currval are the IDs it inserted'
);
is( $node->safe_psql(
		'postgres',
		"SELECT snow_state, seg_state, count(*) FROM before_draw GROUP BY 1, 2"),
	"$not_defined_snow|$not_defined_seg|$total",
	'every transaction, before drawing, reads 55000 from both currvals');
my $after_other = $node->safe_psql(
	'postgres', q{
SELECT count(*) FROM before_draw b
WHERE EXISTS (SELECT FROM after_draw a
              WHERE a.pid = b.pid AND a.client <> b.client AND a.ev < b.ev)});
ok($after_other > 0,
	"$after_other of them came to a server connection after another client's draws there"
);
is($node->safe_psql('postgres', 'SELECT count(*) FROM before_draw b JOIN after_draw a USING (xid, pid, client)'),
	$total, 'each transaction stayed on one server connection');

# 4 transactions at once, one on each server connection (every one of
# which served pgbench's draws), draw in turn: each reads its own IDs
$held = new_clients_see_nothing('4 new clients', '');
my @drawn;
for my $c (@$held)
{
	push @drawn,
	  client_sql($c,
		q{SELECT idgen.snowflake_nextval(), idgen.segment_nextval('pool');});
}
my @read = map {
	client_sql($_,
		q{SELECT idgen.snowflake_currval(), idgen.segment_currval('pool');})
} @$held;
is(join(';', @read), join(';', @drawn),
	'4 open transactions that drew in turn each read their own IDs, not the last drawn');
close_client($_) for map { client_sql($_, 'COMMIT;'); $_ } @$held;

# Then 4 more new clients, on the connections where those drew
$held = new_clients_see_nothing('4 more new clients', ', not the IDs drawn there last');
close_client($_) for map { client_sql($_, 'COMMIT;'); $_ } @$held;

# What survives a transaction (docs/many-servers.md, "Behind a connection
# pooler").  A script run by one psql through pgbouncer, statement by
# statement: (stdout lines, stderr with SQLSTATEs)
sub pooled_script
{
	my ($db, $sql, @opt) = @_;
	my ($out, $err) = ('', '');
	IPC::Run::run(
		[
			'psql', '-XAtq', '-v', 'VERBOSITY=verbose', '-h', $dir, '-p', $port,
			'-U', $user, '-d', $db, @opt, '-f', '-'
		],
		'<', \$sql, '>', \$out, '2>', \$err);
	return ([ split /\n/, $out ], $err);
}
my $wait = q{SELECT pg_backend_pid() || ' ' || current_setting('idgen.segment_wait_timeout');};
my $default_wait = $node->safe_psql('postgres', 'SHOW idgen.segment_wait_timeout');

# A plain SET lasts until its transaction ends, on the same connection
# too: sent on its own it is gone by the next statement
my ($out, $err) = pooled_script('single', qq{
BEGIN;
SET idgen.segment_wait_timeout = '7s';
$wait
COMMIT;
$wait
SET idgen.segment_wait_timeout = '7s';
$wait
});
my ($pid) = split / /, ($out->[0] // '');
is(join(',', @$out), "$pid 7s,$pid $default_wait,$pid $default_wait",
	'plain SET: gone in the next transaction, on the same server connection')
  or diag($err);

# SET LOCAL and set_config(..., true) last their transaction
($out, $err) = pooled_script('single', qq{
BEGIN;
SET LOCAL idgen.segment_wait_timeout = '7s';
$wait
SELECT 1 FROM set_config('idgen.segment_wait_timeout', '6s', true);
$wait
COMMIT;
$wait
});
is(join(',', @$out), "$pid 7s,1,$pid 6s,$pid $default_wait",
	'SET LOCAL and set_config(..., true) last to the end of their transaction')
  or diag($err);

# currval: the client's own next transaction, same connection, has none
($out, $err) = pooled_script('single', q{
SELECT pg_backend_pid() || ' ' || (idgen.snowflake_nextval() = idgen.snowflake_currval());
SELECT pg_backend_pid() || ' ' || currval_state('snowflake');
});
is(join(',', @$out), "$pid true,$pid $not_defined_snow",
	'currval is forgotten by the same client\'s next transaction on the same connection')
  or diag($err);

# An advisory lock and LISTEN are gone in the next transaction
($out, $err) = pooled_script('single', q{
SELECT pg_backend_pid() || ' ' || pg_advisory_lock(4242)::text;
LISTEN idgen_pooled;
SELECT pg_backend_pid() || ' ' || count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = 4242;
SELECT pg_backend_pid() || ' ' || count(*) FROM pg_listening_channels();
});
is(join(',', @$out), "$pid ,$pid 0,$pid 0",
	'a session advisory lock and LISTEN are gone in the next transaction, same connection')
  or diag($err);

# TimeZone is tracked by pgbouncer and set again for its client
($out, $err) = pooled_script('single', q{
SET TimeZone = 'Asia/Tokyo';
SELECT pg_backend_pid() || ' ' || current_setting('TimeZone');
});
is(join(',', @$out), "$pid Asia/Tokyo",
	'TimeZone, which pgbouncer tracks, is set again in the next transaction') or diag($err);

# ALTER DATABASE/ROLE ... SET: not on the connection already open, on one
# opened after it (pgbouncer's RECONNECT), and then through DISCARD ALL
for my $alter ([ 'DATABASE postgres', '8s' ], [ "ROLE \"$user\"", '9s' ])
{
	my ($what, $value) = @$alter;
	$node->safe_psql('postgres', "ALTER $what SET idgen.segment_wait_timeout = '$value'");
	($out, $err) = pooled_script('single', $wait);
	is(join(',', @$out), "$pid " . ($what =~ /^ROLE/ ? '8s' : $default_wait),
		"ALTER $what SET: the server connection already open keeps its value") or diag($err);
	($out, $err) = pooled_script('pgbouncer', 'RECONNECT single;');
	is($err, '', 'pgbouncer: RECONNECT single');
	($out, $err) = pooled_script('single', "$wait\n$wait\nDISCARD ALL;\n$wait");
	my ($new_pid) = split / /, ($out->[0] // '');
	isnt($new_pid, $pid, 'pgbouncer opened a new server connection');
	is(join(',', @$out), join(',', ("$new_pid $value") x 3),
		"ALTER $what SET: a new server connection has $value, in every transaction, after DISCARD ALL too")
	  or diag($err);
	$pid = $new_pid;
}
$node->safe_psql('postgres', "ALTER ROLE \"$user\" RESET idgen.segment_wait_timeout");
$node->safe_psql('postgres', 'ALTER DATABASE postgres RESET idgen.segment_wait_timeout');

# Every client of that pgbouncer loses its session state: another
# application, on the first pgbouncer database
($out, $err) = pooled_script('postgres', q{
BEGIN;
SET work_mem = '77MB';
PREPARE other_app_q AS SELECT 42;
CREATE TEMP TABLE other_app_t AS SELECT 1 AS x;
SHOW work_mem;
EXECUTE other_app_q;
SELECT count(*) FROM other_app_t;
COMMIT;
SHOW work_mem;
EXECUTE other_app_q;
SELECT count(*) FROM other_app_t;
}, '-v', 'ON_ERROR_STOP=0');
my $default_mem = $node->safe_psql('postgres', 'SHOW work_mem');
is(join(',', @$out), "77MB,42,1,$default_mem",
	"another application's SET is gone in its next transaction")
  or diag($err);
like($err, qr/26000: prepared statement "other_app_q" does not exist/,
	'and its prepared statement');
like($err, qr/42P01: relation "other_app_t" does not exist/,
	'and its temporary table');

$bouncer->kill_kill;
$bouncer->finish;
$node->stop;
done_testing();
