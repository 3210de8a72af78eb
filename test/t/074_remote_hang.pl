# A central segment server that hangs (accepts connections, never answers)
# delays only the remote worker: snowflake IDs keep flowing at full speed,
# with no call waiting for the reservation, while segment calls fail
# clearly after idgen.segment_wait_timeout.
use strict;
use warnings;
use IO::Socket::INET;
use Time::HiRes qw(time);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# A "server" that completes TCP handshakes (the kernel does, from the
# backlog) and never says a word
my $hang = IO::Socket::INET->new(
	LocalAddr => '127.0.0.1',
	LocalPort => 0,
	Listen => 64,
	Proto => 'tcp') or die "cannot listen: $!";
my $hang_port = $hang->sockport;

my $node = PostgreSQL::Test::Cluster->new('hang');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'idgen'
idgen.node_id = 5
idgen.database = 'postgres'
idgen.segment_server = 'host=127.0.0.1 port=$hang_port dbname=postgres user=nobody'
idgen.segment_wait_timeout = '1s'
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION idgen');
is($node->safe_psql('postgres',
	q{SELECT count(*) FROM pg_stat_activity WHERE backend_type IN ('idgen worker', 'idgen remote worker')}),
	'2', 'with a central segment server, the idgen worker and the remote worker run');

# The first ID waits for the first reservation; take it out of the way
$node->safe_psql('postgres', 'SELECT idgen.snowflake_nextval()');
my $waits_before = $node->safe_psql('postgres',
	'SELECT reservation_waits FROM idgen.snowflake_status()');

# Keep the remote worker busy with the hanging server: a session asks for a
# segment again and again, for about 6 s, while another draws snowflake IDs
my $seg = $node->background_psql('postgres', on_error_stop => 0);
my ($n, $slowest, $seg_errors) = (0, 0, 0);
my $t_end = time + 6;
while (time < $t_end)
{
	my ($ret, $stdout, $stderr) = (0, '', '');
	$seg->query("SELECT idgen.segment_nextval('order')");
	$seg_errors++ if $seg->{stderr} =~ /could not draw an ID for segment tag "order"/;
	$seg->{stderr} = '';
	for (1 .. 10)
	{
		my $t0 = time;
		$node->safe_psql('postgres',
			'SELECT count(idgen.snowflake_nextval()) FROM generate_series(1, 1000)');
		my $dt = time - $t0;
		$slowest = $dt if $dt > $slowest;
		$n += 1000;
	}
}
$seg->quit;

cmp_ok($seg_errors, '>=', 1, 'segment calls fail while the central server hangs');
cmp_ok($n, '>=', 50000, "snowflake IDs kept flowing ($n drawn)");
is($node->safe_psql('postgres', 'SELECT reservation_waits FROM idgen.snowflake_status()'),
	$waits_before, 'no snowflake call waited for the reservation meanwhile');
cmp_ok($slowest, '<', 0.9,
	sprintf('no batch of 1,000 snowflake IDs took long (slowest %.3f s)', $slowest));
like(slurp_file($node->logfile), qr/central segment server|segment_server|127\.0\.0\.1/,
	'the remote worker reports the unreachable server');

$node->stop;
close $hang;
done_testing();
