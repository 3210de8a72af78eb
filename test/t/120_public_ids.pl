# 120_public_ids.pl
#	Keys of public IDs outside one session: a streaming standby decrypts
#	the primary's public IDs (the keys reach it by WAL); pg_dump and
#	pg_restore into a new database keep every key, so every public ID
#	decrypts there to its row; pg_dump --exclude-table-data=idgen.id_key
#	leaves the keys out; no key byte reaches the server log, with
#	log_statement = all and log_min_messages = debug1 while keys are made
#	and used.  DROP EXTENSION idgen is refused while idgen.id_key holds
#	keys, until a superuser sets idgen.allow_key_drop.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

my $primary = idgen_node(
	'primary',
	allows_streaming => 1,
	conf => "log_statement = all\nlog_min_messages = debug1\n");
start_node($primary);
$primary->safe_psql('postgres', 'CREATE EXTENSION idgen');
wait_ready($primary);

# Keys, a table of snowflake IDs whose public ID is a generated column
# (schema public), and one of counted IDs (identity) under a 53-bit key
# whose public ID is a view (schema app)
$primary->safe_psql(
	'postgres', q{
SELECT idgen.id_key_create('orders');
SELECT idgen.id_key_create('users', 53);
CREATE TABLE orders (
    id bigint PRIMARY KEY DEFAULT idgen.snowflake_nextval(),
    public_id bigint GENERATED ALWAYS AS (idgen.id_encrypt(id, 'orders')) STORED,
    note text);
INSERT INTO orders (note) SELECT 'o' || g FROM generate_series(1, 1000) g;
CREATE SCHEMA app;
CREATE TABLE app.users (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, name text);
CREATE VIEW app.users_public AS SELECT idgen.id_encrypt(id, 'users') AS public_id, name FROM app.users;
INSERT INTO app.users (name) SELECT 'u' || g FROM generate_series(1, 1000) g;
});
my $sums = q{SELECT (SELECT md5(string_agg(public_id::text, ',' ORDER BY id)) FROM orders)
  || ' ' || (SELECT md5(string_agg(public_id::text, ',' ORDER BY name)) FROM app.users_public)};
my $found = q{SELECT (SELECT count(*) FROM orders o
    WHERE (SELECT x.note FROM orders x WHERE x.id = idgen.id_decrypt(o.public_id, 'orders')) = o.note)
  || ' ' || (SELECT count(*) FROM app.users_public v
    WHERE (SELECT u.name FROM app.users u WHERE u.id = idgen.id_decrypt(v.public_id, 'users')) = v.name)};
my $primary_sums = $primary->safe_psql('postgres', $sums);
is($primary->safe_psql('postgres', $found), '1000 1000',
	'on the primary every public ID decrypts to its row');

# A streaming standby decrypts the primary's public IDs
my $standby = idgen_standby($primary, 'standby');
start_node($standby);
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $found), '1000 1000',
	"on the standby every one of the primary's public IDs decrypts to its row");
is($standby->safe_psql('postgres', $sums), $primary_sums,
	'and encrypts to the same public IDs');
$standby->stop;

# pg_dump and pg_restore into a new database
my $dump = $PostgreSQL::Test::Utils::tmp_check . '/public_ids.dump';
command_ok(
	[ 'pg_dump', '-Fc', '-f', $dump, '-h', $primary->host, '-p', $primary->port, 'postgres' ],
	'pg_dump of the database');
$primary->safe_psql('postgres', 'CREATE DATABASE restored');
command_ok(
	[ 'pg_restore', '-d', 'restored', '-h', $primary->host, '-p', $primary->port, $dump ],
	'pg_restore into a new database');
is($primary->safe_psql('restored', $found), '1000 1000',
	'in the restored database every public ID decrypts to its row');
is($primary->safe_psql('restored', $sums), $primary_sums,
	'and encrypts to the public IDs it had');
