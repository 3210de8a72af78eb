# A central segment server (idgen.segment_server): three issuing servers
# allocate segments of one tag from the central server's idgen.segment_alloc.
# Asserts (issuers connect as a role granted only EXECUTE on
# idgen.segment_allocate):
#  - three servers drawing the same tag at once under pgbench get no
#    duplicate across servers, every ID was allocated centrally (at most its
#    max_id, no local tag), and their segments interleave;
#  - with the central server stopped, each issuer keeps issuing from its
#    buffers, then a call waits idgen.segment_wait_timeout and fails with
#    SQLSTATE 08006 naming the central server;
#  - once the central server is back, every issuer draws again by itself, and
#    all IDs drawn before, during and after the outage are still distinct;
#  - the central server refusing the issuers' role (EXECUTE revoked): once
#    its buffers run dry a call fails with 08006 quoting the central
#    server's error, and after GRANT the issuer draws again, no ID twice;
#  - the central server refusing the role at login (NOLOGIN): the same,
#    with the refusal quoted, and after LOGIN no ID twice;
#  - a tag the central server does not know is 42704 on the issuer, and one
#    it allocated up to the largest bigint gives its last IDs, then 2200H.
use strict;
use warnings;
use IPC::Run;
use Time::HiRes qw(time);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

my $central = idgen_node('central', node_id => 0, conf => "shared_buffers = 16MB\n");
$central->start;
$central->safe_psql('postgres', q{
	CREATE EXTENSION idgen;
	SELECT idgen.segment_create('order', 1, 100);
	CREATE ROLE issuer LOGIN;
	GRANT EXECUTE ON FUNCTION idgen.segment_allocate(text, bigint, bigint) TO issuer;
});
# Issuers connect as a role that may only execute idgen.segment_allocate
my $conn = 'host=' . $central->host . ' port=' . $central->port
  . ' dbname=postgres user=issuer';

# Small segments (100 to 1,000 IDs), so that the issuers allocate often and
# their buffers run dry quickly once the central server is gone
my @issuers;
for my $i (1 .. 3)
{
	my $n = idgen_node("issuer$i", node_id => $i, conf => qq{
idgen.segment_server = '$conn'
idgen.segment_max_step = 1000
idgen.segment_wait_timeout = '3s'
shared_buffers = 16MB
max_connections = 10
});
	$n->start;
	$n->safe_psql('postgres', 'CREATE EXTENSION idgen; CREATE TABLE drawn (id bigint NOT NULL)');
	push @issuers, $n;
}

# No ID twice across all issuers; returns the number of IDs
sub check_distinct
{
	my ($what) = @_;
	my %seen;
	my $dups = 0;
	my $total = 0;
	for my $n (@issuers)
	{
		for my $id (split /\n/, $n->safe_psql('postgres', 'SELECT id FROM drawn'))
		{
			$dups++ if $seen{$id}++;
			$total++;
		}
	}
	is($dups, 0, "$what: $total IDs drawn, no duplicate across the three servers");
	return $total;
}

# Three servers draw the same tag at once
my $dir = $PostgreSQL::Test::Utils::tmp_check;
append_to_file("$dir/draw.sql",
	"INSERT INTO drawn SELECT idgen.segment_nextval('order') FROM generate_series(1, 20);\n");
my @runs;
for my $n (@issuers)
{
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[
			'pgbench', '-n', '-c', '2', '-j', '2', '-T', '4', '-f', "$dir/draw.sql",
			'-h', $n->host, '-p', $n->port, 'postgres'
		],
		'>', \$out, '2>', \$err);
	push @runs, [ $n, $h, \$out, \$err ];
}
for my $r (@runs)
{
	my ($n, $h, $out, $err) = @$r;
	ok($h->finish, $n->name . ': pgbench drew IDs without error') or diag($$err);
	like($$out, qr/number of failed transactions: 0 /, $n->name . ': no failed transaction');
}
check_distinct('under concurrent load');

my $central_max = $central->safe_psql('postgres',
	q{SELECT max_id FROM idgen.segment_alloc WHERE biz_tag = 'order'});
for my $n (@issuers)
{
	my ($count, $min, $max, $local) = split /\|/, $n->safe_psql('postgres', q{
		SELECT count(*), min(id), max(id), (SELECT count(*) FROM idgen.segment_alloc) FROM drawn});
	cmp_ok($max, '<=', $central_max,
		$n->name . ": its IDs are within the central max_id $central_max");
	is($local, 0, $n->name . ': its local idgen.segment_alloc has no tag');
	cmp_ok($max - $min + 1, '>', $count,
		$n->name . ': its segments interleave with the other servers\'');
}

# The central server stops: issuers go on from their buffers.  First make
# sure each has its next segment loaded (drawing past the prefetch point)
for my $n (@issuers)
{
	$n->poll_query_until('postgres', q{
		WITH d AS (INSERT INTO drawn
			SELECT idgen.segment_nextval('order') FROM generate_series(1, 20))
		SELECT bool_and(next_ready) FROM idgen.segment_status WHERE biz_tag = 'order'})
	  or die $n->name . ' has no next segment ready';
}
$central->stop;
for my $n (@issuers)
{
	my ($ret, $out, $err) = $n->psql('postgres',
		q{INSERT INTO drawn SELECT idgen.segment_nextval('order') FROM generate_series(1, 50)});
	is($ret, 0, $n->name . ': with the central server down, still issues from its buffers')
	  or diag($err);
}

