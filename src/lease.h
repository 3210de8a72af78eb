/*
 * lease.h
 *		Node ids leased from a registry database (idgen.node_id = 'auto').
 *
 * The leased node id and the time its lease runs out live in one shared
 * 64-bit word, so a backend reads both, consistently, with one atomic read:
 * bits 63..44 hold node + 1 (0: no node id yet), bits 43..0 the end of the
 * lease in CLOCK_MONOTONIC milliseconds.  Only the worker writes the word
 * (lease.c); see there for the locking rules.
 */
#ifndef IDGEN_LEASE_H
#define IDGEN_LEASE_H

#include "port/atomics.h"

/* idgen_node_id when idgen.node_id = 'auto' */
#define IDGEN_NODE_AUTO (-2)

/* Layout of the lease word */
#define IDGEN_LEASE_MS_BITS 44
#define IDGEN_LEASE_MS_MASK ((UINT64CONST(1) << IDGEN_LEASE_MS_BITS) - 1)
#define IDGEN_LEASE_MAX_NODE ((1 << (64 - IDGEN_LEASE_MS_BITS)) - 2)

/* The shared lease word (lease.c) */
extern pg_atomic_uint64 *idgen_lease_word;

/* Settings (lease.c) */
extern char *idgen_node_registry;
extern char *idgen_node_namespace;
extern int	idgen_node_lease_ms;
extern int	idgen_node_guard_ms;

/* CLOCK_MONOTONIC in milliseconds, the same in every process */
extern int64 idgen_monotonic_ms(void);

/* Slow path of idgen_lease_node: wait for a first lease, or fail */
extern int	idgen_lease_node_slow(void);

/*
 * The node id to put in a snowflake ID made now, when idgen.node_id is
 * 'auto': one atomic read and a clock read while the lease is valid;
 * otherwise waits for the worker's first lease or raises an error.
 */
static inline int
idgen_lease_node(void)
{
	uint64		w = pg_atomic_read_u64(idgen_lease_word);

	if ((w >> IDGEN_LEASE_MS_BITS) != 0 &&
		(int64) (w & IDGEN_LEASE_MS_MASK) > idgen_monotonic_ms())
		return (int) (w >> IDGEN_LEASE_MS_BITS) - 1;
	return idgen_lease_node_slow();
}

/* Module load and shared memory (lease.c, called from idgen.c) */
extern void idgen_lease_define_gucs(void);
extern void idgen_lease_check_startup(void);
extern Size idgen_lease_shmem_size(void);
extern void idgen_lease_shmem_init(void);

/* Worker side: lease or renew when due; may lower *sleep_ms */
extern void idgen_lease_worker_step(long *sleep_ms);

#endif							/* IDGEN_LEASE_H */
