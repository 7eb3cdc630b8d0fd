/*
 * query-tui.h: the questions that only the terminal UI asks, answered by
 * query-tui.c: the offload engine's decisions per step.
 *
 * Like analysis.h: unknown is not zero; an empty string is unknown.
 */
#ifndef QUERY_TUI_H
#define QUERY_TUI_H

#include <stddef.h>
#include <stdint.h>

struct query;

/* The offload engine's decisions in one step. */
struct tui_offload_step {
	int64_t		 step;
	int64_t		 packs;
	int64_t		 offloads;
	int64_t		 offload_bytes;
	int64_t		 stashes;
	int64_t		 stash_bytes;
	int64_t		 reaps;
	int64_t		 unpacks;
	int64_t		 prefetches;
	int64_t		 dedupe_hits;
	int64_t		 dedupe_releases;
	int64_t		 fallbacks;
	int64_t		 fallback_bytes;
	int64_t		 exit_syncs;
};

/* query-tui.c */
int	 query_tui_offload(struct query *, int64_t,
	     struct tui_offload_step **, size_t *, char **);

#endif
