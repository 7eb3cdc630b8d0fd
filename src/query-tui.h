/*
 * query-tui.h: the questions that only the terminal UI asks, answered by
 * query-tui.c: the offload engine's decisions per step, and the blocks that
 * differ between two steps.
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

/* One block that is live at one step of a diff and not at the other. */
struct tui_diff_row {
	int64_t		 id;
	int		 added;		/* 1: live at B only; 0: at A only */
	int32_t		 device;
	uint64_t	 stream;	/* EVENT_NONE: unknown */
	int		 layer;
	int64_t		 bytes;
	int64_t		 alloc_step;	/* 0: unknown */
	int64_t		 free_step;	/* 0: not freed */
	int64_t		 site_id;
	char		 site[160];
};

struct tui_diff_summary {
	int64_t		 added_blocks;
	int64_t		 added_bytes;
	int64_t		 removed_blocks;
	int64_t		 removed_bytes;
};

/* query-tui.c */
int	 query_tui_offload(struct query *, int64_t,
	     struct tui_offload_step **, size_t *, char **);
int	 query_tui_diff_summary(struct query *, int64_t, int64_t, int64_t,
	     int, struct tui_diff_summary *, char **);
int	 query_tui_diff(struct query *, int64_t, int64_t, int64_t, int,
	     int64_t, struct tui_diff_row *, int, char **);

#endif
