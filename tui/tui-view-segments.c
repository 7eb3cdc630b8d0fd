/*
 * tui-view-segments.c: view 7, the allocator's segments at the end of the
 * run, as memory_viz's segment view shows them: per device, stream and
 * address, each segment's size, the bytes and blocks allocated in it, the
 * free bytes, the largest free block, and whether its stream is garbage
 * (the leak analysis' kind).  On top, each device's totals as `vramtrace
 * stats` gives them.  A snapshot's segments are known exactly; a
 * recording's are its driver allocations live at the end, with the
 * blocks inside each, and what is free inside them is unknown.  The rows
 * come from query_stats_segments a page at a time; the totals are read
 * once per data change.
 */
#include "config.h"

#include "tui.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct tui_view_segments {
	struct tui_list	 list;
	struct stats	*stats;
	int		 visible;
};

/* Below this width the garbage kind is a '*' in one column. */
#define SEGMENTS_WIDE	100

static const char *const tui_view_segments_help[] = {
	"The allocator's segments at the end of the run, by device, stream",
	"and address: SIZE reserved, ALLOCATED bytes and BLKS blocks in use,",
	"FREE bytes in free blocks and the LARGEST of them; the garbage kind",
	"of the segment's stream (* on a narrow terminal; see Streams).",
	"On top, each device's totals, as vramtrace stats gives them.",
	"A snapshot's segments are exact; a recording's are the driver",
	"allocations live at the end, and what is free inside is not recorded.",
	NULL
};

static int
tui_view_segments_fetch(struct tui *t, void *arg, int64_t offset, void *rows,
    int max, char **cause)
{
	(void)arg;
	return (query_stats_segments(t->q, t->run.id, offset, rows, max,
	    cause));
}

static void
tui_view_segments_reload(struct tui *t, void *state)
{
	struct tui_view_segments	*v = state;
	char				*cause = NULL;

	query_stats_free(v->stats);
	v->stats = NULL;
	if (query_stats(t->q, t->run.id, &v->stats, &cause) != 0)
		tui_frame_fail(t, cause);
	v->list.valid = 0;
	v->list.end = -1;
}

static void *
tui_view_segments_create(struct tui *t)
{
	struct tui_view_segments	*v;

	v = xcalloc(1, sizeof *v);
	tui_list_init(&v->list, sizeof(struct stats_segment),
	    tui_view_segments_fetch, v);
	tui_view_segments_reload(t, v);
	return (v);
}

static void
tui_view_segments_destroy(void *state)
{
	struct tui_view_segments	*v = state;

	tui_list_free(&v->list);
	query_stats_free(v->stats);
	free(v);
}

static int
tui_view_segments_key(struct tui *t, void *state, int key)
{
	struct tui_view_segments	*v = state;

	return (tui_list_key(t, &v->list, key, v->visible));
}

/* The garbage kind of the stream of g, from the leak analysis. */
static enum leak_garbage
tui_view_segments_garbage(struct tui *t, const struct stats_segment *g)
{
	const struct leak_stream	*s;
	size_t				 i;

	if (t->report == NULL)
		return (LEAK_GARBAGE_NONE);
	for (i = 0; i < t->report->nstreams; i++) {
		s = &t->report->streams[i];
		if (s->device == g->device && s->stream == g->stream)
			return (s->garbage);
	}
	return (LEAK_GARBAGE_NONE);
}

/*
 * One segment on row y, its stream sw columns wide.  The garbage kind in
 * words where the canvas is wide, else a '*' after the row, or in the last
 * column when a long stream pushed the row past it: never cut off.
 */
static void
tui_view_segments_row(struct tui *t, const struct stats_segment *g,
    struct tui_canvas *c, int y, int sw, int wide)
{
	enum leak_garbage	 kind;
	char			 st[FMT_LEN], a[FMT_LEN], b[FMT_LEN];
	char			 d[FMT_LEN], e[FMT_LEN], f[FMT_LEN];
	int			 x;

