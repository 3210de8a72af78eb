# 079_pgbouncer_currval.pl
#	currval behind a pooler (issue 22, point 5): pgbouncer in transaction
#	mode resets each server connection with DISCARD ALL, which forgets
#	snowflake_currval() and segment_currval() as it forgets currval().
#
# Several pgbench clients insert rows with idgen defaults through pgbouncer
# (a pool of one server connection, so that clients take turns on it): no
# duplicate.  Then a client draws IDs and leaves, and a new client on the
# same server connection reads neither currval: it gets 55000.  Skipped
# where Debian's package pgbouncer is not installed (test/setup.sh installs
# it).
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

my $node = idgen_node('pooled');
start_node($node);
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION idgen;
SELECT idgen.segment_create('pool', 1, 100);
CREATE TABLE snow (id bigint PRIMARY KEY DEFAULT idgen.snowflake_nextval(), c int);
CREATE TABLE seg (id bigint PRIMARY KEY DEFAULT idgen.segment_nextval('pool'), c int);});
wait_ready($node);

# pgbouncer on a Unix socket of its own, one server connection
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

[pgbouncer]
listen_addr =
listen_port = $port
unix_socket_dir = $dir
auth_type = trust
auth_file = $dir/userlist.txt
pool_mode = transaction
default_pool_size = 1
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

# A psql through pgbouncer: (exit code, stdout, stderr with SQLSTATEs)
sub pooled_psql
{
	my ($sql) = @_;
	my ($out, $err) = ('', '');
	IPC::Run::run(
		[
			'psql', '-XAtq', '-v', 'VERBOSITY=verbose', '-h', $dir, '-p', $port,
			'-U', $user, '-d', 'postgres', '-c', $sql
		],
		'<', \undef, '>', \$out, '2>', \$err);
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
ok($ready, 'pgbouncer accepts clients') or diag($berr . slurp_file("$dir/pgbouncer.log"));

# Several clients insert with idgen defaults; each transaction also reads
# both currvals, inside the transaction that drew them
my $script = "$dir/insert.sql";
open $fh, '>', $script or die "could not write $script: $!";
print $fh <<'EOS';
BEGIN;
INSERT INTO snow (c) VALUES (:client_id);
INSERT INTO seg (c) VALUES (:client_id);
SELECT idgen.snowflake_currval(), idgen.segment_currval('pool');
COMMIT;
EOS
close $fh;
my ($pout, $perr) = ('', '');
IPC::Run::run(
	[
		'pgbench', '-n', '-h', $dir, '-p', $port, '-U', $user, '-c', '4',
		'-j', '2', '-t', '200', '-f', $script, 'postgres'
	],
	'<', \undef, '>', \$pout, '2>', \$perr);
is($? >> 8, 0, 'four clients through pgbouncer: pgbench ran without errors')
  or diag($perr);
is( $node->safe_psql(
		'postgres', 'SELECT count(*), count(DISTINCT id) FROM snow'),
	'800|800',
	'snowflake defaults: 800 rows, no duplicate');
is($node->safe_psql('postgres', 'SELECT count(*), count(DISTINCT id) FROM seg'),
	'800|800', 'segment defaults: 800 rows, no duplicate');

# A client draws both kinds and leaves
my ($rc, $out, $err) = pooled_psql(
	q{BEGIN; SELECT pg_backend_pid(), idgen.snowflake_nextval(), idgen.segment_nextval('pool'),
	  idgen.snowflake_currval(), idgen.segment_currval('pool'); COMMIT;});
is($rc, 0, 'a client draws IDs through pgbouncer') or diag($err);
my ($pid1, $s, $g, $sc, $gc) = split /\|/, $out;
ok(defined $gc && $sc == $s && $gc == $g,
	'within its transaction, both currvals are its own draws');

# The next client gets the same server connection (a pool of one), after
# pgbouncer's DISCARD ALL: it reads no previous client's currval
($rc, $out, $err) = pooled_psql('SELECT pg_backend_pid()');
is($out, $pid1, 'the next client is served by the same server connection');
($rc, $out, $err) = pooled_psql('SELECT idgen.snowflake_currval()');
isnt($rc, 0, 'a new client: snowflake_currval fails');
like($err, qr/ERROR:  55000: snowflake_currval is not yet defined in this session/,
	'a new client: snowflake_currval gives 55000, not the previous client\'s ID');
($rc, $out, $err) = pooled_psql(q{SELECT idgen.segment_currval('pool')});
like(
	$err,
	qr/ERROR:  55000: segment_currval of tag "pool" is not yet defined in this session/,
	'a new client: segment_currval gives 55000, not the previous client\'s ID');
($rc, $out, $err) = pooled_psql('SELECT pg_backend_pid()');
is($out, $pid1, 'still the same server connection');

$bouncer->kill_kill;
$bouncer->finish;
$node->stop;
done_testing();
