# 050_crash.pl
#	Crash recovery of the snowflake generator (issue 5, test a).
#
# Under load (pgbench inserting rows, psql sessions drawing IDs and writing
# down every ID they receive), the server is killed with SIGKILL and started
# again.  Every ID issued after the restart must be greater than every ID
# issued before it: those committed to a table and those only a client saw.
# Also checks, under load, that the durable reservation covers each ID as
# soon as it is returned, and that no call fails for want of a reservation.
# Whether a call had to wait for the worker depends on how busy the machine
# is, so the count of such waits is reported, not asserted.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use IdgenTest;

# Start a fresh node and create what the rounds use
sub setup
{
	my ($node) = @_;

	start_node($node);
	$node->safe_psql(
		'postgres', q{
		CREATE EXTENSION idgen;
		CREATE TABLE ids (id bigint PRIMARY KEY
			DEFAULT idgen.snowflake_nextval(), src text NOT NULL);
		CREATE TABLE idgen_test_stop (stop boolean);
	});
	wait_ready($node);
	return;
}

# All IDs every client received from each node, over all rounds
my %seen;

# Committed IDs of table ids, in no particular order
sub table_ids
{
	my ($node) = @_;

	return [ map { $_ + 0 }
		  split /\n/, $node->safe_psql('postgres', 'SELECT id FROM ids') ];
}

# IDs after a restart, retrying while the clock error says to wait for the
# wall clock (a generator that ran ahead before the crash starts ahead)
sub draw_after_restart
{
	my ($node, $label) = @_;
	my $deadline = time() + 60;

	for (;;)
	{
		my ($ret, $out, $err) = try_sql($node,
			'SELECT idgen.snowflake_nextval() FROM generate_series(1, 1000)');
		return [ map { $_ + 0 } split /\n/, $out ] if $ret == 0;
		like($err, clock_error_re(),
			"$label: a failure after the restart is the clock error");
		die "no ID after the restart: $err" if time() > $deadline;
	}
}

# Load the node, crash it, restart it and check the IDs on both sides.
#   all => 1: kill every server process at once, not only the postmaster
#   before_crash => sub run while the load is on, just before the kill
sub crash_round
{
	my ($node, $label, %opt) = @_;
	my $rows0 = $node->safe_psql('postgres', 'SELECT count(*) FROM ids');
	my ($drawers, $pgbench) = start_load($node, $rows0 + 3000);
	my @drawers = @$drawers;
	$opt{before_crash}->() if $opt{before_crash};

	crash_node($node, all => $opt{all});

	my @captured;
	for my $d (@drawers)
	{
		my ($ids, $err, $end) = finish_drawer($d);

		is($end, 'lost', "$label: session $d->{name} ran until the crash");
		cmp_ok(scalar @$ids, '>', 0,
			"$label: session $d->{name} received IDs before the crash");
		is(first_disorder($ids), -1,
			"$label: session $d->{name} received increasing IDs");
		unlike($err, qr/has not reserved its time range/,
			"$label: session $d->{name} never failed for want of a reservation");
		push @captured, $ids;
	}
	my ($pgb_out, $pgb_err) = finish_pgbench($pgbench);
	like($pgb_err, qr/terminat|abort|connection|server closed/i,
		"$label: pgbench lost its connections in the crash");
	unlike($pgb_err, qr/has not reserved its time range/,
		"$label: no pgbench client failed for want of a reservation");

	start_node($node);
	wait_ready($node);
	my $rows = table_ids($node);
	cmp_ok(scalar @$rows, '>=', $rows0 + 3000,
		"$label: committed rows survived the crash");

	note "$label: clients received "
	  . join(' + ', map { scalar @$_ } @captured)
	  . " IDs, " . scalar(@$rows) . " rows committed";
	push @{ $seen{ $node->name } }, @$_ for @captured;
	my @dups = duplicates(@captured);
	is(scalar @dups, 0, "$label: no ID received twice before the crash")
	  or diag "duplicates: @dups[0 .. ($#dups > 9 ? 9 : $#dups)]";

	my $old_max = max_of(@{ $seen{ $node->name } }, @$rows);
	my $new = draw_after_restart($node, $label);
	my ($ret, $out, $err) = try_sql($node,
		"INSERT INTO ids (src) SELECT 'after' FROM generate_series(1, 100) RETURNING id"
	);
	is($err, '', "$label: rows inserted after the restart")
	  or $out = '';
	my $new_rows = [ map { $_ + 0 } split /\n/, $out ];
	cmp_ok(min_of(@$new, @$new_rows), '>', $old_max,
		"$label: every ID after the restart is greater than every ID before it"
	);
	push @{ $seen{ $node->name } }, @$new, @$new_rows;
	return;
}

# --- A server with the default layout ---
my $node = idgen_node('crash', conf => "idgen.worker_wait_timeout = '500ms'\n");
setup($node);

# Each ID is covered by the committed reservation as soon as it is returned
# (checked from a second statement, whose snapshot is newer than the call)
sub reservation_covers_ids
{
	my ($n) = @_;

	my $sql = "SELECT idgen.snowflake_nextval() AS id \\gset\n"
	  . "SELECT idgen.id_timestamp(:id) <= reserved_until FROM idgen.snowflake_reservation;\n";
	my $out = $node->safe_psql('postgres', $sql x $n);
	my @res = split /\n/, $out;
	is(scalar(@res), $n, "reservation checked for $n IDs under load");
	is(scalar(grep { $_ ne 't' } @res),
		0, "the durable reservation covered every ID when it was returned");
	return;
}

