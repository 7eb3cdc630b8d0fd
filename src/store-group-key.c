/*
 * store-group-key.c: the key of an allocation group (process, layer,
 * device, stream, alloc step, free step, site), for the tables that sum
 * rows by it: the groups (store-groups.c, store-regroup.c) and the step
 * sums (store-alloc-steps.c, whose key is a group's with the step as its
 * alloc step).
 */
#include "config.h"

#include "store-int.h"

/* The hash of group g's key (its bytes and blocks aside). */
uint64_t
store_group_key_hash(const struct store_group *g)
{
	uint64_t	h = 0x9e3779b97f4a7c15ULL;

	h = (h ^ (uint64_t)g->process_id) * 0x100000001b3ULL;
	h = (h ^ (uint64_t)g->layer) * 0x100000001b3ULL;
	h = (h ^ (uint64_t)(uint32_t)g->device) * 0x100000001b3ULL;
	h = (h ^ g->stream) * 0x100000001b3ULL;
	h = (h ^ (uint64_t)g->alloc_step) * 0x100000001b3ULL;
	h = (h ^ (uint64_t)g->free_step) * 0x100000001b3ULL;
	h = (h ^ (uint64_t)g->site_id) * 0x100000001b3ULL;
	return (h ^ (h >> 29));
}

/*
 * Bind the five parameters of st after the first `skip`, as the rows of
 * allocation_groups and allocation_steps begin: the run, and g's process,
 * layer, device and stream.
 */
void
store_group_key_bind(struct store *s, sqlite3_stmt *st, int skip,
    const struct store_group *g)
{
	sqlite3_bind_int64(st, skip + 1, s->run_id);
	store_sql_bind_id(st, skip + 2, g->process_id);
	sqlite3_bind_int(st, skip + 3, g->layer);
	sqlite3_bind_int(st, skip + 4, g->device);
	store_sql_bind_opt(st, skip + 5, g->stream);
}
