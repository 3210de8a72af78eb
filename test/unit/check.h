/*
 * check.h
 *		What the plain C unit tests share: their counters, the CHECK macros
 *		(a failed check prints its file, line and values to stderr; a run
 *		goes on after it), a deterministic random number generator and the
 *		final "N passed, N failed" line.  Each test program is one
 *		translation unit that includes this once; it defines CHECK_RNG_SEED
 *		before the include.
 */
#ifndef IDGEN_UNIT_CHECK_H
#define IDGEN_UNIT_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int	passed = 0;
static int	failed = 0;

#define CHECK(cond) \
	do { \
		if (cond) \
			passed++; \
		else \
		{ \
			failed++; \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
		} \
	} while (0)

#define CHECK_I64(got, want) \
	do { \
		int64_t		g_ = (int64_t) (got), \
					w_ = (int64_t) (want); \
		if (g_ == w_) \
			passed++; \
		else \
		{ \
			failed++; \
			fprintf(stderr, "%s:%d: %s is %" PRId64 ", expected %" PRId64 "\n", \
					__FILE__, __LINE__, #got, g_, w_); \
		} \
	} while (0)

#define CHECK_STR(got, want) \
	do { \
		const char *g_ = (got), \
				   *w_ = (want); \
		if (strcmp(g_, w_) == 0) \
			passed++; \
		else \
		{ \
			failed++; \
			fprintf(stderr, "%s:%d: %s is \"%s\", expected \"%s\"\n", \
					__FILE__, __LINE__, #got, g_, w_); \
		} \
	} while (0)

/* Deterministic pseudo-random numbers (splitmix64), from CHECK_RNG_SEED */
static uint64_t rng_state = CHECK_RNG_SEED;

static inline uint64_t
rng(void)
{
	uint64_t	z = (rng_state += 0x9E3779B97F4A7C15u);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
	return z ^ (z >> 31);
}

/* The final line; the program's exit status */
static inline int
check_report(void)
{
	printf("%d passed, %d failed\n", passed, failed);
	return failed == 0 ? 0 : 1;
}

#endif							/* IDGEN_UNIT_CHECK_H */
