# 054_standby.pl
#	Snowflake IDs on a server in recovery (issue 5, test e).
#
# A standby made by pg_basebackup has its primary's idgen.node_id, so its
# IDs could collide with the primary's: generating them is refused with
# SQLSTATE 25006 unless idgen.allow_on_standby is on.  The reservation row
# reaches the standby by WAL.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

my $primary = idgen_node('primary', allows_streaming => 1);
start_node($primary);
$primary->safe_psql('postgres', 'CREATE EXTENSION idgen');
wait_ready($primary);
my $ids = draw_ids($primary, 100);

# A standby with the primary's configuration, node id included
my $standby = idgen_standby($primary, 'standby');
start_node($standby);
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'),
	't', 'the standby is in recovery');

my $refused =
  qr/ERROR:  25006: cannot generate snowflake IDs during recovery\nDETAIL:  A standby usually has a copy of its primary's idgen.node_id, so its IDs could collide with the primary's.\nHINT:  Set idgen.allow_on_standby to on only if this server has a node id of its own./;
my ($ret, $out, $err) =
  try_sql($standby, 'SELECT idgen.snowflake_nextval()');
isnt($ret, 0, 'snowflake_nextval fails on the standby');
like($err, $refused, 'with SQLSTATE 25006, its detail and hint');

my $has_gene_id = $standby->safe_psql('postgres',
	"SELECT to_regprocedure('idgen.gene_id(text,integer)') IS NOT NULL");
SKIP:
{
	skip 'idgen.gene_id(text, int) does not exist', 3 unless $has_gene_id eq 't';

	($ret, $out, $err) =
	  try_sql($standby, "SELECT idgen.gene_id('user42', 3)");
	isnt($ret, 0, 'gene_id(key, bits) fails on the standby');
	like($err, $refused, 'with the same error');
	is( $standby->safe_psql('postgres',
			"SELECT idgen.gene_id(12394846, 'testroy', 3)"),
		'99158770',
		'gene_id(origin, key, bits), pure arithmetic, works on the standby');
}

# Nor does a superuser move the generator on the standby (issue 40, point
# 3: no test reached this refusal); the error is expected, so kept out of
# the log that no_unexpected_errors reads
($ret, $out, $err) = try_sql($standby,
	'SET log_min_messages = fatal; SELECT idgen.snowflake_advance('
	  . max_of(@$ids) . ')');
isnt($ret, 0, 'snowflake_advance fails on the standby');
like(
	$err,
	qr/ERROR:  25006: cannot advance the snowflake generator during recovery/,
	'with SQLSTATE 25006');

# Status and the replicated reservation (the worker starts on its own
# schedule: wait for it rather than assume it is up by now)
ok( $standby->poll_query_until(
		'postgres', 'SELECT worker_running FROM idgen.snowflake_status()'),
	'on the standby the worker runs');
is( $standby->safe_psql(
		'postgres',
		'SELECT reserved_until IS NULL, issued FROM idgen.snowflake_status()'),
	't|0',
	'on the standby the worker publishes no reservation and nothing was issued'
);
is( $standby->safe_psql(
		'postgres',
		'SELECT reserved_until >= idgen.id_timestamp(' . max_of(@$ids)
		  . ') FROM idgen.snowflake_reservation'),
	't',
	"the primary's reservation reached the standby and covers its IDs");

# allow_on_standby is reloadable; a standby with a node id of its own may
# then generate IDs
my $own = idgen_standby($primary, 'standby_own',
	conf => "idgen.node_id = 2\n");
start_node($own);
($ret, $out, $err) = try_sql($own, 'SELECT idgen.snowflake_nextval()');
like($err, $refused, 'a standby with its own node id is refused too by default');
$own->append_conf('postgresql.conf', "idgen.allow_on_standby = on\n");
$own->reload;
$own->poll_query_until('postgres',
	"SELECT current_setting('idgen.allow_on_standby') = 'on'")
  or die 'reload did not take effect';
my $own_ids = draw_ids($own, 1000);
is(scalar @$own_ids, 1000, 'with idgen.allow_on_standby on, the standby generates IDs');
is(first_disorder($own_ids), -1, 'and they increase');
is( $own->safe_psql(
		'postgres',
		'SELECT DISTINCT node_id FROM idgen.id_decode(' . $own_ids->[0] . ')'),
	'2',
	'they carry the standby\'s own node id');
$own->append_conf('postgresql.conf', "idgen.allow_on_standby = off\n");
$own->reload;
$own->poll_query_until('postgres',
	"SELECT current_setting('idgen.allow_on_standby') = 'off'")
  or die 'reload did not take effect';
($ret, $out, $err) = try_sql($own, 'SELECT idgen.snowflake_nextval()');
like($err, $refused, 'switched off again, the standby refuses again');

$own->stop;
$standby->stop;
$primary->stop;
no_unexpected_errors($own);
no_unexpected_errors($standby);
no_unexpected_errors($primary);
done_testing();
