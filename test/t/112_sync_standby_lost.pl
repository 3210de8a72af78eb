# 112_sync_standby_lost.pl
#	Losing the synchronous standby costs idgen no more than it costs a
#	commit (issue 38, point 4).
#
# A primary with one synchronous standby; a tag held at step 10 (one
# segment ahead), so that drawing 300 IDs needs about 30 allocations, each
# a commit of the idgen worker that waits for the standby, and
# idgen.segment_wait_timeout is 1 s.  The standby is stopped; a client
# inserting rows that draw from the tag, and one making plain commits,
# both wait, and so does a client of another database, whose segments its
# own idgen worker allocates.  Once they have waited well past the timeout
# and the worker is seen waiting for synchronous replication, synchronous
# replication is dropped, as a failover manager does when it declares the
# standby lost.
#
# Asserts, in both databases: no idgen error (before, 55000 after 1 s: "the
# idgen worker did not load a segment"), every row inserted, no ID twice;
# and the plain commits succeed too.  Outcomes only: the waits are conditions polled
# for, never durations asserted.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

my $primary = idgen_node('syncp', allows_streaming => 1, conf => qq{
idgen.segment_wait_timeout = 1000
idgen.segment_step_grow_after = 0
idgen.segment_chain_max = 1
});
start_node($primary);
$primary->safe_psql('postgres', q{
	CREATE EXTENSION idgen;
	SELECT idgen.segment_create('t', 1, 10);
	CREATE TABLE c (id bigint PRIMARY KEY DEFAULT idgen.segment_nextval('t'), v text);
	CREATE TABLE plain (n int);
});
wait_ready($primary);
my $standby = idgen_standby($primary, 'syncs');
$standby->start;
$primary->safe_psql('postgres',
	q{ALTER SYSTEM SET synchronous_standby_names = 'syncs'; SELECT pg_reload_conf()});
$primary->poll_query_until('postgres',
	q{SELECT count(*) = 1 FROM pg_stat_replication WHERE sync_state = 'sync'})
  or die 'no synchronous standby';
$primary->safe_psql('postgres', q{INSERT INTO c (v) SELECT 'before' FROM generate_series(1, 50)});
# The same in another database, whose segments its own idgen worker
# allocates
$primary->safe_psql('postgres', 'CREATE DATABASE other');
$primary->safe_psql('other', q{
	CREATE EXTENSION idgen;
	SELECT idgen.segment_create('t', 1, 10);
	CREATE TABLE c (id bigint PRIMARY KEY DEFAULT idgen.segment_nextval('t'), v text);
	INSERT INTO c (v) SELECT 'before' FROM generate_series(1, 50);
});

# The standby is lost
$standby->stop('immediate');

my ($c_out, $c_err, $p_out, $p_err, $o_out, $o_err) = ('', '', '', '', '', '');
my $client = IPC::Run::start(
	[
		'psql', '-X', '-A', '-t', '-q', '-v', 'ON_ERROR_STOP=1', '-v', 'VERBOSITY=verbose',
		'-d', $primary->connstr('postgres'),
		'-c', q{INSERT INTO c (v) SELECT 'during' FROM generate_series(1, 300)}
	],
	'<', \undef, '>', \$c_out, '2>', \$c_err);
my $other = IPC::Run::start(
	[
		'psql', '-X', '-A', '-t', '-q', '-v', 'ON_ERROR_STOP=1', '-v', 'VERBOSITY=verbose',
		'-d', $primary->connstr('other'),
		'-c', q{INSERT INTO c (v) SELECT 'during' FROM generate_series(1, 300)}
	],
	'<', \undef, '>', \$o_out, '2>', \$o_err);
my $plain = IPC::Run::start(
	[
		'psql', '-X', '-A', '-t', '-q', '-v', 'ON_ERROR_STOP=1',
		'-d', $primary->connstr('postgres'), '-c', q{INSERT INTO plain VALUES (1)}
	],
	'<', \undef, '>', \$p_out, '2>', \$p_err);

# Both wait: the client well past idgen.segment_wait_timeout, the worker
# for synchronous replication
$primary->poll_query_until('postgres', q{
	SELECT count(*) = 2 FROM pg_stat_activity
	 WHERE query LIKE 'INSERT INTO c%' AND now() - query_start > interval '3 s'})
  or die 'the clients did not wait';
$client->pump_nb;
ok($client->pumpable, 'the client is still waiting, past idgen.segment_wait_timeout');
$other->pump_nb;
ok($other->pumpable, 'so is the client of the other database');
is($primary->safe_psql('postgres', q{
	SELECT count(*) > 0 FROM pg_stat_activity
	 WHERE backend_type LIKE 'idgen%' AND wait_event = 'SyncRep'}),
	't', 'the idgen worker waits for synchronous replication, as commits do');
is($c_err . $o_err, '', 'no error meanwhile');

# The manager drops synchronous replication
$primary->safe_psql('postgres',
	q{ALTER SYSTEM RESET synchronous_standby_names; SELECT pg_reload_conf()});
$client->finish;
$other->finish;
$plain->finish;
is($c_err, '', 'the client got every ID, no idgen error');
is($p_err, '', 'the plain commit went through');
my ($rows, $distinct) = split /\|/, $primary->safe_psql('postgres',
	q{SELECT count(*), count(DISTINCT id) FROM c WHERE v = 'during'});
is($rows, '300', 'every row was inserted');
is($primary->safe_psql('postgres', 'SELECT count(*) = count(DISTINCT id) FROM c'),
	't', 'no ID twice');
is($o_err, '', 'the client of the other database got every ID, no idgen error');
is($primary->safe_psql('other', q{
	SELECT count(*) FILTER (WHERE v = 'during') || '|' || (count(*) = count(DISTINCT id)) FROM c}),
	'300|true', 'there too every row was inserted, no ID twice');

$primary->stop;
done_testing();
