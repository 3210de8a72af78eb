# Node ids leased from a registry database (idgen.node_id = 'auto').
# Asserts:
#  - servers lease through a role granted only EXECUTE on the lease
#    functions;
#  - 'auto' without idgen.node_registry refuses to start;
#  - four servers leasing at the same moment get four distinct node ids, and
#    their IDs carry them;
#  - a killed server's id is not given to a server started right after (it
#    gets a fresh id), but is given out once lease time and guard have
#    passed, and the new holder's IDs start above the old holder's recorded
#    last tick;
#  - a server cut off from the registry refuses snowflake IDs (SQLSTATE
#    55000) once its lease has run out, never issuing one after that (each
#    call that succeeds started before its last renewal plus the lease
#    time), and issues again, on the same node id and above its earlier
#    IDs, once the registry is back;
#  - a server whose live lease the registry gives to another server fences
#    at its next renewal, logs it, and issues on the id it leases next.
# No assertion depends on how fast the machine is: the guard is long enough
# that a server started right after the kill leases inside it (checked),
# and the servers started later are initialized before the kill.
use strict;
use warnings;
use IPC::Run;
use Time::HiRes qw(usleep time);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

my $lease_s = 4;
my $guard_s = 20;

# The registry: plain PostgreSQL with the extension's tables and functions
# The guard time is the registry's own setting, never the caller's
my $registry = idgen_node('registry', preload => 0,
	conf => "shared_buffers = 16MB\nidgen.node_lease_guard = '${guard_s}s'\n");
$registry->start;
$registry->safe_psql('postgres', q{
	CREATE EXTENSION idgen;
	CREATE ROLE leaser LOGIN;
	GRANT EXECUTE ON FUNCTION
		idgen.node_lease_acquire(text, text, int, int, int, bigint),
		idgen.node_lease_renew(text, int, text, int, bigint) TO leaser;
});
# Servers connect as a role that may only execute the two lease functions
my $regconn = 'host=' . $registry->host . ' port=' . $registry->port
  . ' dbname=postgres user=leaser';

# A server that leases its node id; max_lead is long so that a new holder
# can run ahead of its clock up to the previous holder's promise
sub auto_node
{
	my ($name) = @_;
	my $n = idgen_node($name, node_id => 'auto', conf => qq{
idgen.node_registry = '$regconn application_name=''idgen $name'''
idgen.node_namespace = 'test'
idgen.node_lease_time = '${lease_s}s'
idgen.node_lease_guard = '${guard_s}s'
idgen.max_lead = '60s'
shared_buffers = 16MB
max_connections = 10
});
	return $n;
}

# Wait until a server holds a valid lease; returns its node id
sub leased_node
{
	my ($n) = @_;
	$n->safe_psql('postgres', 'CREATE EXTENSION IF NOT EXISTS idgen');
	$n->poll_query_until('postgres',
		'SELECT coalesce(valid, false) FROM idgen.node_lease_status()')
	  or die $n->name . ' did not lease a node id';
	return $n->safe_psql('postgres', 'SELECT node_id FROM idgen.node_lease_status()');
}

# 'auto' needs a registry
my $bad = idgen_node('no_registry', node_id => 'auto');
ok(!$bad->start(fail_ok => 1), "'auto' without idgen.node_registry does not start");
like(slurp_file($bad->logfile),
	qr/idgen\.node_id is 'auto' but idgen\.node_registry is not set/,
	'and the log says why');

# Four servers lease at the same moment: the registry's table is locked
# while they start, and released at once
my ($lin, $lout) = ('', '');
my $locker = IPC::Run::start(
	[
		'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1',
		'-h', $registry->host, '-p', $registry->port, 'postgres'
	],
	'<', \$lin, '>', \$lout, '2>', \$lout);
$lin .= "BEGIN;\nLOCK TABLE idgen.node_lease IN ACCESS EXCLUSIVE MODE;\n\\echo locked\n";
$locker->pump until $lout =~ /locked/;

my @servers = map { auto_node("s$_") } 1 .. 4;
$_->start for @servers;
$registry->poll_query_until('postgres', q{
	SELECT count(DISTINCT application_name) = 4 FROM pg_stat_activity
	WHERE wait_event_type = 'Lock' AND application_name LIKE 'idgen s%'})
  or diag('not every worker was waiting on the registry');
$lin .= "COMMIT;\n\\q\n";
$locker->finish;

my %node_of;
$node_of{ $_->name } = leased_node($_) for @servers;
my %seen = map { $_ => 1 } values %node_of;
is(scalar keys %seen, 4, 'four servers starting at once hold four distinct node ids')
  or diag(explain \%node_of);
is(join(',', sort { $a <=> $b } values %node_of), '0,1,2,3',
	'the lowest free ids were leased');
is($registry->safe_psql('postgres', q{
	SELECT count(*), count(DISTINCT instance), count(*) FILTER (WHERE expires_at > now())
	FROM idgen.node_lease WHERE namespace = 'test'}),
	'4|4|4', 'registry: four live leases of four instances');
for my $n (@servers)
{
	is($n->safe_psql('postgres', q{
		SELECT (idgen.id_decode(idgen.snowflake_nextval())).node_id || '/'
		    || (SELECT node_id FROM idgen.snowflake_status())}),
		"$node_of{$n->name}/$node_of{$n->name}",
		$n->name . "'s IDs carry its leased node id $node_of{$n->name}");
}

