# The bounds a node registry and a central segment server enforce come from
# the serving server alone (issue 22, point 1).  A plain server (extension
# installed, library not preloaded) has idgen.node_lease_guard = '1h' and
# idgen.segment_max_step = 500 in postgresql.conf.  Asserts:
#  - a lease that ran out a moment ago (inside the guard) is not taken over
#    by a caller that lowers the guard with SET, set_config, PGOPTIONS,
#    ALTER ROLE ... SET of its own or an ALTER ROLE/DATABASE ... SET made
#    by a superuser, and a live lease is
#    not taken with SET idgen.node_lease_guard = '-1h';
#  - segment_allocate gives no segment longer than 500 whatever the
#    caller's session sets;
#  - idgen.serving_settings() shows the file's values; ALTER SYSTEM and a
#    reload change them;
#  - another LOGIN role holding the advisory lock that 0.3.0 took, or
#    trying to lock the registry's tables, keeps no one from leasing;
#  - a lease longer than the registry's idgen.node_lease_max_time (15 min
#    here) is refused (22023), for acquisition and renewal, whatever a
#    session sets; the previous holder's name comes back without its key;
#  - on a server with the library preloaded, a session cannot SET them.
use strict;
use warnings;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

my $reg = idgen_node('serving', preload => 0, conf => q{
idgen.node_lease_guard = '1h'
idgen.segment_max_step = 500
idgen.node_lease_max_time = '15min'
});
$reg->start;
$reg->safe_psql('postgres', q{
	CREATE EXTENSION idgen;
	CREATE ROLE leaser LOGIN;
	GRANT EXECUTE ON FUNCTION
		idgen.node_lease_acquire(text, text, int, int, int, bigint),
		idgen.node_lease_renew(text, int, text, int, bigint),
		idgen.segment_allocate(text, bigint, bigint) TO leaser;
	CREATE ROLE anyone LOGIN;
	-- the tag functions need the preload; a plain server's tags are rows
	INSERT INTO idgen.segment_alloc (biz_tag, max_id, step) VALUES ('order', 0, 100);
});

# Run SQL as a role, with extra environment; returns (exit code, stdout,
# stderr with SQLSTATE)
sub as_role
{
	my ($role, $sql, %env) = @_;
	local %ENV = (%ENV, %env);
	return $reg->psql('postgres', $sql, on_error_stop => 0,
		extra_params => [ '-U', $role, '-v', 'VERBOSITY=verbose' ]);
}

is($reg->safe_psql('postgres', 'SELECT * FROM idgen.serving_settings()'),
	'01:00:00|500|00:15:00', 'serving_settings shows postgresql.conf\'s values');

# --- A lease that ran out a moment ago stays the victim's for an hour ---
my ($ret, $out, $err) = as_role('leaser', q{
	SELECT leased_node FROM idgen.node_lease_acquire('ns', 'victim key 1', 0, 1000, 0, 0)});
is($out, '0', 'the victim leases node 0 for a second');
$reg->poll_query_until('postgres', q{
	SELECT expires_at < now() FROM idgen.node_lease WHERE namespace = 'ns' AND node_id = 0})
  or die 'the lease did not run out';

my $take = q{SELECT coalesce(leased_node, -1) FROM idgen.node_lease_acquire('ns', 'attacker', 0, 1000, 0, 0)};
my $alloc = q{SELECT len FROM idgen.segment_allocate('order', 9223372036854775807, 0)};
my $shown = q{SELECT * FROM idgen.serving_settings()};
my $allocs = 0;

# Each way a caller's session can set them: the bounds stay the file's, the
# lapsed lease stays the victim's, a segment stays at 500
sub attack
{
	my ($how, $set, %env) = @_;
	my ($ret, $out, $err) = as_role('leaser', "$set\n$take;\nCOMMIT;", %env);
	is((split /\n/, $out)[-1], '-1', "$how: the lapsed lease inside the registry's guard is not taken");
	($ret, $out, $err) = as_role('leaser', "$set\n$alloc;\nCOMMIT;", %env);
	is((split /\n/, $out)[-1], '500', "$how: a segment of the server's 500");
	$allocs++;
	($ret, $out, $err) = as_role('leaser', "$set\n$shown;\nCOMMIT;", %env);
	is((split /\n/, $out)[-1], '01:00:00|500|00:15:00', "$how: serving_settings shows the file's values");
	return;
}
attack('SET', q{SET idgen.node_lease_guard = '0'; SET idgen.segment_max_step = 1000000000;
	SET idgen.node_lease_max_time = '30d';});
