# 116_conninfo_password.pl
#	No password in a setting a monitoring role reads: idgen.node_registry
#	and idgen.segment_server refuse one (docs/reference.md, Settings).
#
# pg_monitor includes pg_read_all_settings, which reads settings marked
# superuser only.  ALTER SYSTEM of a connection string with password= or
# sslpassword= (key=value form or URI) fails with 22023 and writes nothing;
# passfile= is taken.  A role with only pg_monitor reads the settings and
# every status surface of docs/monitoring.md, and no password.  A reload with
# a password in postgresql.conf logs the refusal and keeps the old value; a
# start with one fails.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

my $good = 'host=/nonexistent dbname=postgres passfile=/nonexistent/pgpass';
my $node = idgen_node('secrets', conf => "idgen.node_registry = '$good'\n");
start_node($node);
$node->safe_psql('postgres', q{
CREATE EXTENSION idgen;
CREATE ROLE idgen_monitor LOGIN IN ROLE pg_monitor;
});
wait_ready($node);

# The SQLSTATE and message of one statement's error, '' if none
sub error_of
{
	my ($sql, @user) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\n$sql",
		extra_params => [@user]);
	return $err =~ /ERROR:  (\w{5}): ([^\n]*)/ ? "$1 $2" : '';
}

my $refusal = '22023 a connection string of idgen cannot contain a password';
for my $case (
	[ 'node_registry', 'host=h dbname=postgres password=secret1' ],
	[ 'node_registry', 'postgresql://u:secret2@h/postgres' ],
	[ 'segment_server', 'host=h dbname=postgres sslpassword=secret3' ],
	[ 'segment_server', 'postgres://u@h/postgres?password=secret4' ])
{
	is(error_of("ALTER SYSTEM SET idgen.$case->[0] = '$case->[1]'"), $refusal,
		"ALTER SYSTEM SET idgen.$case->[0] = '$case->[1]' is refused");
}
is(error_of("ALTER SYSTEM SET idgen.segment_server = 'host=h nosuchkey=1'"),
	'22023 invalid connection string',
	'a connection string libpq cannot parse is refused');
is(error_of("SET idgen.node_registry = 'password=secret5'"),
	'55P02 parameter "idgen.node_registry" cannot be changed now',
	'SET is refused before the value is looked at');
is(error_of("ALTER SYSTEM SET idgen.segment_server = 'host=h passfile=/p/pgpass'"), '',
	'ALTER SYSTEM SET of a connection string with passfile= is taken');
$node->safe_psql('postgres', 'ALTER SYSTEM RESET idgen.segment_server');
unlike(slurp_file($node->data_dir . '/postgresql.auto.conf'), qr/secret/,
	'no password was written to postgresql.auto.conf');

# A role with only pg_monitor reads the settings and every status surface
is($node->safe_psql('postgres', 'SHOW idgen.node_registry',
		extra_params => [ '-U', 'idgen_monitor' ]),
	$good, 'a role with only pg_monitor reads idgen.node_registry, with no password');
my ($ret, $out, $err) = $node->psql('postgres', q{
SHOW idgen.segment_server;
SELECT count(*) FROM idgen.snowflake_status(), idgen.snowflake_refusal(),
    idgen.node_lease_status(), idgen.serving_settings(),
    idgen.id_decode(9223372036854775807);
SELECT count(*) FROM idgen.segment_status;
SELECT count(biz_tag) + count(max_id) + count(step) + count(cache) FROM idgen.segment_alloc;
SELECT count(namespace) + count(node_id) + count(heartbeat) + count(expires_at) FROM idgen.node_lease;
}, extra_params => [ '-U', 'idgen_monitor', '-v', 'ON_ERROR_STOP=1' ]);
is($ret, 0, 'and every status surface of docs/monitoring.md') or diag($err);

# A reload with a password in postgresql.conf: a LOG line, the old value kept
my $off = -s $node->logfile;
$node->append_conf('postgresql.conf',
	"idgen.node_registry = 'host=h dbname=postgres password=secret6'\n");
$node->reload;
ok($node->wait_for_log(
		qr/LOG:  a connection string of idgen cannot contain a password/, $off),
	'a reload with a password in postgresql.conf logs the refusal');
is($node->safe_psql('postgres', 'SHOW idgen.node_registry',
		extra_params => [ '-U', 'idgen_monitor' ]),
	$good, 'and keeps the value before it');

# A start with a password in postgresql.conf fails
$node->stop;
$off = -s $node->logfile;
$node->append_conf('postgresql.conf',
	"idgen.node_registry = '$good'\n"
	  . "idgen.segment_server = 'postgresql://u:secret7\@h/postgres'\n");
ok(!$node->start(fail_ok => 1), 'a start with a password in idgen.segment_server fails');
my $log = slurp_file($node->logfile, $off);
like($log, qr/invalid value for parameter "idgen.segment_server" in the configuration/,
	'and says which setting');
unlike($log, qr/secret/, 'and writes no password to the log');

done_testing();
