# 055_mark_survives.pl
#	The snowflake high-water mark is the server's, not the extension's
#	(issue 10, point 1).
#
# Each step draws IDs, then does what an administrator might -- DROP
# EXTENSION and CREATE EXTENSION, a superuser emptying the reservation
# table, pg_restore --clean while clients draw IDs -- and restarts the
# server (or crashes it) with its clock set further back each time.  After
# every step every new ID must be above every ID drawn before, and no ID may
# ever repeat.  Then a streaming standby: the primary drops the extension
# (so the standby loses the table row too), the primary dies, the standby is
# promoted with its clock behind, and its IDs are still above the primary's.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

# A long max_lead lets the generator run ahead of a clock set back, so IDs
# flow at once above the mark instead of failing until the clock catches up
my $node = idgen_node('mark', faketime => 1, allows_streaming => 1,
	conf => "idgen.max_lead = '10min'\n");
start_node($node);
$node->safe_psql('postgres', q{
	CREATE EXTENSION idgen;
	CREATE TABLE idgen_test_stop (stop boolean);
	CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT idgen.snowflake_nextval(),
	                     item text);
});
wait_ready($node);

# Every ID seen so far
my @all;

# New IDs: present, increasing, above every ID seen before
sub check_above
{
	my ($label, $ids) = @_;

	cmp_ok(scalar @$ids, '>', 0, "$label: IDs were drawn");
	is(first_disorder($ids), -1, "$label: IDs increase");
	cmp_ok(min_of(@$ids), '>', max_of(@all),
		"$label: every new ID is above every ID drawn before")
	  if @all;
	push @all, @$ids;
	return;
}

check_above('first IDs', draw_ids($node, 20000));
$node->safe_psql('postgres',
	"INSERT INTO orders (item) SELECT 'x' FROM generate_series(1, 1000)");
push @all, map { $_ + 0 } split /\n/,
  $node->safe_psql('postgres', 'SELECT id FROM orders');
ok(-f $node->data_dir . '/idgen.state', 'the state file is in the data directory');

# 1. DROP EXTENSION, restart 17 s back, CREATE EXTENSION
$node->safe_psql('postgres', 'DROP EXTENSION idgen CASCADE');
$node->stop('fast');
set_clock($node, '-17');
start_node($node);
$node->safe_psql('postgres', 'CREATE EXTENSION idgen');
wait_ready($node);
check_above('dropped and created again, clock 17 s back', draw_ids($node, 20000));

# 2. A superuser empties the reservation table, then the server crashes
# and comes back 40 s back
$node->safe_psql('postgres', 'DELETE FROM idgen.snowflake_reservation');
check_above('after DELETE', draw_ids($node, 5000));
$node->safe_psql('postgres', 'TRUNCATE idgen.snowflake_reservation');
check_above('after TRUNCATE', draw_ids($node, 5000));
crash_node($node, all => 1);
set_clock($node, '-40');
start_node($node);
wait_ready($node);
check_above('table emptied, crash, clock 40 s back', draw_ids($node, 20000));

# 3. pg_restore --clean of the database while clients draw IDs
my $dump = $PostgreSQL::Test::Utils::tmp_check . '/mark.dump';
$node->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', 'postgres' ],
	'pg_dump of the database');
my @drawers = map { start_drawer($node, name => "restore$_") } 1 .. 2;
IdgenTest::wait_drawn($_, 0) for @drawers;
my ($ret, $stdout, $stderr) = (0, '', '');
$ret = PostgreSQL::Test::Utils::run_log(
	[ 'pg_restore', '--clean', '--if-exists', '-d', $node->connstr('postgres'), $dump ],
	'2>', \$stderr);
ok($ret, 'pg_restore --clean succeeds while clients draw IDs')
  or diag($stderr);
unlike($stderr, qr/ERROR/, 'pg_restore reports no error');
wait_ready($node);
my @restored = map { $_ + 0 } split /\n/,
  $node->safe_psql('postgres', 'SELECT id FROM orders');
is(scalar @restored, 1000, 'the restored table has its rows');
check_above('after the restore', draw_ids($node, 5000));
stop_drawers($node);
my @during;
for my $d (@drawers)
{
	my ($ids, $err, $end) = finish_drawer($d);
	is(first_disorder($ids), -1, "session $d->{name}: IDs increase through the restore");
	push @during, @$ids;
}
cmp_ok(scalar @during, '>', 0, 'the sessions drew IDs around the restore');
push @all, @during;
$node->stop('fast');
set_clock($node, '-60');
start_node($node);
wait_ready($node);
check_above('after the restore, restart 60 s back', draw_ids($node, 20000));
is(scalar(duplicates(\@all)), 0, 'no ID issued twice on the primary');

# 4. A standby keeps the mark in its own state file
my $standby = idgen_standby($node, 'mark_standby', faketime => 1);
start_node($standby);
$node->wait_for_catchup($standby);
check_above('primary with a standby', draw_ids($node, 20000));
# The standby's worker copies the row into its own state file (it looks
# every 100 ms); wait for it, as the row is about to go away
my $reserved = $node->safe_psql('postgres',
	'SELECT max(reserved_until) FROM idgen.snowflake_reservation');
$node->wait_for_catchup($standby);
$standby->poll_query_until('postgres',
	"SELECT durable_until >= '$reserved' FROM idgen.snowflake_status()")
  or die 'the standby did not copy the reservation into its state file';
# The primary drops the extension: the standby loses the table row too
$node->safe_psql('postgres', 'DROP EXTENSION idgen CASCADE');
$node->wait_for_catchup($standby);
is($standby->safe_psql('postgres',
		"SELECT to_regclass('idgen.snowflake_reservation') IS NULL"),
	't', 'the standby has no reservation table any more');
crash_node($node, all => 1);
set_clock($standby, '-90');
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'standby was not promoted';
$standby->safe_psql('postgres', 'CREATE EXTENSION idgen');
wait_ready($standby);
check_above('promoted standby, extension created again, clock 90 s back',
	draw_ids($standby, 20000));
is(scalar(duplicates(\@all)), 0, 'no ID issued twice anywhere');

$standby->stop('fast');
done_testing();
