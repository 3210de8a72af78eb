# 051_clock.pl
#	The wall clock steps back under a running server (issue 5, test b).
#
# With a fake clock (test/fakeclock.c) the server's clock steps back 5 ms, 2 s, 7 s and 1 hour
# while psql sessions keep drawing IDs in the background.  Within
# idgen.max_lead the generator runs on its logical clock: no error, no
# duplicate, every ID greater than the ones before.  Past it, calls fail with
# the documented clock error, and IDs flow again once the clock catches up
# or idgen.max_lead is raised.
#
# The test asserts outcomes, never timings: where a step must land while a
# query draws IDs, it checks that it did and repeats the experiment until
# it has, rather than assuming how fast the machine is.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);
use IPC::Run;
use IdgenTest;

my $node = idgen_node('clock', faketime => 1);
start_node($node);
$node->safe_psql('postgres',
	'CREATE EXTENSION idgen; CREATE TABLE idgen_test_stop (stop boolean);');
wait_ready($node);

# Every ID drawn in the foreground, in order
my @fg;

# Draw IDs in the foreground; they must be greater than all drawn before
sub draw_more
{
	my ($label, $n) = @_;
	my $ids = draw_ids($node, $n // 200);

	is(first_disorder($ids), -1, "$label: IDs increase");
	cmp_ok($ids->[0], '>', $fg[-1], "$label: IDs are greater than all before")
	  if @fg;
	push @fg, @$ids;
	return $ids;
}

# One value of idgen.snowflake_status()
sub status
{
	my ($col) = @_;

	return $node->safe_psql('postgres',
		"SELECT $col FROM idgen.snowflake_status()");
}

# Background load for the whole test; both sessions have drawn IDs before
# the first step (waited for, not assumed)
my @drawers =
  map { start_drawer($node, name => "session$_", pause => 0.002, batches => 40000) }
  1 .. 2;
for my $d (@drawers)
{
	cmp_ok(wait_drawn($d, 0), '>', 0, "$d->{name} draws IDs before the first step");
}

draw_more('before any step');

# Is a query marked $tag running on the node?
sub query_running
{
	my ($tag) = @_;

	return $node->safe_psql('postgres',
		"SELECT count(*) > 0 FROM pg_stat_activity WHERE state = 'active' AND query LIKE '/* $tag */%'"
	) eq 't';
}

# Step the clock to $offset while one query draws IDs, so that the step
# lands between two IDs of the same query.  Each row has its ID, the ID's
# timestamp and the wall clock read just before and just after the ID was
# made (ms since 1970).  A query that ended before the step, or began after it, proves
# nothing, so the experiment is repeated (with a longer query if it ended
# too soon) until the step landed inside one: between two rows the wall
# clock went back, below the timestamp of the ID before, where a generator
# that followed the wall clock would have gone back too.  On a busy machine
# a 5 ms step often falls while the backend waits for a CPU for longer than
# that, so it may take several attempts.  Every attempt's IDs are checked
# all the same.  Returns the lead (ms) over the wall clock of
# the first ID made after the step, and the largest lead of any ID made
# after it in that query.
sub step_during_query
{
	my ($label, $offset) = @_;
	my $rows = 50_000;

	for my $attempt (1 .. 30)
	{
		my ($out, $err) = ('', '');
		my $tag = "step $attempt " . int(rand(1_000_000_000));
		my $back0 = status('clock_back_events');

		set_clock($node, '+0') if $attempt > 1;
		my $h = IPC::Run::start(
			[
				'psql', '-XAtq', '-d', $node->connstr('postgres'), '-c',
				"/* $tag */ SELECT id, extract(epoch FROM idgen.id_timestamp(id)) * 1000,
					extract(epoch FROM c) * 1000, extract(epoch FROM d) * 1000
				 FROM (SELECT clock_timestamp() AS c, idgen.snowflake_nextval() AS id,
							  clock_timestamp() AS d
					   FROM generate_series(1, $rows) OFFSET 0) s"
			],
			'<', \undef, '>', \$out, '2>', \$err);

		# Step once the query runs (or has ended: then this attempt fails)
		my $running = 0;
		while ($h->pumpable)
		{
			$h->pump_nb;
			$running = query_running($tag);
			last if $running;
			usleep(10_000);
		}
		set_clock($node, $offset);
		$h->finish;

		my (@ids, @ts, @wall, @after);
		for (split /\n/, $out)
		{
			my ($id, $ts, $wall, $after) = split /\|/;
			push @ids, $id + 0;
			push @ts, $ts + 0;
			push @wall, $wall + 0;
			push @after, $after + 0;
		}
		my $what = "$label (attempt $attempt)";
		is($err, '', "$what: the query drawing IDs across the step succeeded");
		is(scalar @ids, $rows, "$what: all IDs returned");
		is(first_disorder(\@ids), -1, "$what: IDs increase");
		cmp_ok($ids[0] // 0, '>', $fg[-1], "$what: IDs are greater than all before");
		push @fg, @ids;

		# Where the wall clock went back between two rows, below the
		# timestamp of the ID before (an ID can be a tick ahead of the clock
		# without any step, when its sequence wrapped), and far enough that
		# the generator's own readings went back by a tick, which
		# clock_back_events counts.  The generator reads the clock between
		# its row's two clock_timestamp() calls, but the backend may wait
		# for a CPU at any point, so its readings are known only to lie
		# between them: the step fell between rows when the row's first
		# reading is below the row before's last one (the clock moves back
		# once), and the generator went back a tick when the row's last
		# reading is in an earlier tick (ms) than the row before's first.
		# A step that fell while the backend waited for a CPU may show less
		# than that, and proves nothing.
		my ($at) =
		  grep {
			$wall[$_] < $after[ $_ - 1 ]
			  && int($wall[$_]) < $ts[ $_ - 1 ]
			  && int($after[$_]) < int($wall[ $_ - 1 ])
		  } 1 .. $#ids;
		# Not inside: the query ended first (make it longer), or the step
		# fell while the backend was waiting for a CPU, longer than the step
		if (!defined $at)
		{
			note "$what: the step did not land between two IDs of the query; again";
			$rows *= 2 if !$running && $rows < 400_000;
			next;
		}
		cmp_ok(status('clock_back_events'), '>', $back0,
			"$label: the generator saw the clock step back");
		my $lead = $ts[$at] - $wall[$at];
		my $max = max_of(map { $ts[$_] - $wall[$_] } $at .. $#ids);
		note sprintf('%s: the step landed at row %d of %d; lead %.3f ms, largest %.3f ms',
			$label, $at, scalar @ids, $lead, $max);
		return ($lead, $max);
	}
	fail("$label: the clock step landed inside a query drawing IDs");
	return (0, 0);
}

draw_more('more IDs before any step', 20000);

# 5 ms back, during generation: the ID made when the wall clock read below
# the previous ID is not below it (IDs increase, checked above), so it runs
# ahead of the wall clock, and never more than idgen.max_lead (5 s)
my ($lead, $max) = step_during_query('clock 5 ms back', '-0.005');
cmp_ok($lead, '>', 0,
	"clock 5 ms back: IDs ran on the logical clock, ahead of the wall clock ($lead ms)"
);
cmp_ok($max, '<=', 5000, "clock 5 ms back: no ID ran more than idgen.max_lead ahead ($max ms)");
set_clock($node, '+0');
draw_more('clock back at the real time');

# 2 s back: within idgen.max_lead (5 s), IDs keep coming from the logical
# clock, ahead of the wall clock
($lead, $max) = step_during_query('clock 2 s back', '-2');
cmp_ok($lead, '>', 0,
	"clock 2 s back: IDs ran on the logical clock, ahead of the wall clock ($lead ms)"
);
cmp_ok($max, '<=', 5000, "clock 2 s back: no ID ran more than idgen.max_lead ahead ($max ms)");
draw_more('clock 2 s back, next query');
set_clock($node, '+0');
draw_more('clock forward again after 2 s back');

# 1 hour back: past idgen.max_lead, the documented error
set_clock($node, '-1h');
my $waits0 = status('clock_waits');
my ($ret, $out, $err) = try_sql($node, 'SELECT idgen.snowflake_nextval()');
isnt($ret, 0, 'clock 1 hour back: snowflake_nextval fails');
like($err, clock_error_re(), 'clock 1 hour back: the documented clock error');
# How far behind: past idgen.max_lead (else no error), and never more than
# the step plus idgen.max_lead (the generator is never further ahead)
my ($behind) = $err =~ /the system clock is (\d+) ms behind the generator/;
ok(defined $behind && $behind > 5000 && $behind <= 3_600_000 + 5000,
	'the error says how far the clock is behind: more than idgen.max_lead, at most the step plus it ('
	  . ($behind // 'none') . ' ms)');
like($err, qr/HINT:  Retry once the clock has caught up, or raise idgen\.max_lead\./,
	'the hint names idgen.max_lead');
cmp_ok(status('clock_waits'), '>', $waits0, 'the failed call was counted as a clock wait');

# Raising idgen.max_lead lets IDs flow again at once, still increasing
$node->safe_psql('postgres',
	"ALTER SYSTEM SET idgen.max_lead = '2h'; SELECT pg_reload_conf();");
$node->poll_query_until('postgres',
	"SELECT current_setting('idgen.max_lead') = '2h'")
  or die 'reload did not take effect';
draw_more('clock 1 hour back, idgen.max_lead raised to 2h');
$lead = status('lead_ms');
ok($lead > 5000 && $lead <= 7_200_000,
	"the generator runs ahead of the clock by more than the default idgen.max_lead and within 2h ($lead ms)"
);

# Back to the default: the error again, until the clock catches up
$node->safe_psql('postgres',
	'ALTER SYSTEM RESET idgen.max_lead; SELECT pg_reload_conf();');
$node->poll_query_until('postgres',
	"SELECT current_setting('idgen.max_lead') = '5s'")
  or die 'reload did not take effect';
($ret, $out, $err) = try_sql($node, 'SELECT idgen.snowflake_nextval()');
like($err, clock_error_re(),
	'clock 1 hour back, idgen.max_lead back to 5 s: the clock error again');
set_clock($node, '+0');
draw_more('clock caught up after 1 hour back');

# 7 s back, just past idgen.max_lead: calls fail with the clock error while
# the clock is more than idgen.max_lead behind (how many do depends on how
# soon the first call comes, so it is not counted), then IDs flow again by
# themselves as the clock catches up
set_clock($node, '-7');
my ($errors, $other, $first, $behind_ms) = wait_for_clock($node, 60);
note "clock 7 s back: $errors calls failed before IDs flowed again";
is($other, 0, 'clock 7 s back: every failure was the clock error');
is(scalar(grep { $_ <= 5000 } @$behind_ms),
	0, 'clock 7 s back: every clock error was past idgen.max_lead');
ok(defined $first, 'clock 7 s back: IDs flow again once the clock caught up');
cmp_ok($first // 0, '>', $fg[-1],
	'the first ID after catching up is greater than all before');
push @fg, $first if defined $first;
draw_more('after catching up from 7 s back');
set_clock($node, '+0');
draw_more('clock back at the real time at the end');

# The background sessions drew IDs after the last step too (waited for):
# each saw increasing IDs, only the clock error, and no ID was issued twice
# anywhere
my %before_end = map { $_->{name} => drawn_count($_) } @drawers;
wait_drawn($_, $before_end{ $_->{name} }) for @drawers;
stop_drawers($node);
my @all = (\@fg);
for my $d (@drawers)
{
	my ($ids, $err, $end) = finish_drawer($d);

	is($end, 'stopped', "$d->{name} ran through the whole test");
	cmp_ok(scalar @$ids, '>', $before_end{ $d->{name} },
		"$d->{name} received IDs after the last clock step");
	is(first_disorder($ids), -1, "$d->{name} received increasing IDs");
	my @errors = grep { /ERROR/ } split /\n/, $err;
	my @unexpected = grep { $_ !~ clock_error_re() } @errors;
	note "$d->{name}: " . scalar(@$ids) . " IDs, " . scalar(@errors) . " errors";
	is(scalar @unexpected, 0, "$d->{name} saw no error but the clock error")
	  or diag join("\n", @unexpected[0 .. ($#unexpected > 4 ? 4 : $#unexpected)]);
	push @all, $ids;
}
my @dups = duplicates(@all);
is(scalar @dups, 0, 'no ID issued twice over all the clock steps')
  or diag "duplicates: @dups[0 .. ($#dups > 9 ? 9 : $#dups)]";

$node->stop;
no_unexpected_errors($node);
done_testing();
