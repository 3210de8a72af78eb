# Leaf's dynamic step, with the durations shortened for the test
# (idgen.segment_step_grow_after = 1s, idgen.segment_step_shrink_after = 3s)
# and idgen.segment_max_step = 1000: segments used up quickly double the
# step up to the maximum; a segment that lasts between the two durations
# keeps it; each one that lasts longer halves it, never below the tag's
# step (100).
#
# advance() uses up the current segment and draws one ID from the next; the
# next was allocated while the current one was used (at 10%), so the new
# current step tells how the allocation judged the time since the previous
# one.
#
# How long a segment lasted is not assumed from the sleeps: it lies between
# the sleep before the advance and the time between the two allocations as
# the server recorded them (idgen.segment_status.last_fetch), and every new
# step is checked against what the rule allows for that interval.  Each
# behaviour (double, cap, keep, halve, floor) must also be seen where the
# interval leaves no doubt; where load made it ambiguous, that advance is
# repeated (a bounded number of times).
use strict;
use warnings;
use List::Util qw(min max);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep);
use IdgenTest;

my $node = idgen_node('segment_step', conf => qq{
idgen.segment_step_grow_after = '1s'
idgen.segment_step_shrink_after = '3s'
idgen.segment_max_step = 1000
# a call that waits for the worker fails only if it hangs
idgen.segment_wait_timeout = '60s'
});
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION idgen;
	SELECT idgen.segment_create('d', step => 100);
	CREATE TABLE drawn (n bigserial, id bigint);
});

my ($grow_ms, $shrink_ms, $tag_step, $max_step) = (1000, 3000, 100, 1000);

# One session for all the drawing, so that "fast" is not slowed down by a
# new connection for every statement on a busy machine
my $session = $node->background_psql('postgres');

# Step of the current segment, number of allocations, and when the last
# one was published (ms since 1970)
sub seg_state
{
	return split /\|/, $session->query_safe(q{
		SELECT cur_step, fetches, extract(epoch FROM last_fetch) * 1000
		  FROM idgen.segment_status WHERE biz_tag = 'd'});
}

# The steps Leaf's rule allows after a segment of $step that lasted between
# $lo and $hi ms
sub allowed_steps
{
	my ($step, $lo, $hi) = @_;
	my %ok;

	$ok{ min($step * 2, $max_step) } = 1 if $lo < $grow_ms;
	$ok{$step} = 1 if $hi >= $grow_ms && $lo <= $shrink_ms;
	$ok{ max(int($step / 2), $tag_step) } = 1 if $hi > $shrink_ms;
	return sort { $a <=> $b } keys %ok;
}

# Wait $pause seconds, use up the current segment, draw one ID of the next;
# checks the new step against the rule.  Returns the new step, the old one,
# and the bounds (ms) of how long the old segment lasted.
sub advance
{
	my ($label, $pause) = @_;
	my ($step0, $fetches0, $at0) = seg_state();

	sleep $pause if $pause;
	$session->query_safe(q{
		INSERT INTO drawn (id)
		SELECT idgen.segment_nextval('d') FROM generate_series(1,
			(SELECT cur_max - cur_value + 2 FROM idgen.segment_status WHERE biz_tag = 'd'))});
	my ($step1, $fetches1, $at1) = seg_state();
	my ($lo, $hi) = ($pause * 1000, $at1 - $at0);
	my @allowed = allowed_steps($step0, $lo, $hi);

	is($fetches1, $fetches0 + 1, "$label: one allocation");
	ok( (grep { $_ == $step1 } @allowed),
		sprintf('%s: step %d -> %d after a segment that lasted %.0f to %.0f ms (allowed: %s)',
			$label, $step0, $step1, $lo, $hi, join(' or ', @allowed)));
	return ($step1, $step0, $lo, $hi);
}

$session->query_safe(q{INSERT INTO drawn (id) VALUES (idgen.segment_nextval('d'))});

# Fast use: the step doubles up to the maximum and stays there
my @steps = (seg_state())[0];
my $capped = 0;
for my $i (1 .. 20)
{
	my ($step, $step0, $lo, $hi) = advance("fast use $i", 0);
	push @steps, $step;
	$capped = 1 if $step0 == $max_step && $hi < $grow_ms;
	last if $capped;
}
is($steps[0], $tag_step, 'the first segment has the tag\'s step');
ok($capped,
	'fast use: the step doubles up to idgen.segment_max_step and stays there (' . join(',', @steps) . ')');

# A segment that lasted between the two durations keeps its step
my $kept = 0;
for my $i (1 .. 10)
{
	my ($step, $step0, $lo, $hi) = advance("2 s pause $i", 2);
	$kept = 1 if $hi <= $shrink_ms;
	last if $kept;
}
ok($kept, 'a segment that lasted between 1s and 3s keeps the step');

# Idle use: the step halves, down to the tag's step and no further
my @halves;
my $floored = 0;
for my $i (1 .. 10)
{
	my ($step, $step0) = advance("3.5 s pause $i", 3.5);
	push @halves, $step;
	$floored = 1 if $step0 == $tag_step;
	last if $floored;
}
ok($floored,
	'idle use: the step halves, never below the tag\'s step (' . join(',', @halves) . ')');

# Fast again: it grows again
my $doubled = 0;
for my $i (1 .. 10)
{
	my ($step, $step0, $lo, $hi) = advance("fast use again $i", 0);
	$doubled = 1 if $hi < $grow_ms;
	last if $doubled;
}
ok($doubled, 'fast use again: it doubles again');
$session->quit;

# Every ID was handed out once, in order, with no gap in between
is($node->safe_psql('postgres', q{
	SELECT count(*) = count(DISTINCT id) AND min(id) = 1 AND max(id) = count(*)
	  FROM drawn}),
	't', 'the IDs are 1..N without a gap');
is($node->safe_psql('postgres', q{
	SELECT step FROM idgen.segment_alloc WHERE biz_tag = 'd'}),
	'100', 'the table keeps the configured step');

$node->stop;
done_testing();
