/*
 * store-live.h: the writer's table of live allocations (store-live.c).
 */
#ifndef STORE_LIVE_H
#define STORE_LIVE_H

#include "vramtrace.h"

struct store_live_entry {
	struct store_allocation	a;
	int64_t			rowid;	/* 0: not inserted yet */
	int			used;
};

struct store_live {
	struct store_live_entry	*slots;
	size_t			 mask;	/* slots - 1; a power of two - 1 */
	size_t			 count;
};

void	 store_live_init(struct store_live *);
void	 store_live_free(struct store_live *);
struct store_live_entry *store_live_find(struct store_live *, uint64_t,
	     int32_t, int);
struct store_live_entry *store_live_add(struct store_live *,
	     const struct store_allocation *, int *);
void	 store_live_remove(struct store_live *, struct store_live_entry *);
int	 store_live_each(struct store_live *,
	     int (*)(struct store_live_entry *, void *), void *);

#endif
