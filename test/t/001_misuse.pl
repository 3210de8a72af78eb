# Misuse is loud and clear: not preloaded, node id unset, node id out of
# range, bad layout.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

my $node = idgen_node('misuse', preload => 0);
$node->start;

# Not in shared_preload_libraries: generators, status functions and
# whatever uses the server's idgen.layout refuse, with SQLSTATE 55000
$node->safe_psql('postgres', 'CREATE EXTENSION idgen');
for my $call ('idgen.snowflake_nextval()', 'idgen.snowflake_status()',
	'idgen.snowflake_accept_layout()',
	'idgen.id_decode(1)', "idgen.id_make(now(), 1, 1)", 'idgen.id_timestamp(1)',
	"idgen.gene_id('testroy', 3)", 'idgen.gene_id(5, 3)',
	'idgen.id_to_friendly(1)', "idgen.id_from_friendly('20240101000000000-0-0')",
	"idgen.segment_nextval('t')", "idgen.segment_create('t')",
	"idgen.segment_alter('t', 10)", "idgen.segment_drop('t')",
	'idgen.segment_status_fn()', 'idgen.node_lease_status()')
{
	my ($ret, $out, $err) = $node->psql('postgres',
		"\\set VERBOSITY verbose\nSELECT $call");
	like($err, qr/ERROR:  55000: idgen must be loaded via "shared_preload_libraries".*\nHINT:  Add idgen to shared_preload_libraries in postgresql\.conf and restart the server\. See "Troubleshooting" in idgen's README\./s,
		"$call without preload: 55000, the hint points at the README's Troubleshooting");
}

# The pure functions work without the preload (as on a Citus worker that
# only stores shards), with the same results as with it; their errors are
# the usual ones
my %pure = (
	"idgen.gene_of('testroy', 3)" => '2',
	'idgen.gene_of(5, 3)' => '5',
	"idgen.gene_id(12394846, 'testroy', 3)" => '99158770',
	'idgen.gene_id(12394846, 5::bigint, 3)' => '99158773',
	'idgen.gene_decode(99158770, 3)' => '(12394846,2)',
	'idgen.id_to_base62(175928847299117063)' => '0Czks0tP37X',
	"idgen.id_from_base62('0Czks0tP37X')" => '175928847299117063',
	"(idgen.id_decode(1541815603606036480, 'twitter')).node_id" => '378',
	"idgen.id_timestamp(175928847299117063, 'discord') = '2016-04-30 11:18:25.796+00'" => 't',
	"idgen.id_make('2016-04-30 11:18:25.796+00', 32, 7, 'discord')" => '175928847299117063',
	"idgen.id_from_friendly(idgen.id_to_friendly(4222977, 'idgen'), 'idgen')" => '4222977');
for my $call (sort keys %pure)
{
	my ($ret, $out, $err) = $node->psql('postgres', "SELECT $call");
	is($out, $pure{$call}, "$call without preload") or diag($err);
}
my ($pret, $pout, $perr) = $node->psql('postgres',
	"\\set VERBOSITY verbose\nSELECT idgen.id_decode(1, 'ts=41,node=10,seq=12,unit=1ms,epoch=2024-02-31')");
like($perr, qr/ERROR:  22008: invalid layout/, 'a bad layout without preload: the usual error');

# Preloaded without a node id: generating fails with a hint, decoding works
$node->append_conf('postgresql.conf', idgen_conf(node_id => undef));
$node->restart;
my ($ret, $out, $err) = $node->psql('postgres',
	"\\set VERBOSITY verbose\nSELECT idgen.snowflake_nextval()");
like($err, qr/ERROR:  55000: idgen.node_id is not set/, 'node id unset: error');
like($err, qr/HINT:  Set idgen.node_id in postgresql.conf/, 'node id unset: hint says how');
is($node->safe_psql('postgres', 'SELECT node_id FROM idgen.id_decode(4222977)'),
	'7', 'decoding needs no node id');
is($node->safe_psql('postgres', 'SELECT node_id IS NULL FROM idgen.snowflake_status()'),
	't', 'status shows the node id as NULL');

# A server that cannot start: the log names the setting
sub refuses_to_start
{
	my ($conf, $pattern, $name) = @_;
	$node->stop;
	$node->append_conf('postgresql.conf', $conf);
	my $log_offset = -s $node->logfile;
	my $started = $node->start(fail_ok => 1);
	ok(!$started, "$name: server refuses to start");
	my $log = slurp_file($node->logfile, $log_offset);
	like($log, $pattern, "$name: log names the setting");
}

refuses_to_start("idgen.node_id = 1024\n",
	qr/FATAL:  idgen.node_id 1024 is out of range for layout "idgen"/,
	'node id 1024 with 10 node bits');
refuses_to_start("idgen.node_id = 'seven'\n",
	qr/FATAL:  invalid value for parameter "idgen.node_id": "seven"/,
	'node id not a number');
refuses_to_start("idgen.node_id = '-1'\n",
	qr/FATAL:  invalid value for parameter "idgen.node_id": "-1"/,
	'negative node id');
refuses_to_start("idgen.node_id = '3x'\n",
	qr/FATAL:  invalid value for parameter "idgen.node_id": "3x"/,
	'node id with trailing characters');
refuses_to_start("idgen.node_id = '99999999999999999999'\n",
	qr/FATAL:  invalid value for parameter "idgen.node_id": "99999999999999999999"/,
	'node id beyond any integer');
refuses_to_start("idgen.node_id = 3\nidgen.layout = 'ts=41,node=10,seq=99,unit=1ms,epoch=2024-01-01'\n",
	qr/FATAL:  invalid value for parameter "idgen.layout": .*\n.*DETAIL:  layout field "seq" needs a width/,
	'bad layout spec');
refuses_to_start("idgen.layout = 'snowflake'\n",
	qr/FATAL:  invalid value for parameter "idgen.layout": "snowflake"/,
	'unknown preset');
refuses_to_start("idgen.layout = 'sonyflake'\nidgen.node_id = 65536\n",
	qr/FATAL:  idgen.node_id 65536 is out of range for layout "sonyflake"/,
	'node id beyond sonyflake\'s 16 bits');

# A valid preset and node id: IDs in that layout
$node->append_conf('postgresql.conf', "idgen.layout = 'sonyflake'\nidgen.node_id = 65535\n");
$node->start;
is($node->safe_psql('postgres',
	'SELECT node_id FROM idgen.id_decode(idgen.snowflake_nextval(), \'sonyflake\')'),
	'65535', 'sonyflake layout carries the node id');

$node->stop;
done_testing();
