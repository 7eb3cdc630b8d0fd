/*
 * tui-view-streams.c: view 2, a row per stream: device, stream (with its
 * cudaStream_t handle in a recording), live bytes and blocks at the end,
 * growth per step, the flag (GARBAGE and its kind), live bytes per step as
 * a sparkline, created and destroyed times.  Garbage streams come first,
 * then the largest.  Enter shows the stream's blocks in view 4.
 *
 * The rows are the leak report's streams, through an order array rebuilt
 * whenever a new report arrives.
 */
#include "config.h"

#include "tui.h"

#include <inttypes.h>
#include <stdlib.h>

struct tui_view_streams {
	struct tui_list	 list;
	size_t		*order;
	size_t		 n;
	int		 visible;
};

static const char *const tui_view_streams_help[] = {
	"A row per stream, garbage streams first.  GARBAGE destroyed: blocks",
	"live on a stream that was destroyed; GARBAGE growing: a side stream",
	"whose live bytes grow step after step; GARBAGE stranded: cached,",
	"unused segments on an idle stream.  The sparkline is live bytes per",
	"step (in a snapshot whose trace lost its first steps, from the first",
	"step it saw whole).",
	"Enter       show the stream's blocks (view 4)",
	NULL
};

static int
tui_view_streams_fetch(struct tui *t, void *arg, int64_t offset, void *rows,
    int max, char **cause)
{
	struct tui_view_streams	*v = arg;
	size_t			*out = rows;
	int			 n = 0;

	(void)t;
	(void)cause;
	while (n < max && (size_t)offset + (size_t)n < v->n) {
		out[n] = v->order[(size_t)offset + (size_t)n];
		n++;
	}
	return (n);
}

static const struct leak_stream *tui_view_streams_sort_base;

static int
tui_view_streams_cmp(const void *a, const void *b)
{
	const struct leak_stream *x = &tui_view_streams_sort_base[
	    *(const size_t *)a];
	const struct leak_stream *y = &tui_view_streams_sort_base[
	    *(const size_t *)b];

	if ((x->garbage != 0) != (y->garbage != 0))
		return (x->garbage != 0 ? -1 : 1);
	if (x->live_bytes != y->live_bytes)
		return (x->live_bytes > y->live_bytes ? -1 : 1);
	return (x->stream < y->stream ? -1 : x->stream > y->stream);
}

static void
tui_view_streams_reload(struct tui *t, void *state)
{
	struct tui_view_streams	*v = state;
	size_t			 i;

	free(v->order);
	v->order = NULL;
	v->n = t->report != NULL ? t->report->nstreams : 0;
	if (v->n > 0) {
		v->order = xcalloc(v->n, sizeof *v->order);
		for (i = 0; i < v->n; i++)
			v->order[i] = i;
		tui_view_streams_sort_base = t->report->streams;
		util_sort(v->order, v->n, sizeof *v->order, tui_view_streams_cmp);
	}
	v->list.valid = 0;
	v->list.end = -1;
	if (v->list.sel >= (int64_t)v->n)
		v->list.sel = v->n > 0 ? (int64_t)v->n - 1 : 0;
}

static void *
tui_view_streams_create(struct tui *t)
{
	struct tui_view_streams	*v;

	v = xcalloc(1, sizeof *v);
	tui_list_init(&v->list, sizeof(size_t), tui_view_streams_fetch, v);
	tui_view_streams_reload(t, v);
	return (v);
}

static void
tui_view_streams_destroy(void *state)
{
	struct tui_view_streams	*v = state;

	tui_list_free(&v->list);
	free(v->order);
	free(v);
}

static int
tui_view_streams_key(struct tui *t, void *state, int key)
{
	struct tui_view_streams	*v = state;
	const size_t		*i;

	if (key == TUI_KEY_ENTER && t->report != NULL &&
	    (i = tui_list_selected(t, &v->list)) != NULL) {
		t->show_stream = 1;
		t->show_stream_id = t->report->streams[*i].stream;
		t->view = 3;
		return (1);
	}
	return (tui_list_key(t, &v->list, key, v->visible));
}

/* Column layout: the fixed columns, then history, then the times. */
#define STREAMS_FIXED	76

