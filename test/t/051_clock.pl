# 051_clock.pl
#	The wall clock steps back under a running server (issue 5, test b).
#
# With libfaketime the server's clock steps back 5 ms, 2 s, 7 s and 1 hour
# while psql sessions keep drawing IDs in the background.  Within
# idgen.max_lead the generator runs on its logical clock: no error, no
# duplicate, every ID greater than the ones before.  Past it, calls fail with
# the documented clock error, and IDs flow again once the clock catches up
# or idgen.max_lead is raised.
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

# Background load for the whole test
my @drawers =
  map { start_drawer($node, name => "session$_", pause => 0.002, batches => 40000) }
  1 .. 2;

draw_more('before any step');
usleep(300_000);

# IDs one query draws in about a second (measured below)
my $per_second;

# Step the clock to $offset while one long query draws IDs, so the step
# lands in the middle of generation.  Each row also has the lead of its ID
# over the wall clock at the time it was made.  Returns the IDs and the
# largest lead in ms.
sub step_during_query
{
	my ($label, $offset) = @_;
	my ($out, $err) = ('', '');
	my $back0 = status('clock_back_events');
	my $h = IPC::Run::start(
		[
			'psql', '-XAtq', '-d', $node->connstr('postgres'), '-c',
			"SELECT id, round(extract(epoch FROM idgen.id_timestamp(id) - c) * 1000)
			 FROM (SELECT idgen.snowflake_nextval() AS id, clock_timestamp() AS c
				   FROM generate_series(1, $per_second) OFFSET 0) s"
		],
		'<', \undef, '>', \$out, '2>', \$err);

	usleep(300_000);
	set_clock($node, $offset);
	$h->finish;
	is($err, '', "$label: the query drawing IDs across the step succeeded");
	cmp_ok(status('clock_back_events'), '>', $back0,
		"$label: the generator saw the clock step back");
	my (@ids, $lead);
	for (split /\n/, $out)
	{
		my ($id, $l) = split /\|/;
		push @ids, $id + 0;
		$lead = $l if !defined $lead || $l > $lead;
	}
	is(scalar @ids, $per_second, "$label: all IDs returned");
	is(first_disorder(\@ids), -1, "$label: IDs increase across the step");
	cmp_ok($ids[0], '>', $fg[-1], "$label: IDs are greater than all before");
	push @fg, @ids;
	return (\@ids, $lead);
}

# How many IDs one query draws in about a second
my $t0 = time();
draw_more('rate', 20000);
$per_second = int(20000 / (time() - $t0));
note "about $per_second IDs per second in one query";

# 5 ms back, during generation
my ($ids, $lead) = step_during_query('clock 5 ms back', '-0.005');
ok($lead >= 2 && $lead < 50,
	"clock 5 ms back: IDs ran on the logical clock, ahead of the wall clock ($lead ms)"
);
set_clock($node, '+0');
usleep(100_000);
draw_more('clock back at the real time');

# 2 s back: within idgen.max_lead (5 s), IDs keep coming from the logical
# clock, ahead of the wall clock
($ids, $lead) = step_during_query('clock 2 s back', '-2');
ok($lead > 1500 && $lead <= 2100,
	"clock 2 s back: IDs ran on the logical clock, about 2 s ahead of the wall clock ($lead ms)"
);
draw_more('clock 2 s back, next query');
set_clock($node, '+0');
draw_more('clock forward again after 2 s back');

# 1 hour back: past idgen.max_lead, the documented error
set_clock($node, '-1h');
my $waits0 = status('clock_waits');
my ($ret, $out, $err) = try_sql($node, 'SELECT idgen.snowflake_nextval()');
isnt($ret, 0, 'clock 1 hour back: snowflake_nextval fails');
like($err, clock_error_re(), 'clock 1 hour back: the documented clock error');
like($err, qr/the system clock is 3\d{6} ms behind the generator/,
	'the error says how far the clock is behind');
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
ok($lead > 3_500_000, "the generator runs an hour ahead of the clock ($lead ms)");

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

# 7 s back, just past idgen.max_lead: errors for a while, then IDs flow
# again by themselves as the clock catches up
set_clock($node, '-7');
my ($errors, $other, $first) = wait_for_clock($node, 60);
cmp_ok($errors, '>', 0, 'clock 7 s back: calls failed at first');
is($other, 0, 'clock 7 s back: every failure was the clock error');
ok(defined $first, 'clock 7 s back: IDs flow again once the clock caught up');
cmp_ok($first // 0, '>', $fg[-1],
	'the first ID after catching up is greater than all before');
push @fg, $first if defined $first;
draw_more('after catching up from 7 s back');
set_clock($node, '+0');
draw_more('clock back at the real time at the end');

# The background sessions: each saw increasing IDs, only the clock error,
# and no ID was issued twice anywhere
stop_drawers($node);
my @all = (\@fg);
for my $d (@drawers)
{
	my ($ids, $err, $end) = finish_drawer($d);

	is($end, 'stopped', "$d->{name} ran through the whole test");
	cmp_ok(scalar @$ids, '>', 1000, "$d->{name} received IDs");
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
