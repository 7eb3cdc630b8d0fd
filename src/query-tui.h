/*
 * query-tui.h: the questions that only the terminal UI asks, answered by
 * query-tui.c: what a run is (the overview's header), the offload engine's
 * decisions per step, a cheap fingerprint for following a database that is
 * still being written, and the blocks that differ between two steps.
 *
 * Like analysis.h: unknown is not zero.  Times of 0 are unknown; an empty
 * string is unknown.
 */
#ifndef QUERY_TUI_H
#define QUERY_TUI_H

#include <stddef.h>
#include <stdint.h>

struct query;

/* What a run is: the overview's header.  Cheap: no allocation is read. */
struct tui_run {
	int64_t		 run_id;
	int64_t		 runs;		/* in the database */
	char		 source[16];	/* record, import, replay, attach */
	char		 input[256];
	char		 command[256];
	char		 host[64];
	char		 step_source[32];
	char		 devices[160];	/* "0 NVIDIA H200 (139.8 GiB), 1 ..." */
	uint64_t	 start_ns;
	uint64_t	 end_ns;
	int		 complete;
	int64_t		 processes;
	int64_t		 ndevices;
	int64_t		 streams;
	int64_t		 steps;
	int64_t		 offload_events;
	int64_t		 dropped_records;
};

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

/* A fingerprint of what a run holds; it changes when rows arrive. */
struct tui_poll {
	int64_t		 run_id;
	int64_t		 max_step;
	int64_t		 max_allocation;
	int64_t		 max_offload;
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
int	 query_tui_run(struct query *, int64_t, struct tui_run *, char **);
int	 query_tui_offload(struct query *, int64_t,
	     struct tui_offload_step **, size_t *, char **);
int	 query_tui_poll(struct query *, int64_t, struct tui_poll *);
int	 query_tui_diff_summary(struct query *, int64_t, int64_t, int64_t,
	     int, struct tui_diff_summary *, char **);
int	 query_tui_diff(struct query *, int64_t, int64_t, int64_t, int,
	     int64_t, struct tui_diff_row *, int, char **);

#endif