static void
tui_view_streams_row(struct tui *t, const struct leak_stream *s,
    struct tui_canvas *c, int y, int spark, int64_t top, int times)
{
	char	id[48], live[32], rate[32], flag[32], a[32], b[32];
	size_t	first = leak_report_first_whole(t->report);
	int	x;

	if (s->garbage != LEAK_GARBAGE_NONE)
		snprintf(flag, sizeof flag, "GARBAGE %s",
		    leak_garbage_name(s->garbage));
	else
		snprintf(flag, sizeof flag, "%s", s->is_default ?
		    "default" : "");
	x = tui_canvas_printf(c, y, 0, -1, TUI_A_NORMAL, "%3d %-20s %10s %7"
	    PRId64 " %12s ", s->device, fmt_stream_handle(s->stream,
	    s->handle, id, sizeof id), fmt_bytes(s->live_bytes, live, sizeof live),
	    s->live_blocks, fmt_delta(s->growth_bytes_per_step,
	    rate, sizeof rate));
	tui_canvas_printf(c, y, x, 17, s->garbage != LEAK_GARBAGE_NONE ?
	    TUI_A_BAD : TUI_A_DIM, "%-17s", flag);
	x += 18;
	if (spark > 0)
		tui_canvas_spark(c, y, x, spark, s->live_per_step + first,
		    t->report->nsteps - first, top, TUI_A_BAR);
	x += spark + 1;
	if (times)
		tui_canvas_printf(c, y, x, -1, TUI_A_NORMAL, "%10s %10s",
		    fmt_offset(s->created_ns, t->run.start_ns, a,
		    sizeof a), fmt_offset(s->destroyed_ns,
		    t->run.start_ns, b, sizeof b));
}

static void
tui_view_streams_draw(struct tui *t, void *state, struct tui_canvas *c,
    int y, int h)
{
	struct tui_view_streams	*v = state;
	const size_t		*i;
	int64_t			 row, top = 0, one;
	size_t			 j, first;
	int			 spark, times, k;

	if (t->report == NULL) {
		tui_canvas_put(c, y + 1, 1, -1, TUI_A_WARN, t->report_error !=
		    NULL ? t->report_error : "analysing…");
		return;
	}
	if (v->n == 0) {
		tui_canvas_put(c, y + 1, 1, -1, TUI_A_NORMAL, "no streams");
		return;
	}
	/* The steps before a snapshot's trace began are not drawn. */
	first = leak_report_first_whole(t->report);
	times = c->w >= STREAMS_FIXED + 8 + 22;
	spark = c->w - STREAMS_FIXED - (times ? 22 : 0);
	if (spark > (int)(t->report->nsteps - first))
		spark = (int)(t->report->nsteps - first);
	if (spark < 0)
		spark = 0;
	/* One scale for every row, so that their heights compare. */
	for (j = 0; j < t->report->nstreams; j++) {
		one = tui_canvas_spark_top(t->report->streams[j].live_per_step +
		    first, t->report->nsteps - first, spark);
		top = one > top ? one : top;
	}
	k = tui_canvas_printf(c, y, 0, -1, TUI_A_HEADER, "%3s %-20s %10s %7s"
	    " %12s %-17s %-*s", "DEV", "STREAM", "LIVE", "BLOCKS",
	    "GROWTH/STEP", "FLAG", spark, spark >= 7 ? "HISTORY" : "");
	if (times)
		tui_canvas_printf(c, y, k, -1, TUI_A_HEADER, " %10s %10s",
		    "CREATED", "DESTROYED");
	tui_canvas_attr(c, y, 0, c->w, TUI_A_HEADER);
	v->visible = h - 1;
	tui_list_scroll(&v->list, v->visible);
	for (k = 0; k < v->visible; k++) {
		row = v->list.top + k;
		if ((i = tui_list_row(t, &v->list, row)) == NULL)
			break;
		tui_view_streams_row(t, &t->report->streams[*i], c, y + 1 + k,
		    spark, top, times);
		if (row == v->list.sel)
			tui_canvas_attr(c, y + 1 + k, 0, c->w, TUI_A_SELECTED);
	}
}

const struct tui_view tui_view_streams = {
	"streams", "Streams", "Enter blocks of stream", tui_view_streams_help,
	tui_view_streams_create, tui_view_streams_destroy,
	tui_view_streams_draw, tui_view_streams_key, tui_view_streams_reload
};
