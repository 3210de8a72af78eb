# 102_layout_limits.pl
#	The server's layout refuses what it cannot hold, with the documented
#	error, and issues nothing (issue 40, point 3: coverage showed these
#	refusals untested).  Each server is new, so that no layout change is in
#	the way.  Asserts:
#  - a layout whose epoch is still to come: snowflake_nextval and
#    gene_id fail with 22008 "the system clock is before the epoch";
#  - a layout whose timestamp field ended (33 bits of milliseconds from
#    2020-01-01, about 99 days): 22008 "snowflake timestamp overflows
#    layout", the detail naming when it ended, and the worker's WARNING
#    that it ran out; one that runs out in about 29 days issues IDs, and
#    the worker warns how many days are left;
#  - Sonyflake's layout (sequence above the machine id): gene_id(key, bits)
#    fails with 0A000 "cannot carry a gene", while snowflake_nextval issues.
# Outcomes only: errors and values, never durations.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

# A new server under $layout, with the extension
sub layout_node
{
	my ($name, $layout) = @_;
	my $n = idgen_node($name, node_id => 1,
		conf => "idgen.layout = '$layout'\nshared_buffers = 16MB\n");
	$n->start;
	$n->safe_psql('postgres', 'CREATE EXTENSION idgen');
	return $n;
}

my $future = layout_node('future', 'ts=41,node=10,seq=12,unit=1ms,epoch=2099-01-01');
for my $call ('idgen.snowflake_nextval()', "idgen.gene_id('alice', 3)")
{
	my ($ret, $out, $err) = try_sql($future, "SELECT $call");
	like($err, qr/ERROR:  22008: the system clock is before the epoch of layout "custom"/,
		"$call before the layout's epoch: 22008");
}
$future->stop;

my $ended = layout_node('ended', 'ts=33,node=10,seq=12,unit=1ms,epoch=2020-01-01');
{
	my ($ret, $out, $err) = try_sql($ended, 'SELECT idgen.snowflake_nextval()');
	like($err, qr/ERROR:  22008: snowflake timestamp overflows layout "custom"\n.*DETAIL:  The layout's 33 timestamp bits end at 2020-04-0/,
		'after the end of the layout\'s timestamp field: 22008, naming when it ended');
}
ok($ended->wait_for_log(qr/WARNING:  idgen: snowflake layout "custom" ran out at 2020-04-09/),
	'the idgen worker warns that the layout ran out');
$ended->stop;

# A layout that runs out in about 29 days (33 bits of milliseconds from 70
# days ago): IDs are issued, and the worker warns how many days are left
my $epoch_ms = (time() - 70 * 86400) * 1000;
my $soon = layout_node('soon', "ts=33,node=10,seq=12,unit=1ms,epoch=$epoch_ms");
cmp_ok($soon->safe_psql('postgres', 'SELECT idgen.snowflake_nextval()'), '>', 0,
	'a layout that has not run out yet issues IDs');
ok($soon->wait_for_log(qr/WARNING:  idgen: snowflake layout "custom" runs out at .*, in (28|29|30) days/),
	'and the idgen worker warns of its end, in days');
$soon->stop;

my $sony = layout_node('sony', 'sonyflake');
{
	my ($ret, $out, $err) = try_sql($sony, q{SELECT idgen.gene_id('alice', 3)});
	like($err, qr/ERROR:  0A000: layout "sonyflake" cannot carry a gene/,
		'gene_id under Sonyflake\'s layout (sequence above the machine id): 0A000');
	is($sony->safe_psql('postgres', 'SELECT (idgen.id_decode(idgen.snowflake_nextval())).node_id'),
		'1', 'snowflake_nextval issues under it');
}
$sony->stop;
done_testing();
