# 053_failover.pl
#	Promotion of a streaming standby after the primary crashed (issue 5,
#	test d).
#
# A standby made by pg_basebackup carries the primary's configuration, node
# id included.  Under load on the primary, the primary is killed with
# SIGKILL and the standby promoted: every ID of the promoted server must be
# greater than every ID a client received from the old primary.  The
# reservation row reaches the standby through WAL; the promoted server's
# worker raises the generator's floor above it before the first ID.
#
# Twice: with asynchronous replication and equal clocks, and with
# synchronous replication and the standby's clock 30 s behind the primary's
# (without the reservation, the promoted server would issue IDs 30 s below
# the old primary's).  The skew is large, and idgen.max_lead on the standby
# larger still, so that how long the failover takes on a busy machine
# cannot change the outcome: the promoted server's clock is unmistakably
# behind the old primary's last ID, and its IDs are above it all the same.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

# A primary with idgen and the tables the test uses, running
sub make_primary
{
	my ($name) = @_;
	my $primary = idgen_node($name, allows_streaming => 1);

	start_node($primary);
	$primary->safe_psql(
		'postgres', q{
		CREATE EXTENSION idgen;
		CREATE TABLE ids (id bigint PRIMARY KEY
			DEFAULT idgen.snowflake_nextval(), src text NOT NULL);
		CREATE TABLE idgen_test_stop (stop boolean);
	});
	wait_ready($primary);
	return $primary;
}

# Load the primary, kill it, promote the standby, compare the IDs
sub failover
{
	my ($primary, $standby, $label, $behind) = @_;
	my ($drawers, $pgbench) = start_load($primary, 3000);
	my @drawers = @$drawers;
	# Let the standby replay some of it, as a real one would
	$standby->poll_query_until('postgres', 'SELECT count(*) > 0 FROM ids')
	  or die "the standby does not replay";

	crash_node($primary);
	my @captured;
	for my $d (@drawers)
	{
		my ($ids, $err, $end) = finish_drawer($d);

		is($end, 'lost', "$label: session $d->{name} ran until the crash");
		is(first_disorder($ids), -1,
			"$label: session $d->{name} received increasing IDs");
		push @captured, $ids;
	}
	finish_pgbench($pgbench);
	my $old_max = max_of(map { @$_ } @captured);
	note "$label: clients received "
	  . join(' + ', map { scalar @$_ } @captured)
	  . " IDs from the old primary";
	is(scalar(duplicates(@captured)), 0,
		"$label: no ID received twice from the old primary");

	$standby->promote;
	$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
	  or die "the standby was not promoted";
	wait_ready($standby);

	my $rows = [ map { $_ + 0 } split /\n/,
		  $standby->safe_psql('postgres', 'SELECT id FROM ids') ];
	cmp_ok(scalar @$rows, '>', 0, "$label: replicated rows are there");
	$old_max = max_of($old_max, @$rows);

	# With the standby's clock behind, the wall clock alone would repeat IDs
	is( $standby->safe_psql('postgres',
			"SELECT clock_timestamp() < idgen.id_timestamp($old_max)"),
		't',
		"$label: the promoted server's clock is below the old primary's last ID"
	) if $behind;
	my $new = draw_ids($standby, 2000);
	my $new_rows = [ map { $_ + 0 } split /\n/,
		  $standby->safe_psql('postgres',
			"INSERT INTO ids (src) SELECT 'promoted' FROM generate_series(1, 500) RETURNING id"
		  ) ];
	is(first_disorder($new), -1, "$label: the promoted server's IDs increase");
	cmp_ok(min_of(@$new, @$new_rows), '>', $old_max,
		"$label: every ID of the promoted server is greater than every ID of the old primary"
	);
	no_unexpected_errors($primary);
	no_unexpected_errors($standby);
	return;
}

# --- Asynchronous replication, equal clocks ---
my $primary = make_primary('primary_async');
my $standby = idgen_standby($primary, 'standby_async');
start_node($standby);
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'),
	't', 'async: the standby is in recovery');
failover($primary, $standby, 'async');
$standby->stop;

# --- Synchronous replication, standby clock 30 s behind ---
$primary = make_primary('primary_sync');
$standby = idgen_standby(
	$primary, 'standby_sync',
	faketime => 1,
	conf => "synchronous_standby_names = ''\nidgen.max_lead = '2min'\n");
set_clock($standby, '-30');
start_node($standby);
$primary->safe_psql('postgres',
	"ALTER SYSTEM SET synchronous_standby_names = 'standby_sync'; SELECT pg_reload_conf();"
);
$primary->poll_query_until('postgres',
	"SELECT sync_state = 'sync' FROM pg_stat_replication WHERE application_name = 'standby_sync'"
) or die "the standby did not become synchronous";
pass('sync: the standby is synchronous');
my $skew =
  $primary->safe_psql('postgres', 'SELECT extract(epoch FROM clock_timestamp())')
  - $standby->safe_psql('postgres', 'SELECT extract(epoch FROM clock_timestamp())');
cmp_ok($skew, '>', 0, "sync: the standby's clock is behind the primary's ($skew s)");
failover($primary, $standby, 'sync, standby clock 30 s behind', 1);
$standby->stop;

done_testing();
