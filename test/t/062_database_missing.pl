# 062_database_missing.pl
#	idgen.database names a database that does not exist, or one without
#	the extension (issue 21, point 6): the worker's log names the problem
#	in one WARNING (again at most once a minute, by the log's timestamps),
#	with no FATAL and no exit of the worker (it connects
#	only once the database exists), snowflake_nextval fails with 55000 whose
#	detail and hint name it, and IDs are issued once the database and the
#	extension are there.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use IdgenTest;

# Poll until the server log matches $re; dies after a long wait (a
# failure, not a timing assertion: the worker logs at its first look)
sub wait_log
{
	my ($node, $re, $what) = @_;

	for (1 .. 1200)
	{
		return if slurp_file($node->logfile) =~ $re;
		usleep(100_000);
	}
	die "the log never showed $what";
}

# Call snowflake_nextval until the error's text matches $re; returns
# (exit code, stderr) of the last call
sub nextval_error_until
{
	my ($node, $re, %opt) = @_;
	my ($ret, $out, $err);

	for (1 .. 120)
	{
		($ret, $out, $err) = try_sql($node, 'SELECT idgen.snowflake_nextval()',
			db => $opt{db} // 'postgres');
		return ($ret, $err) if $ret == 0 || $err =~ $re;
		usleep(100_000);
	}
	return ($ret, $err);
}

# Draw IDs until one comes; returns the first
sub first_id
{
	my ($node, $db) = @_;

	$node->poll_query_until($db, 'SELECT idgen.snowflake_nextval() > 0')
	  or die 'no snowflake ID was issued';
	return 1;
}

my $count = sub { my ($text, $re) = @_; my @m = ($text =~ /$re/g); scalar @m };

# The WARNING that a database is missing: at least once, and its lines at
# least a minute apart by their own timestamps (once in a run shorter than
# a minute).  Returns (lines, closest gap in seconds or undef)
sub warnings_apart
{
	my ($text, $re) = @_;
	my @t;
	for (split /\n/, $text)
	{
		next unless $_ =~ $re && /^\S+ (\d+):(\d+):(\d+(?:\.\d+)?)/;
		push @t, $1 * 3600 + $2 * 60 + $3;
	}
	my $gap;
	for my $i (1 .. $#t)
	{
		my $d = $t[$i] - $t[ $i - 1 ];
		$d += 86400 if $d < 0;	# past midnight
		$gap = $d if !defined $gap || $d < $gap;
	}
	return (scalar @t, $gap);
}

# A server whose idgen.database does not exist
my $node = idgen_node('db_missing', conf => q{
idgen.database = 'app'
idgen.worker_wait_timeout = '1s'
});
start_node($node);
$node->safe_psql('postgres', 'CREATE EXTENSION idgen');

my $missing = qr/WARNING:  database "app" named by idgen.database does not exist/;
wait_log($node, $missing, 'that database "app" does not exist');

my ($ret, $err) = nextval_error_until($node, qr/Database "app" named by idgen.database does not exist/);
isnt($ret, 0, 'no snowflake ID while database "app" does not exist');
like($err, qr/ERROR:  55000: could not generate a snowflake ID/, 'the error is 55000');
like($err, qr/DETAIL:  Database "app" named by idgen.database does not exist/,
	'its detail names the missing database');
like($err, qr/HINT:  Create database "app" and run CREATE EXTENSION idgen in it/,
	'its hint says what to do');

# Once, not once a second: the worker is not restarted while it waits
my $log = slurp_file($node->logfile);
my ($lines, $gap) = warnings_apart($log, $missing);
ok($lines >= 1 && (!defined $gap || $gap >= 59.9),
	"the missing database is logged, again at most once a minute ($lines times)");
is($count->($log, qr/FATAL/), 0,
	'no FATAL: the worker connects only once the database exists');
is($count->($log, qr/background worker "idgen worker" \(PID \d+\) exited/), 0,
	'and the idgen worker does not exit');
like($log, qr/HINT:  Create it \(CREATE DATABASE app\) and run CREATE EXTENSION idgen in it/,
	'the log line says what to do');

# The database without the extension
$node->safe_psql('postgres', 'CREATE DATABASE app');
($ret, $err) = nextval_error_until($node, qr/Extension idgen is not installed in database "app"/);
isnt($ret, 0, 'no snowflake ID while database "app" has no extension idgen');
like($err, qr/ERROR:  55000: .*DETAIL:  Extension idgen is not installed in database "app" named by idgen.database.*HINT:  Run CREATE EXTENSION idgen in database "app"\. See "Troubleshooting" in idgen's README\./s,
	'55000, its detail names the missing extension, its hint the command');
wait_log($node, qr/LOG:  extension idgen is not installed in database "app" named by idgen.database/,
	'that the extension is missing');

# The extension there: IDs are issued, increasing, without a restart
$node->safe_psql('app', 'CREATE EXTENSION idgen');
first_id($node, 'postgres');
my @ids = @{ draw_ids($node, 1000) };
is(first_disorder(\@ids), -1, '1,000 IDs, each above the one before');
$log = slurp_file($node->logfile);
($lines, $gap) = warnings_apart($log, $missing);
ok($lines >= 1 && (!defined $gap || $gap >= 59.9),
	"still at most once a minute ($lines times)");
like($log, qr/LOG:  database "app" named by idgen.database exists now/,
	'the log says when the database exists');
is($count->($log, qr/FATAL/), 0, 'still no FATAL');
is($count->($log, qr/background worker "idgen worker" \(PID \d+\) exited/), 0,
	'and the idgen worker never exited');
$node->stop;

# A server whose idgen.database exists without the extension from the start
my $node2 = idgen_node('ext_missing', conf => q{
idgen.worker_wait_timeout = '1s'
});
start_node($node2);
$node2->safe_psql('postgres', 'CREATE DATABASE other');
$node2->safe_psql('other', 'CREATE EXTENSION idgen');
($ret, $err) = nextval_error_until($node2,
	qr/Extension idgen is not installed in database "postgres"/, db => 'other');
isnt($ret, 0, 'no snowflake ID while idgen.database has no extension idgen');
like($err, qr/ERROR:  55000: .*DETAIL:  Extension idgen is not installed in database "postgres" named by idgen.database.*HINT:  Run CREATE EXTENSION idgen in database "postgres"\. See "Troubleshooting" in idgen's README\./s,
	'55000 naming the database without the extension');
wait_log($node2, qr/LOG:  extension idgen is not installed in database "postgres" named by idgen.database/,
	'that the extension is missing in "postgres"');
unlike(slurp_file($node2->logfile), qr/FATAL:  database/, 'no FATAL: the database exists');

$node2->safe_psql('postgres', 'CREATE EXTENSION idgen');
first_id($node2, 'other');
@ids = @{ draw_ids($node2, 1000) };
is(first_disorder(\@ids), -1, 'IDs once the extension is installed');
$node2->stop;

done_testing();
