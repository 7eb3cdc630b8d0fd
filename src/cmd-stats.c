/*
 * cmd-stats.c: vramtrace stats DB|PICKLE: the allocator's state at the end
 * of a run, per device and per stream (reserved, allocated, the free bytes
 * inside the segments, the largest free block, fragmentation) and its
 * settings, as PyTorch's memory_viz shows them.
 */
#include "config.h"

#include "vramtrace.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>

#include "cmd.h"
#include "query.h"

static int	cmd_stats_exec(const struct cmd_entry *,
		    const struct cmd_args *);

enum { FORMAT_TEXT, FORMAT_JSON };
static const char *const formats[] = { "text", "json", NULL };

static const struct cmd_option cmd_stats_options[] = {
	CMD_OPTION_RUN("the run (the newest)"),
	CMD_OPTION_FORMAT(formats, "text (default) or json"),
	CMD_OPTION_END
};

const struct cmd_entry cmd_stats_entry = {
	.name = "stats",
	CMD_ARGS_DB,
	.options = cmd_stats_options,
	.summary = "show the allocator's state at the end of a run: reserved,"
	    " allocated, free, fragmentation, settings",
	.exec = cmd_stats_exec
};

static void
print_text(const struct stats *s)
{
	const struct stats_row	*w;
	char			 a[FMT_LEN], b[FMT_LEN], c[FMT_LEN];
	char			 d[FMT_LEN], e[FMT_LEN], f[FMT_LEN];
	char			 g[FMT_LEN], h[FMT_LEN], k[FMT_LEN];
	size_t			 i;

	printf("run %" PRId64 ", allocator %s, %s\n", s->run_id,
	    fmt_text(s->allocator), s->snapshot ? "the state the snapshot "
	    "holds" : "the allocations live at the end (a recording does not "
	    "see the free blocks in segments)");
	printf("\n%-6s %-16s %10s %8s %10s %8s %10s %7s %10s %6s\n",
	    "device", "stream", "reserved", "segments", "allocated", "blocks",
	    "free", "pieces", "largest", "frag");
	for (i = 0; i < s->nrows; i++) {
		w = &s->rows[i];
		printf("%-6d %-16s %10s %8s %10s %8s %10s %7s %10s %6s\n",
		    (int)w->device, w->all ? "all" : fmt_stream(w->stream, a,
		    sizeof a), fmt_size(w->reserved, b, sizeof b),
		    fmt_int(w->segments, c, sizeof c),
		    fmt_size(w->allocated, d, sizeof d),
		    fmt_int(w->blocks, e, sizeof e),
		    fmt_size(w->free, f, sizeof f),
		    fmt_int(w->free_blocks, g, sizeof g),
		    fmt_size(w->largest_free, h, sizeof h),
		    fmt_percent(w->fragmentation, k, sizeof k));
	}
	if (s->nsettings == 0)
		return;
	printf("\nallocator settings\n");
	for (i = 0; i < s->nsettings; i++)
		printf("  %-36s %s\n", fmt_safe(s->settings[i].key),
		    s->settings[i].value != NULL ?
		    fmt_safe(s->settings[i].value) : "");
}

static void
print_row_json(const struct stats_row *w)
{
	static const struct {
		const char	*key;
		size_t		 off;
	} counts[] = {
		{ "reserved_bytes", offsetof(struct stats_row, reserved) },
		{ "segments", offsetof(struct stats_row, segments) },
		{ "allocated_bytes", offsetof(struct stats_row, allocated) },
		{ "allocated_blocks", offsetof(struct stats_row, blocks) },
		{ "requested_bytes", offsetof(struct stats_row, requested) },
		{ "free_bytes", offsetof(struct stats_row, free) },
		{ "free_blocks", offsetof(struct stats_row, free_blocks) },
		{ "largest_free_bytes",
		  offsetof(struct stats_row, largest_free) },
	};
	int64_t	v;
	size_t	i;

	for (i = 0; i < sizeof counts / sizeof counts[0]; i++) {
		v = *(const int64_t *)(const void *)((const char *)w +
		    counts[i].off);
		printf("\"%s\": ", counts[i].key);
		json_int_or_null(stdout, v, v >= 0);
		printf(", ");
	}
	printf("\"fragmentation\": ");
	json_double(stdout, w->fragmentation, 4);
}

static void
print_json(const struct stats *s)
{
	const struct stats_row	*w;
	size_t			 i, n = 0;

	printf("{\"run_id\": %" PRId64 ", \"source\": \"%s\", \"allocator\": ",
	    s->run_id, s->snapshot ? "snapshot" : "allocations");
	json_string(stdout, s->allocator);
	printf(",\n \"devices\": [");
	for (i = 0; i < s->nrows; i++) {
		w = &s->rows[i];
		if (w->all) {
			printf("%s\n  {\"device\": %d, ", n++ > 0 ? "]}," : "",
			    (int)w->device);
			print_row_json(w);
			printf(", \"streams\": [");
			continue;
		}
		printf("%s\n   {\"stream\": ", s->rows[i - 1].all ? "" : ",");
		json_stream(stdout, w->stream);
		printf(", ");
		print_row_json(w);
		printf("}");
	}
	printf("%s],\n \"settings\": {", n > 0 ? "]}" : "");
	for (i = 0; i < s->nsettings; i++) {
		printf("%s", i > 0 ? ", " : "");
		json_string(stdout, s->settings[i].key);
		printf(": ");
		json_string(stdout, s->settings[i].value);
	}
	printf("}}\n");
}

static int
cmd_stats_exec(const struct cmd_entry *self, const struct cmd_args *args)
{
	struct stats	*s;
	struct query	*q;
	char		*cause = NULL;
	int		 rc;

	(void)self;
	if ((q = input_open(args->argv[0], &cause)) == NULL)
		return (cmd_fail(EXIT_INPUT, cause));
	rc = query_stats(q, (int64_t)cmd_args_number(args, 'r', 0), &s,
	    &cause);
	query_close(q);
	if (rc != 0)
		return (cmd_fail(EXIT_INPUT, cause));
	if (cmd_args_number(args, 'f', FORMAT_TEXT) == FORMAT_JSON)
		print_json(s);
	else
		print_text(s);
	query_stats_free(s);
	return (EXIT_OK);
}
