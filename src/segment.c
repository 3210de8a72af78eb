/*
 * segment.c
 *		Leaf-style segment IDs: placeholder until the segment cache lands.
 */
#include "postgres.h"

#include "idgen.h"

/* Shared memory needed */
Size
idgen_segment_shmem_size(void)
{
	return 0;
}

/* Create or attach shared state */
void
idgen_segment_shmem_init(void)
{
}

/* Define the segment settings */
void
idgen_segment_define_gucs(void)
{
}

/* One round of the worker's segment work */
void
idgen_segment_worker_step(long *sleep_ms)
{
}
