/*
 * citus.h
 *		idgen inside a Citus cluster: node ids from Citus's group ids
 *		(idgen.node_id = 'citus') and the coordinator as every worker's
 *		central segment server.
 *
 * The idgen worker reads pg_dist_local_group and pg_dist_node once a round
 * and publishes what it found in shared memory (citus.c); backends read it.
 * The worker's step, idgen_citus_step, is declared in worker.h.
 */
#ifndef IDGEN_CITUS_H
#define IDGEN_CITUS_H

/* Was Citus loaded before idgen (shared_preload_libraries = 'citus,idgen')? */
extern bool idgen_citus_preloaded;

/* Module load (from _PG_init, after Citus's own) and shared memory */
extern void idgen_citus_init(void);
extern Size idgen_citus_shmem_size(void);
extern void idgen_citus_shmem_init(void);

/*
 * Backend: the node id to put in a snowflake ID made now when
 * idgen.node_id is 'citus' (this node's Citus group id); raises an error
 * while the node has none.
 */
extern int	idgen_citus_node(void);

/* This node's published group id, or -1 (status functions) */
extern int	idgen_citus_current_node(void);

/*
 * Connection string of the coordinator when this server is a Citus worker
 * (the central segment server of its segments), or NULL.
 */
extern const char *idgen_citus_segment_server(void);

/*
 * Error if this server is a Citus worker whose segments the coordinator
 * allocates: tags are administered on the coordinator
 */
extern void idgen_citus_check_tag_admin(const char *what);

#endif							/* IDGEN_CITUS_H */