# ... until they run dry: then a call waits and fails clearly
for my $n (@issuers)
{
	my $t0 = time;
	my ($ret, $out, $err) = $n->psql('postgres',
		"\\set VERBOSITY verbose\nSELECT count(idgen.segment_nextval('order')) FROM generate_series(1, 3000)");
	my $waited = time - $t0;
	isnt($ret, 0, $n->name . ': its buffers run dry');
	like($err,
		qr/ERROR:  08006: could not draw an ID for segment tag "order": the central segment server did not allocate a segment within 3000 ms/,
		$n->name . ': the call fails with SQLSTATE 08006 naming the central server');
	like($err, qr/DETAIL:  .*idgen\.segment_server.*the last attempt failed: \S/,
		$n->name . ': the detail gives the central server\'s failure');
	cmp_ok($waited, '>=', 2.5, sprintf('%s: after waiting (%.1f s)', $n->name, $waited));
}

# The central server returns: each issuer recovers by itself
$central->start;
for my $n (@issuers)
{
	ok($n->poll_query_until('postgres',
			q{SELECT count(*) = 200 FROM (SELECT idgen.segment_nextval('order') FROM generate_series(1, 200)) s}),
		$n->name . ': draws again once the central server is back');
	$n->safe_psql('postgres',
		q{INSERT INTO drawn SELECT idgen.segment_nextval('order') FROM generate_series(1, 500)});
}
check_distinct('before, during and after the outage');

# The central server refuses the issuers' role (EXECUTE revoked): an SQL
# error over a connection that stays good.  Once its buffers run dry the
# caller fails with 08006 quoting the central server's error; granted
# again, the issuer draws again by itself
$central->safe_psql('postgres',
	'REVOKE EXECUTE ON FUNCTION idgen.segment_allocate(text, bigint, bigint) FROM issuer');
{
	my ($ret, $out, $err) = try_sql($issuers[0],
		q{INSERT INTO drawn SELECT idgen.segment_nextval('order') FROM generate_series(1, 3000)});
	like($err,
		qr/08006: could not draw an ID for segment tag "order".*DETAIL:  .*the last attempt failed: .*permission denied for function segment_allocate/s,
		'the central server refusing the role: 08006 with its error');
}
$central->safe_psql('postgres',
	'GRANT EXECUTE ON FUNCTION idgen.segment_allocate(text, bigint, bigint) TO issuer');
ok($issuers[0]->poll_query_until('postgres', q{
		WITH d AS (INSERT INTO drawn SELECT idgen.segment_nextval('order')
			FROM generate_series(1, 200) RETURNING 1)
		SELECT count(*) = 200 FROM d}),
	'granted again, the issuer draws again');
check_distinct('after the refusal');

# The central server refuses the issuers' role at login (NOLOGIN, its
# connection ended): the issuer's next connection fails while it is being
# made.  Once its buffers run dry a call fails with 08006 quoting the
# central server's refusal; allowed to log in again, the issuer draws again
$central->safe_psql('postgres', q{
	ALTER ROLE issuer NOLOGIN;
	SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'issuer';
});
{
	my ($ret, $out, $err) = try_sql($issuers[0],
		q{INSERT INTO drawn SELECT idgen.segment_nextval('order') FROM generate_series(1, 3000)});
	like($err,
		qr/08006: could not draw an ID for segment tag "order".*DETAIL:  .*the last attempt failed: .*role "issuer" is not permitted to log in/s,
		'the central server refusing the login: 08006 with its error');
}
$central->safe_psql('postgres', 'ALTER ROLE issuer LOGIN');
ok($issuers[0]->poll_query_until('postgres', q{
		WITH d AS (INSERT INTO drawn SELECT idgen.segment_nextval('order')
			FROM generate_series(1, 200) RETURNING 1)
		SELECT count(*) = 200 FROM d}),
	'allowed to log in again, the issuer draws again');
check_distinct('after the login refusal');

# A tag the central server does not know: 42704 on the issuer.  A tag the
# central server has allocated up to the largest bigint: the issuer draws
# the last IDs, then 2200H, as with a tag of its own
$central->safe_psql('postgres', q{SELECT idgen.segment_create('top', 9223372036854775800, 10)});
{
	my ($ret, $out, $err) = try_sql($issuers[1], q{SELECT idgen.segment_nextval('nosuch')});
	like($err, qr/42704: segment tag "nosuch" does not exist/,
		'a tag the central server does not know: 42704');
	is($issuers[1]->safe_psql('postgres',
			q{SELECT count(DISTINCT id) || '|' || max(id) FROM (SELECT idgen.segment_nextval('top') AS id FROM generate_series(1, 8)) s}),
		'8|9223372036854775807', 'the issuer draws the last 8 IDs of a tag at the top');
	($ret, $out, $err) = try_sql($issuers[1], q{SELECT idgen.segment_nextval('top')});
	like($err, qr/2200H: segment tag "top" has run out of IDs/,
		'then 2200H: the tag has run out of IDs');
}

$_->stop for @issuers;
$central->stop;
done_testing();
