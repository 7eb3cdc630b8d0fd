/*
 * tui-view-steps.c: view 3, live bytes at the end of each step as a bar
 * chart, with the growth from the step before; for all streams together
 * or for one stream (s cycles through them).  Bars are scaled to the
 * largest step shown; growth over the leak threshold is drawn as bad.
 *
 * The rows are step indexes into the leak report.
 */
#include "config.h"

#include "tui.h"

#include <inttypes.h>
#include <stdlib.h>

struct tui_view_steps {
	struct tui_list	 list;
	int		 stream;	/* -1: all, else an index in streams */
	int		 visible;
};

static const char *const tui_view_steps_help[] = {
	"Live bytes at the end of each step, and the growth from the step",
	"before, as a bar chart: a leak is a staircase.",
	"s / S       next / previous stream (all streams first)",
	NULL
};

static int
tui_view_steps_fetch(struct tui *t, void *arg, int64_t offset, void *rows,
    int max, char **cause)
{
	size_t	*out = rows, n = t->report != NULL ? t->report->nsteps : 0;
	int	 k = 0;

	(void)arg;
	(void)cause;
	while (k < max && (size_t)offset + (size_t)k < n) {
		out[k] = (size_t)offset + (size_t)k;
		k++;
	}
	return (k);
}

static void
tui_view_steps_reload(struct tui *t, void *state)
{
	struct tui_view_steps	*v = state;

	if (t->report == NULL || v->stream >= (int)t->report->nstreams)
		v->stream = -1;
	v->list.valid = 0;
	v->list.end = -1;
}

static void *
tui_view_steps_create(struct tui *t)
{
	struct tui_view_steps	*v;

	(void)t;
	v = xcalloc(1, sizeof *v);
	v->stream = -1;
	tui_list_init(&v->list, sizeof(size_t), tui_view_steps_fetch, v);
	return (v);
}

static void
tui_view_steps_destroy(void *state)
{
	struct tui_view_steps	*v = state;

	tui_list_free(&v->list);
	free(v);
}

static int
tui_view_steps_key(struct tui *t, void *state, int key)
{
	struct tui_view_steps	*v = state;
	int			 n;

	if ((key == 's' || key == 'S') && t->report != NULL) {
		n = (int)t->report->nstreams + 1;
		v->stream = (v->stream + 1 + (key == 's' ? 1 : n - 1)) % n - 1;
		return (1);
	}
	return (tui_list_key(t, &v->list, key, v->visible));
}

static int64_t
tui_view_steps_live(const struct leak_report *r, int stream, size_t i)
{
	if (stream < 0)
		return (r->steps[i].live_bytes);
	return (r->streams[stream].live_per_step[i]);
}

static void
tui_view_steps_draw(struct tui *t, void *state, struct tui_canvas *c,
    int y, int h)
{
	struct tui_view_steps	*v = state;
	const struct leak_report *r = t->report;
	const size_t		*i;
	char			 id[32], live[32], delta[32];
	int64_t			 max = 0, d;
	size_t			 k;
	int			 row, bar;

	if (r == NULL) {
		tui_canvas_put(c, y + 1, 1, -1, TUI_A_WARN, t->report_error !=
		    NULL ? t->report_error : "analysing…");
		return;
	}
	if (r->nsteps == 0) {
		tui_canvas_put(c, y + 1, 1, -1, TUI_A_NORMAL,
		    "no steps: the run has no step markers");
		return;
	}
	for (k = 0; k < r->nsteps; k++) {
		if (tui_view_steps_live(r, v->stream, k) > max)
			max = tui_view_steps_live(r, v->stream, k);
	}
	if (v->stream < 0)
		tui_canvas_printf(c, y, 1, -1, TUI_A_BOLD, "All streams, layer"
		    " %s: %s per step", tui_format_layer(r->layer),
		    fmt_delta(r->growth_bytes_per_step, delta,
		    sizeof delta));
	else
		tui_canvas_printf(c, y, 1, -1, TUI_A_BOLD, "Stream %s on "
		    "device %d, layer %s: %s per step%s",
		    fmt_stream(r->streams[v->stream].stream, id,
		    sizeof id), r->streams[v->stream].device,
		    tui_format_layer(r->layer), fmt_delta(
		    r->streams[v->stream].growth_bytes_per_step, delta,
		    sizeof delta), r->streams[v->stream].garbage ?
		    "  GARBAGE" : "");
	tui_canvas_printf(c, y + 1, 0, -1, TUI_A_HEADER, "%6s %10s %12s  %s",
	    "STEP", "LIVE", "GROWTH", "");
	tui_canvas_attr(c, y + 1, 0, c->w, TUI_A_HEADER);
	v->visible = h - 2;
	tui_list_scroll(&v->list, v->visible);
	bar = c->w - 32;
	for (row = 0; row < v->visible; row++) {
		if ((i = tui_list_row(t, &v->list, v->list.top + row)) == NULL)
			break;
		d = *i == 0 ? 0 : tui_view_steps_live(r, v->stream, *i) -
		    tui_view_steps_live(r, v->stream, *i - 1);
		tui_canvas_printf(c, y + 2 + row, 0, -1, TUI_A_NORMAL,
		    "%6" PRId64 " %10s ", r->steps[*i].step,
		    fmt_bytes(tui_view_steps_live(r, v->stream, *i),
		    live, sizeof live));
		tui_canvas_printf(c, y + 2 + row, 18, -1, d > (int64_t)
		    r->threshold ? TUI_A_BAD : TUI_A_NORMAL, "%12s",
		    *i == 0 ? "" : fmt_delta(d, delta, sizeof delta));
		tui_canvas_bar(c, y + 2 + row, 32, bar, max > 0 ?
		    (double)tui_view_steps_live(r, v->stream, *i) /
		    (double)max : 0, TUI_A_BAR);
		if (v->list.top + row == v->list.sel)
			tui_canvas_attr(c, y + 2 + row, 0, 31, TUI_A_SELECTED);
	}
}

const struct tui_view tui_view_steps = {
	"steps", "Steps", "s next stream|S previous", tui_view_steps_help,
	tui_view_steps_create, tui_view_steps_destroy, tui_view_steps_draw,
	tui_view_steps_key, tui_view_steps_reload
};
