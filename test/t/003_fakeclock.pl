# 003_fakeclock.pl
#	The fake clock of the clock tests (test/fakeclock.c) moves the wall
#	clock by its file's offset, leaves the monotonic clock alone, and is safe
#	in a signal handler.
#
# PostgreSQL reads the wall clock in its SIGALRM handler (a timeout firing).
# libfaketime, which these tests used before, reads its file with fopen()
# there: a backend of t/066 aborted with "corrupted double-linked list", and
# the program below deadlocks under it at once.  Here a SIGALRM every 50 us
# reads the clock while the program itself reads it in a loop: the program
# must end, and must have taken signals.  No server; no timing asserted (the
# only bound is the test's own timeout, against a deadlock).
use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Utils;
use Test::More;
use IdgenTest;

my $dir = PostgreSQL::Test::Utils::tempdir();
my $clock = "$dir/clock.rc";

write_files($dir, 'clockcheck.c' => <<'EOC');
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

static volatile sig_atomic_t signals;

static void
on_alarm(int sig)
{
	struct timespec ts;
	struct timeval tv;

	(void) sig;
	clock_gettime(CLOCK_REALTIME, &ts);
	gettimeofday(&tv, NULL);
	signals++;
}

int
main(int argc, char **argv)
{
	struct timespec rt, mono;
	struct timeval tv;

	if (argc > 1 && strcmp(argv[1], "loop") == 0)
	{
		struct sigaction sa;
		struct itimerval it = {{0, 50}, {0, 50}};
		long		i;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_alarm;
		sigaction(SIGALRM, &sa, NULL);
		setitimer(ITIMER_REAL, &it, NULL);
		for (i = 0; i < 300000; i++)
		{
			clock_gettime(CLOCK_REALTIME, &rt);
			gettimeofday(&tv, NULL);
		}
		it.it_value.tv_usec = it.it_interval.tv_usec = 0;
		setitimer(ITIMER_REAL, &it, NULL);
		printf("%d\n", (int) signals);
		return 0;
	}
	/* as the postmaster does, write over the environment strings */
	if (getenv("IDGEN_FAKECLOCK_FILE"))
		memset(getenv("IDGEN_FAKECLOCK_FILE"), 'x',
			   strlen(getenv("IDGEN_FAKECLOCK_FILE")));
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	gettimeofday(&tv, NULL);
	printf("%lld %lld %lld %lld\n", (long long) rt.tv_sec,
		   (long long) tv.tv_sec, (long long) time(NULL),
		   (long long) mono.tv_sec);
	return 0;
}
EOC
ok(eval { cc_build("$dir/clockcheck", "$dir/clockcheck.c", '-O2'); 1 },
	'the check program builds')
  or diag $@;

# Run the program with the fake clock at an offset; its output
sub run_check
{
	my ($offset, @args) = @_;
	my ($o, $e) = ('', '');

	write_files($dir, 'clock.rc' => "$offset\n");
	local %ENV = (%ENV, fakeclock_env($clock));
	# (a deadlock ends at the timeout: then no output, and the test fails)
	my $ok = eval {
		IPC::Run::run([ "$dir/clockcheck", @args ],
			'>', \$o, '2>', \$e,
			IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
	};
	diag $@ if $@;
	diag $e if $e ne '';
	return $ok ? $o : undef;
}

# The offsets the tests write: each wall clock reads the real time plus
# the offset (the real time as this script, not preloaded, reads it before
# and after), and the monotonic clock is the real one (never below an
# earlier run's).  The program reads them after writing over its
# environment strings, as the postmaster's process title does: a library
# that looked up the clock file's name there would read no offset at all.
my $prev_mono = 0;
for my $case ([ '+0', 0 ], [ '-0.005', 0 ], [ '-30', -30 ], [ '-10m', -600 ],
	[ '-1h', -3600 ], [ '+2', 2 ], [ 'not an offset', 0 ])
{
	my ($offset, $secs) = @$case;
	my $before = time;
	my $o = run_check($offset);
	my $after = time;
	my ($rt, $tv, $t, $mono) = split ' ', ($o // '');

	for my $read ([ 'clock_gettime(CLOCK_REALTIME)', $rt ],
		[ 'gettimeofday', $tv ], [ 'time', $t ])
	{
		my ($name, $v) = @$read;
		ok( defined $v
			  && $v >= $before + $secs - 1
			  && $v <= $after + $secs + 1,
			"offset '$offset': $name is the real time $secs s")
		  or diag "read " . ($v // 'nothing') . ", real time $before .. $after";
	}
	# (a moved monotonic clock would go back with the wall clock)
	ok(defined $mono && $mono >= $prev_mono,
		"offset '$offset': CLOCK_MONOTONIC is not moved")
	  or diag "monotonic " . ($mono // 'nothing') . ", before $prev_mono";
	$prev_mono = $mono // $prev_mono;
}

# A SIGALRM every 50 us reads the wall clock while the program reads it
my $o = run_check('-1h', 'loop');
ok(defined $o, 'clock reads in a SIGALRM handler and outside it: the program ended');
cmp_ok($o // 0, '>', 0, 'the program took SIGALRMs while it read the clock');

done_testing();