attack('SET after a first call', q{SELECT FROM idgen.serving_settings();
	SET idgen.node_lease_guard = '0'; SET idgen.segment_max_step = 1000000000;});
attack('set_config', q{SELECT FROM set_config('idgen.node_lease_guard', '0', false) a,
	set_config('idgen.segment_max_step', '9223372036854775807', false) b;});
attack('SET LOCAL', q{BEGIN; SET LOCAL idgen.node_lease_guard = '0';
	SET LOCAL idgen.segment_max_step = 1000000000;});
attack('PGOPTIONS', '',
	PGOPTIONS => '-c idgen.node_lease_guard=0 -c idgen.segment_max_step=1000000000');
# Refused on 15; stored as the role's own (USER SET) value on 16 and later
as_role('leaser', q{ALTER ROLE leaser SET idgen.node_lease_guard = '0';
	ALTER ROLE leaser SET idgen.segment_max_step = 1000000000});
attack('ALTER ROLE ... SET by the lease role', '');
$reg->safe_psql('postgres', q{
	ALTER ROLE leaser SET idgen.node_lease_guard = '0';
	ALTER DATABASE postgres SET idgen.node_lease_guard = '0';
	ALTER ROLE leaser SET idgen.segment_max_step = 1000000000;
	ALTER DATABASE postgres SET idgen.segment_max_step = 1000000000});
attack('ALTER ROLE/DATABASE ... SET by a superuser', '');
$reg->safe_psql('postgres', q{
	ALTER ROLE leaser RESET ALL;
	ALTER DATABASE postgres RESET ALL});

# The issue's own attack on a live lease
($ret, $out, $err) = as_role('leaser', q{
	SELECT leased_node FROM idgen.node_lease_acquire('live', 'victim key 2', 0, 600000, 0, 0)});
is($out, '0', 'a second victim leases node 0 for 10 minutes');
($ret, $out, $err) = as_role('leaser', q{
	SET idgen.node_lease_guard = '-1h';
	SELECT coalesce(leased_node, -1) FROM idgen.node_lease_acquire('live', 'attacker', 1023, 600000, 0, 0)});
is((split /\n/, $out)[-1], '1', "SET idgen.node_lease_guard = '-1h': the attacker gets another id, not the live one");
is($reg->safe_psql('postgres', q{
	SELECT string_agg(node_id || '=' || instance, ',' ORDER BY instance)
	FROM idgen.node_lease WHERE namespace IN ('ns', 'live') AND node_id = 0}),
	'0=victim key 1,0=victim key 2', 'both victims still hold node 0');

# --- No lease longer than the registry's idgen.node_lease_max_time ---
for my $set ('', "SET idgen.node_lease_max_time = '30d';")
{
	my $how = $set ? 'with a session SET' : 'as asked';
	($ret, $out, $err) = as_role('leaser', qq{$set
		SELECT leased_node FROM idgen.node_lease_acquire('hoard', 'hoarder key 4', 1023, 2073600000, 0, 0)});
	like($err, qr/22023: node lease time 24 days is longer than this registry allows/,
		"a lease of 24 days is refused (22023), $how");
	($ret, $out, $err) = as_role('leaser', qq{$set
		SELECT idgen.node_lease_renew('live', 0, 'victim key 2', 2073600000, 0)});
	like($err, qr/22023/, "a renewal for 24 days too, $how");
}
is($reg->safe_psql('postgres', q{SELECT count(*) FROM idgen.node_lease WHERE namespace = 'hoard'}),
	'0', 'nothing was leased in the refused calls');
is($reg->safe_psql('postgres', q{
	SELECT expires_at < now() + interval '10 min' FROM idgen.node_lease
	WHERE namespace = 'live' AND node_id = 0}),
	't', 'and the live lease was not lengthened');
($ret, $out, $err) = as_role('leaser', q{
	SELECT leased_node FROM idgen.node_lease_acquire('hoard', 'first key 5', 0, 900000, 0, 7)});
is($out, '0', 'a lease of the registry\'s largest time is granted');
# The row lapses (the guard is an hour: move its end back by hand)
$reg->safe_psql('postgres', q{UPDATE idgen.node_lease
	SET expires_at = now() - interval '2 h' WHERE namespace = 'hoard'});