crash_round(
	$node, 'postmaster killed',
	before_crash => sub {
		reservation_covers_ids(300);
		note 'calls that waited for the reservation under load: '
		  . $node->safe_psql('postgres',
			'SELECT reservation_waits FROM idgen.snowflake_status()');
	});
crash_round($node, 'all processes killed', all => 1);

# Crash again right after a restart, twice: each start begins above the
# reservation the previous one wrote
for my $i (1 .. 2)
{
	my $before = max_of(@{ $seen{crash} });
	my $ids = draw_ids($node, 100);
	cmp_ok(min_of(@$ids), '>', $before,
		"quick crash $i: new IDs are greater than all earlier ones");
	push @{ $seen{crash} }, @$ids;
	crash_node($node, all => 1);
	start_node($node);
	wait_ready($node);
	my $after = draw_ids($node, 100);
	cmp_ok(min_of(@$after), '>', max_of(@$ids),
		"quick crash $i: IDs after the restart are greater");
	push @{ $seen{crash} }, @$after;
}
# A stalled worker: a session holds the reservation row locked, so the
# worker cannot extend it.  Calls may use only what is durable already:
# once the clock reaches the end of the reservation they wait for the
# worker (idgen.worker_wait_timeout, 500 ms here) and fail, and no ID
# beyond the committed reservation is ever returned.  Then a crash.
# Calls are made until one fails (bounded by the test timeout); if the
# reservation had run out before the first call came, the experiment shows
# nothing about the IDs it still covers, and is run again.
{
	my ($holder, $waits0, @got, $errors, $other);
	for my $attempt (1 .. 5)
	{
		$node->poll_query_until('postgres',
			"SELECT reserved_until > clock_timestamp() + interval '200 ms' FROM idgen.snowflake_status()"
		) or die 'the worker does not keep the reservation ahead of the clock';
		$holder = $node->background_psql('postgres');
		$holder->query_safe(
			'BEGIN; SELECT 1 FROM idgen.snowflake_reservation FOR UPDATE');
		$waits0 = $node->safe_psql('postgres',
			'SELECT reservation_waits FROM idgen.snowflake_status()');
		@got = ();
		($errors, $other) = (0, 0);
		my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
		while ($errors == 0)
		{
			die 'calls never failed with the reservation row locked'
			  if time() > $deadline;
			my ($ret, $out, $err) = try_sql($node,
				"SELECT idgen.snowflake_nextval() AS id \\gset\n"
				  . "SELECT :id, idgen.id_timestamp(:id) <= reserved_until FROM idgen.snowflake_reservation"
			);
			if ($ret == 0)
			{
				my ($id, $covered) = split /\|/, $out;
				push @got, [ $id + 0, $covered ];
			}
			else
			{
				$errors++;
				$other++
				  unless $err =~
				  /ERROR:  55000: could not generate a snowflake ID: the idgen worker has not reserved its time range/;
			}
		}
		last if @got;
		note "attempt $attempt: the reservation had run out before the first call; again";
		$holder->query_safe('ROLLBACK');
		$holder->quit;
	}
	cmp_ok(scalar @got, '>', 0, 'stalled worker: IDs while the reservation lasts');
	is(scalar(grep { $_->[1] ne 't' } @got),
		0, 'stalled worker: no ID beyond the committed reservation');
	cmp_ok($errors, '>', 0,
		'stalled worker: calls fail once the reservation is used up');
	is($other, 0, 'stalled worker: with the worker error, not another one');
	cmp_ok(
		$node->safe_psql('postgres',
			'SELECT reservation_waits FROM idgen.snowflake_status()'),
		'>', $waits0,
		'stalled worker: the calls waited for the reservation');
	push @{ $seen{crash} }, map { $_->[0] } @got;

	crash_node($node, all => 1);
	eval { $holder->quit };
	start_node($node);
	wait_ready($node);
	my $after = draw_ids($node, 1000);
	cmp_ok(min_of(@$after), '>', max_of(@{ $seen{crash} }),
		'stalled worker, crash: IDs after the restart are greater');
	push @{ $seen{crash} }, @$after;
}

my @dups = duplicates($seen{crash});
is(scalar @dups, 0, 'no duplicate among all IDs of node crash');
$node->stop;

# --- A generator running ahead of the wall clock ---
# Three sequence bits allow 8 IDs per ms, so a burst of 60,000 IDs in one
# query pushes the generator seconds ahead of the clock (up to
# idgen.max_lead), whatever the pace of the background load: IDs after the
# crash must still be above those, not merely above the wall clock.
my $lead = idgen_node(
	'lead',
	node_id => 3,
	conf => "idgen.layout = 'ts=41,node=10,seq=3,unit=1ms,epoch=2024-01-01'\n"
	  . "idgen.max_lead = '10s'\n");
setup($lead);
crash_round(
	$lead, 'crash while ahead of the clock',
	before_crash => sub {
		my $bursts = 0;
		until ($lead->safe_psql('postgres',
				'SELECT lead_ms > 3000 FROM idgen.snowflake_status()') eq 't')
		{
			die "the generator did not run ahead of the clock" if ++$bursts > 10;
			push @{ $seen{lead} }, @{ draw_ids($lead, 60000) };
		}
		pass('the generator ran more than 3 s ahead of the clock');
	});
@dups = duplicates($seen{lead});
is(scalar @dups, 0, 'no duplicate among all IDs of node lead');
$lead->stop;

no_unexpected_errors($node);
no_unexpected_errors($lead);
done_testing();