# Kill one server: its id is not reused before lease time and guard.  The
# servers started after the kill are initialized before it.
my $early = auto_node('early');
my $late = auto_node('late');
my $victim = $servers[1];
my $vnode = $node_of{ $victim->name };
$victim->kill9;
my ($vlast, $vfree_in) = split /\|/, $registry->safe_psql('postgres', qq{
	SELECT last_tick, extract(epoch FROM expires_at + interval '${guard_s}s' - now())
	FROM idgen.node_lease WHERE namespace = 'test' AND node_id = $vnode});
$early->start;
my $enode = leased_node($early);
my $still_guarded = $registry->safe_psql('postgres', qq{
	SELECT expires_at + interval '${guard_s}s' > now()
	FROM idgen.node_lease WHERE namespace = 'test' AND node_id = $vnode});
is($still_guarded, 't', 'the killed server\'s lease is still inside its guard')
  or diag("its id became free in $vfree_in s");
isnt($enode, $vnode, "a server started right after the kill does not get id $vnode");
is($enode, 4, 'it gets the lowest id never leased');

# After lease time and guard the id is given out again, and the new holder
# starts above the tick the killed server promised not to pass
$registry->poll_query_until('postgres', qq{
	SELECT expires_at + interval '${guard_s}s' < now()
	FROM idgen.node_lease WHERE namespace = 'test' AND node_id = $vnode});
$late->start;
my $lnode = leased_node($late);
is($lnode, $vnode, "after the guard, the killed server's id $vnode is leased again");
is($late->safe_psql('postgres', 'SELECT taken_over_tick FROM idgen.node_lease_status()'),
	$vlast, 'the new holder took over the old holder\'s last tick');
# The wall clock's tick is read before the ID is made
my ($wall_tick, $tick) = split /\|/, $late->safe_psql('postgres', q{
	SELECT (idgen.id_decode(idgen.id_make(clock_timestamp(), 0, 0))).tick,
	       (idgen.id_decode(idgen.snowflake_nextval())).tick});
cmp_ok($wall_tick, '<', $vlast,
	"the new holder's wall clock (tick $wall_tick) is still below the old holder's last tick $vlast"
);
cmp_ok($tick, '>', $vlast,
	"so its first ID's tick $tick, above the old holder's last tick, runs ahead of its clock");

# Cut a server off from the registry: it stops issuing within its lease
my $cut = $servers[0];
my $cnode = $node_of{ $cut->name };
my $before = $cut->safe_psql('postgres', 'SELECT idgen.snowflake_nextval()');
$registry->stop;
my ($ret, $out, $err);
my ($issued, $outside) = (0, 0);
my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
while (time < $deadline)
{
	# Whether the call started inside the lease: the lease ends at most the
	# lease time after the last renewal (it counts from when the renewal
	# was sent)
	($ret, $out, $err) = $cut->psql('postgres',
		"\\set VERBOSITY verbose\n"
		  . "SELECT clock_timestamp() < renewed_at + interval '${lease_s}s', idgen.snowflake_nextval() FROM idgen.node_lease_status()"
	);
	last if $ret != 0;
	$issued++;
	$outside++ unless $out =~ /^t\|/;
	usleep(100_000);
}
isnt($ret, 0, 'a server cut off from the registry stops issuing snowflake IDs');
like($err,
	qr/ERROR:  55000: could not generate a snowflake ID: the lease of node id $cnode has run out/,
	'with SQLSTATE 55000 naming its node id');
is($outside, 0,
	"it issued no ID after its lease ran out ($issued calls succeeded while cut off)");
($ret, $out, $err) = $cut->psql('postgres', q{SELECT idgen.gene_id('alice', 3)});
like($err, qr/the lease of node id $cnode has run out/, 'gene IDs stop too');
like($cut->safe_psql('postgres', 'SELECT last_error FROM idgen.node_lease_status()'),
	qr/\S/, 'node_lease_status shows the registry error');

# The registry returns: the same server renews its lease and issues again
$registry->start;
$cut->poll_query_until('postgres', 'SELECT coalesce(valid, false) FROM idgen.node_lease_status()')
  or die 'lease was not renewed';
my $after = $cut->safe_psql('postgres', 'SELECT idgen.snowflake_nextval()');
cmp_ok($after, '>', $before, 'issuing again once renewed, above the earlier IDs');
is($cut->safe_psql('postgres', "SELECT (idgen.id_decode($after)).node_id"),
	$cnode, 'on the same node id');

# The registry gives a live lease to another server (an operator's UPDATE
# stands in for one): at its next renewal the holder fences at once, says
# so in its log and leases another id; its IDs carry the new one
my $moved = $servers[2];
my $mnode = $node_of{ $moved->name };
my $mlog = -s $moved->logfile;
$registry->safe_psql('postgres', qq{
	UPDATE idgen.node_lease SET instance = 'another server', heartbeat = now(),
	       expires_at = now() + interval '1 hour'
	 WHERE namespace = 'test' AND node_id = $mnode});
$moved->poll_query_until('postgres',
	"SELECT coalesce(valid, false) AND node_id <> $mnode FROM idgen.node_lease_status()")
  or die 'the server did not lease another node id';
like(substr(slurp_file($moved->logfile), $mlog),
	qr/lost the lease of node id $mnode: the registry has given it to another server/,
	'the server whose lease was given away says so in its log');
my $mnew = $moved->safe_psql('postgres', 'SELECT node_id FROM idgen.node_lease_status()');
is($moved->safe_psql('postgres', 'SELECT (idgen.id_decode(idgen.snowflake_nextval())).node_id'),
	$mnew, "and its IDs carry the node id it leased next ($mnew, not $mnode)");

$_->stop for grep { $_ ne $victim } @servers;
$early->stop;
$late->stop;
$registry->stop;
done_testing();