($ret, $out, $err) = as_role('leaser', q{
	SELECT leased_node, previous_instance, previous_last_tick
	FROM idgen.node_lease_acquire('hoard', 'second key 6', 0, 1000, 0, 0)});
is($out, '0|first|7', 'the next holder learns the previous one\'s name without its key, and its promise');
($ret, $out, $err) = as_role('leaser', q{
	SELECT leased_node, previous_instance IS NULL, previous_last_tick IS NULL
	FROM idgen.node_lease_acquire('hoard', 'second key 6', 0, 1000, 0, 0)});
is($out, '0|t|t', 'a holder taking its own row back learns no previous holder');

is($reg->safe_psql('postgres', q{SELECT max_id FROM idgen.segment_alloc WHERE biz_tag = 'order'}),
	500 * $allocs, 'max_id moved by 500 per allocation');

# --- ALTER SYSTEM and a reload change the bounds ---
$reg->safe_psql('postgres', 'ALTER SYSTEM SET idgen.segment_max_step = 300');
$reg->reload;
$reg->poll_query_until('postgres',
	'SELECT segment_max_step = 300 FROM idgen.serving_settings()')
  or die 'the reload did not change segment_max_step';
($ret, $out, $err) = as_role('leaser',
	q{SELECT len FROM idgen.segment_allocate('order', 1000000, 0)});
is($out, '300', 'after ALTER SYSTEM and a reload: a segment of 300');
($ret, $out, $err) = as_role('leaser', q{SET idgen.segment_max_step = 1000000000;
	SELECT len FROM idgen.segment_allocate('order', 1000000, 0)});
is((split /\n/, $out)[-1], '300', 'and a session SET still does not change it');

# --- Locks another role can take do not stop leasing ---
my ($lin, $lout, $lerr) = (q{BEGIN;
SELECT pg_advisory_xact_lock(hashtext('idgen.node_lease'), hashtext('locked'));
SELECT pg_advisory_xact_lock(hashtext('idgen.node_lease'), hashtext('default'));
\echo LOCKED
}, '', '');
my $locker = IPC::Run::start(
	[ 'psql', '-X', '-q', '-U', 'anyone', '-d', $reg->connstr('postgres') ],
	'<', \$lin, '>', \$lout, '2>', \$lerr);
$locker->pump until $lout =~ /LOCKED/;
($ret, $out, $err) = as_role('leaser', q{
	SET lock_timeout = '60s';
	SELECT leased_node FROM idgen.node_lease_acquire('locked', 'new server key 3', 1023, 60000, 0, 0)});
is($ret, 0, 'leasing while another role holds the advisory lock succeeds');
is($out, '0', 'and gets node 0');
$lin .= "COMMIT;\n";
$locker->finish;
for my $lock ('LOCK TABLE idgen.node_lease_lock IN ACCESS SHARE MODE',
	'LOCK TABLE idgen.node_lease IN ACCESS SHARE MODE',
	'LOCK TABLE idgen.segment_alloc IN ACCESS SHARE MODE',
	'SELECT FROM idgen.node_lease_lock FOR UPDATE',
	'SELECT FROM idgen.segment_alloc FOR KEY SHARE')
{
	($ret, $out, $err) = as_role('anyone', "BEGIN; $lock; ROLLBACK");
	like($err, qr/42501/, "another role cannot: $lock");
}
($ret, $out, $err) = as_role('leaser', "BEGIN; LOCK TABLE idgen.node_lease_lock; ROLLBACK");
like($err, qr/42501/, 'the lease role cannot lock the lock table either');
$reg->stop;

# --- With the library preloaded, a session cannot SET them at all ---
my $pre = idgen_node('serving_preloaded', conf => "idgen.segment_max_step = 500\n");
start_node($pre);
$pre->safe_psql('postgres', 'CREATE EXTENSION idgen');
wait_ready($pre);
($ret, $out, $err) = try_sql($pre, "SET idgen.node_lease_guard = '0'");
like($err, qr/55P02/, 'preloaded: SET idgen.node_lease_guard is refused (55P02)');
($ret, $out, $err) = try_sql($pre, "SET idgen.segment_max_step = 1000000");
like($err, qr/55P02/, 'preloaded: SET idgen.segment_max_step is refused (55P02)');
is($pre->safe_psql('postgres', 'SELECT * FROM idgen.serving_settings()'),
	'00:00:10|500|00:10:00', 'preloaded: serving_settings shows the default guard and the file\'s step');
$pre->stop;

done_testing();
