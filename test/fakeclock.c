/*
 * fakeclock.c
 *		A wall clock that the TAP tests move while servers run (LD_PRELOAD).
 *
 * The file named by IDGEN_FAKECLOCK_FILE holds an offset from the real time:
 * "+0", "-0.005", "-2", "-1h", "-10m" (seconds unless followed by s, m, h or
 * d).  Every call of clock_gettime(CLOCK_REALTIME[_COARSE]), gettimeofday()
 * and time() reads the file again, so a test moves the clock of every
 * process of a running server by replacing the file.  Other clocks (the
 * monotonic ones, which PostgreSQL's timeouts and latches use) are left
 * alone.
 *
 * With IDGEN_FAKECLOCK_ONLY set to a program's name ("postgres"), only
 * processes of that program take the fake clock; others (a cluster manager
 * that starts the server, which passes the environment on) keep the real
 * one.
 *
 * Why not libfaketime: PostgreSQL reads the wall clock inside its SIGALRM
 * handler (handle_sig_alarm() calls GetCurrentTimestamp() when a timeout
 * fires), and libfaketime reads its file with fopen(), which allocates and
 * locks.  A timeout that fires while the backend is itself inside
 * libfaketime's fopen() deadlocks or corrupts the heap: CI saw a backend of
 * t/066 abort with "corrupted double-linked list".  This file uses only
 * async-signal-safe calls: open(), read(), close() and the real
 * clock_gettime(), a buffer on the stack, and errno kept as the caller left
 * it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

typedef int (*clock_gettime_fn) (clockid_t, struct timespec *);

/* The C library's clock_gettime (vDSO), found before main() runs */
static clock_gettime_fn real_clock_gettime;

/*
 * The clock file's name, copied from the environment before main() runs
 * (the postmaster then writes its process title over the original
 * environment strings)
 */
static char clock_file[4096];

__attribute__((constructor))
static void
fakeclock_init(void)
{
	const char *file = getenv("IDGEN_FAKECLOCK_FILE");
	const char *only = getenv("IDGEN_FAKECLOCK_ONLY");

	real_clock_gettime = (clock_gettime_fn) dlsym(RTLD_NEXT, "clock_gettime");
	if (only && strcmp(only, program_invocation_short_name) != 0)
		return;
	if (file && strlen(file) < sizeof(clock_file))
		strcpy(clock_file, file);
}

static int
read_real(clockid_t clk, struct timespec *ts)
{
	if (real_clock_gettime)
		return real_clock_gettime(clk, ts);
	return (int) syscall(SYS_clock_gettime, clk, ts);
}

/*
 * The offset in nanoseconds: [+-]digits[.digits][s|m|h|d], blanks around.
 * 0 when there is no file or it does not parse (a test always writes one
 * that does, replacing it atomically).
 */
static int64_t
read_offset_ns(void)
{
	char		buf[64];
	ssize_t		len;
	int			fd;
	const char *p;
	int			neg = 0;
	int64_t		whole = 0;
	int64_t		frac = 0;
	int64_t		frac_scale = 1000000000;
	int64_t		unit = 1;

	if (clock_file[0] == '\0')
		return 0;
	fd = open(clock_file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return 0;
	buf[len] = '\0';

	p = buf;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '+' || *p == '-')
		neg = (*p++ == '-');
	if (*p < '0' || *p > '9')
		return 0;
	while (*p >= '0' && *p <= '9' && whole < INT64_C(100000000000))
		whole = whole * 10 + (*p++ - '0');
	if (*p == '.')
	{
		p++;
		while (*p >= '0' && *p <= '9')
		{
			if (frac_scale > 1)
			{
				frac_scale /= 10;
				frac += (*p - '0') * frac_scale;
			}
			p++;
		}
	}
	switch (*p)
	{
		case 's':
			p++;
			break;
		case 'm':
			unit = 60;
			p++;
			break;
		case 'h':
			unit = 3600;
			p++;
			break;
		case 'd':
			unit = 86400;
			p++;
			break;
		default:
			break;
	}
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	if (*p != '\0')
		return 0;
	whole = (whole * INT64_C(1000000000) + frac) * unit;
	return neg ? -whole : whole;
}

/* The real wall clock moved by the file's offset */
static int
fake_realtime(clockid_t clk, struct timespec *ts)
{
	int			save_errno = errno;
	int64_t		off;
	int64_t		ns;

	if (read_real(clk, ts) != 0)
		return -1;
	off = read_offset_ns();
	ns = (int64_t) ts->tv_sec * INT64_C(1000000000) + ts->tv_nsec + off;
	ts->tv_sec = (time_t) (ns / INT64_C(1000000000));
	ts->tv_nsec = (long) (ns % INT64_C(1000000000));
	if (ts->tv_nsec < 0)
	{
		ts->tv_nsec += 1000000000;
		ts->tv_sec -= 1;
	}
	errno = save_errno;
	return 0;
}

int
clock_gettime(clockid_t clk, struct timespec *ts)
{
	if (clk == CLOCK_REALTIME || clk == CLOCK_REALTIME_COARSE)
		return fake_realtime(clk, ts);
	return read_real(clk, ts);
}

int
gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
	struct timespec ts;

	(void) tz;
	if (fake_realtime(CLOCK_REALTIME, &ts) != 0)
		return -1;
	tv->tv_sec = ts.tv_sec;
	tv->tv_usec = ts.tv_nsec / 1000;
	return 0;
}

time_t
time(time_t *t)
{
	struct timespec ts;

	if (fake_realtime(CLOCK_REALTIME, &ts) != 0)
		return (time_t) -1;
	if (t)
		*t = ts.tv_sec;
	return ts.tv_sec;
}