is( $primary->safe_psql('restored', q{SELECT string_agg(name || ':' || width, ',' ORDER BY name) FROM idgen.id_keys}),
	'orders:63,users:53', 'the restored database has both keys');

# The key bytes, read as a superuser (never printed): in a plain dump, not
# in one made with --exclude-table-data=idgen.id_key, never in the log
my @hex = split /\n/,
  $primary->safe_psql('postgres', q{SELECT encode(key, 'hex') FROM idgen.id_key ORDER BY name});
is(scalar(@hex), 2, 'two keys');
my $plain = $PostgreSQL::Test::Utils::tmp_check . '/public_ids.sql';
my $nokeys = $PostgreSQL::Test::Utils::tmp_check . '/public_ids_nokeys.sql';
command_ok(
	[ 'pg_dump', '-f', $plain, '-h', $primary->host, '-p', $primary->port, 'postgres' ],
	'plain pg_dump');
command_ok(
	[ 'pg_dump', '--exclude-table-data=idgen.id_key', '-f', $nokeys,
		'-h', $primary->host, '-p', $primary->port, 'postgres' ],
	'pg_dump --exclude-table-data=idgen.id_key');
my $plain_text = slurp_file($plain);
my $nokeys_text = slurp_file($nokeys);
is(scalar(grep { index($plain_text, $_) >= 0 } @hex), 2, 'a plain dump holds both keys');
is(scalar(grep { index($nokeys_text, $_) >= 0 } @hex), 0,
	'a dump with --exclude-table-data=idgen.id_key holds neither');
like($nokeys_text, qr/CREATE TABLE public\.orders/, 'but the rest of the database');

my $log = lc slurp_file($primary->logfile);
like($log, qr/id_key_create\('orders'\)/, 'the log has the statements (log_statement = all)');
like($log, qr/debug:/, 'and debug messages');
is(scalar(grep { index($log, lc $_) >= 0 } @hex), 0, 'no key appears in the server log');

no_unexpected_errors($primary);

# DROP EXTENSION is refused while the keys' table holds keys (PostgreSQL
# itself refuses a drop of the table or the schema alone: the extension
# needs them), until a superuser sets idgen.allow_key_drop for the
# session; the dump of the keys install.md's Uninstalling makes holds both
my $keys_only = $PostgreSQL::Test::Utils::tmp_check . '/public_ids_keys.sql';
command_ok(
	[ 'pg_dump', '--data-only', '--table=idgen.id_key', '-f', $keys_only,
		'-h', $primary->host, '-p', $primary->port, 'restored' ],
	'pg_dump --data-only --table=idgen.id_key');
is(scalar(grep { index(slurp_file($keys_only), $_) >= 0 } @hex), 2,
	'that dump holds both keys');
my ($rc, $out, $err) = $primary->psql('restored', 'DROP EXTENSION idgen CASCADE',
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err,
	qr/ERROR:  2BP01: cannot drop table idgen\.id_key because it holds 2 keys of public IDs/,
	'DROP EXTENSION idgen CASCADE: refused while the keys exist (2BP01)');
$primary->safe_psql('restored', 'CREATE ROLE keyless LOGIN');
($rc, $out, $err) = $primary->psql('restored',
	'SET ROLE keyless; SET idgen.allow_key_drop = on',
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/ERROR:  42501: permission denied to set parameter "idgen\.allow_key_drop"/,
	'only a superuser sets idgen.allow_key_drop (42501)');
is($primary->safe_psql('restored', 'SELECT count(*) FROM idgen.id_key'), '2',
	'the keys are all there');
$primary->safe_psql('restored',
	'SET idgen.allow_key_drop = on; DROP EXTENSION idgen CASCADE');
is($primary->safe_psql('restored',
	"SELECT count(*) FROM pg_extension WHERE extname = 'idgen'"), '0',
	'with idgen.allow_key_drop on, DROP EXTENSION drops them');

done_testing();
