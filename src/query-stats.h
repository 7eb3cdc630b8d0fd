/*
 * query-stats.h: the allocator's state at the end of a run, per device and
 * per stream, as PyTorch's memory_viz shows it: reserved and allocated
 * bytes, the free bytes inside the reserved segments, the largest free
 * block and the fragmentation, and the allocator's settings
 * (query-stats.c).
 *
 * Unknown is not zero: a count or size of -1 is unknown (a recording sees
 * no free blocks inside segments; a run with no segment layer has no
 * reserved bytes), a fragmentation of NAN is unknown.
 */
#ifndef QUERY_STATS_H
#define QUERY_STATS_H

#include <stddef.h>
#include <stdint.h>

struct query;

/* One device (stream UNKNOWN_U64 and all set) or one stream of it. */
struct stats_row {
	int32_t		 device;
	uint64_t	 stream;	/* UNKNOWN_U64: unknown, or all */
	int		 all;		/* the device's total */
	int64_t		 reserved;	/* bytes in segments */
	int64_t		 segments;
	int64_t		 allocated;	/* bytes in allocated blocks */
	int64_t		 blocks;
	int64_t		 requested;	/* what the program asked for */
	int64_t		 free;		/* bytes in free blocks of segments */
	int64_t		 free_blocks;
	int64_t		 largest_free;
	double		 fragmentation;	/* 1 - largest free / free */
};

struct stats_setting {
	char		*key;
	char		*value;		/* NULL: none */
};

struct stats {
	int64_t		 run_id;
	int		 snapshot;	/* from a snapshot; 0: from the
					   allocations live at the end */
	char		*allocator;	/* NULL: unknown */
	struct stats_row *rows;		/* by device (total first), stream */
	size_t		 nrows;
	struct stats_setting *settings;	/* by key */
	size_t		 nsettings;
};

/* query-stats.c */
int	 query_stats(struct query *, int64_t, struct stats **, char **);
void	 query_stats_free(struct stats *);

#endif