	x = tui_canvas_printf(c, y, 0, -1, TUI_A_NORMAL, "%2d %-*s %#14"
	    PRIx64 " %10s %10s %10s %5s %10s ", (int)g->device, sw,
	    fmt_stream(g->stream, st, sizeof st), g->address,
	    fmt_bytes(g->size, a, sizeof a), fmt_size(g->allocated, b,
	    sizeof b), fmt_size(g->free, d, sizeof d), fmt_int(g->blocks, e,
	    sizeof e), fmt_size(g->largest_free, f, sizeof f));
	if ((kind = tui_view_segments_garbage(t, g)) == LEAK_GARBAGE_NONE)
		return;
	if (wide)
		tui_canvas_printf(c, y, x, -1, TUI_A_BAD, "GARBAGE %s",
		    leak_garbage_name(kind));
	else
		tui_canvas_put(c, y, x < c->w ? x : c->w - 1, -1, TUI_A_BAD,
		    "*");
}

/* Each device's totals from row y; returns the row after them. */
static int
tui_view_segments_totals(const struct stats *s, struct tui_canvas *c, int y)
{
	const struct stats_row	*w;
	char			 a[FMT_LEN], b[FMT_LEN], d[FMT_LEN];
	char			 e[FMT_LEN];
	size_t			 i;

	tui_canvas_put(c, y++, 1, -1, TUI_A_DIM, s->snapshot ?
	    "the snapshot's segments and blocks" : "the driver allocations"
	    " live at the end; free blocks inside are not recorded");
	for (i = 0; i < s->nrows; i++) {
		w = &s->rows[i];
		if (!w->all)
			continue;
		tui_canvas_printf(c, y++, 1, -1, TUI_A_BOLD, "device %d: %s"
		    " segments, %s reserved, %s allocated", (int)w->device,
		    fmt_int(w->segments, a, sizeof a), fmt_size(w->reserved,
		    b, sizeof b), fmt_size(w->allocated, d, sizeof d));
		if (w->free < 0)
			continue;
		tui_canvas_printf(c, y++, 3, -1, TUI_A_NORMAL, "%s free in %s"
		    " blocks, the largest %s, fragmentation %s",
		    fmt_size(w->free, a, sizeof a), fmt_int(w->free_blocks, b,
		    sizeof b), fmt_size(w->largest_free, d, sizeof d),
		    fmt_percent(w->fragmentation, e, sizeof e));
	}
	return (y);
}

static void
tui_view_segments_draw(struct tui *t, void *state, struct tui_canvas *c,
    int y, int h)
{
	struct tui_view_segments	*v = state;
	const struct stats_segment	*g;
	char				 st[FMT_LEN];
	int				 k, top = y, wide = c->w >= SEGMENTS_WIDE;
	int				 sw = 10;

	if (v->stats == NULL)
		return;
	y = tui_view_segments_totals(v->stats, c, y);
	if (tui_list_row(t, &v->list, 0) == NULL) {
		tui_canvas_put(c, y + 1, 1, -1, TUI_A_NORMAL, "no segments:"
		    " the run holds no snapshot segments and no live driver"
		    " allocations (layer segment)");
		return;
	}
	v->visible = h - (y - top) - 1;
	tui_list_scroll(&v->list, v->visible);
	/* The stream column as wide as the longest stream shown. */
	for (k = 0; k < v->visible; k++) {
		if ((g = tui_list_row(t, &v->list, v->list.top + k)) == NULL)
			break;
		if ((int)strlen(fmt_stream(g->stream, st, sizeof st)) > sw)
			sw = (int)strlen(st);
	}
	tui_canvas_printf(c, y, 0, -1, TUI_A_HEADER, "%2s %-*s %14s %10s %10s"
	    " %10s %5s %10s %s", "D", sw, "STREAM", "ADDRESS", "SIZE",
	    "ALLOCATED", "FREE", "BLKS", "LARGEST", wide ? "GARBAGE" : "G");
	tui_canvas_attr(c, y, 0, c->w, TUI_A_HEADER);
	for (k = 0; k < v->visible; k++) {
		if ((g = tui_list_row(t, &v->list, v->list.top + k)) == NULL)
			break;
		tui_view_segments_row(t, g, c, y + 1 + k, sw, wide);
		if (v->list.top + k == v->list.sel)
			tui_canvas_attr(c, y + 1 + k, 0, c->w, TUI_A_SELECTED);
	}
}

const struct tui_view tui_view_segments = {
	"segments", "Segments", "", tui_view_segments_help,
	tui_view_segments_create, tui_view_segments_destroy,
	tui_view_segments_draw, tui_view_segments_key,
	tui_view_segments_reload
};
