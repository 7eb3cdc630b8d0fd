/*
 * tui-view-diff.c: view 6, the blocks live at the end of one step and
 * not of another: "+" blocks appeared between step A and step B, "-"
 * blocks went away; the largest first, paged from the database.  A and B
 * start at the last two steps (what the last step left behind, and a
 * narrow range of the allocations index); a/A and b/B move them, p types
 * them.  The layer is the one the run is analysed in, as in the leak
 * report, so that segments and the blocks inside them are not counted
 * twice.
 *
 * The numbers are those of vramtrace diff: query_diff() gives the
 * totals, and with v the sums per allocation site and stream;
 * query_diff_blocks() pages through the same blocks.
 */
#include "config.h"

#include "tui.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct tui_view_diff {
	struct tui_list		 list;		/* blocks */
	struct tui_list		 sites;		/* diff_group rows of report */
	struct diff_report	*report;	/* NULL: the diff failed */
	int			 by_site;	/* show the groups */
	int			 groups;	/* report has its groups */
	int64_t			 a;
	int64_t			 b;
	int			 visible;
};

static const char *const tui_view_diff_help[] = {
	"The blocks live at the end of step A and not of step B (-) or the",
	"other way round (+), largest first: what a step left behind.",
	"a / A       step A one earlier / later",
	"b / B       step B one earlier / later",
	"p           type both steps: \"A B\"",
	"v           group by allocation site and stream, or list blocks",
	NULL
};

static int
tui_view_diff_fetch(struct tui *t, void *arg, int64_t offset, void *rows,
    int max, char **cause)
{
	struct tui_view_diff	*v = arg;

	return (query_diff_blocks(t->q, t->run.id, v->a, v->b,
	    v->report != NULL ? v->report->layer : -1, offset, rows, max,
	    cause));
}

static int
tui_view_diff_fetch_site(struct tui *t, void *arg, int64_t offset,
    void *rows, int max, char **cause)
{
	struct tui_view_diff	*v = arg;
	struct diff_group	*out = rows;
	int			 k = 0;

	(void)t;
	(void)cause;
	while (v->report != NULL && k < max &&
	    (size_t)offset + (size_t)k < v->report->ngroups) {
		out[k] = v->report->groups[(size_t)offset + (size_t)k];
		k++;
	}
	return (k);
}

/* Read the diff of steps A and B, with its groups when they are shown. */
static void
tui_view_diff_read(struct tui *t, struct tui_view_diff *v)
{
	struct diff_point	 a, b;
	char			*cause = NULL;

	query_diff_free(v->report);
	v->report = NULL;
	tui_list_reset(&v->sites);
	a.run_id = b.run_id = t->run.id;
	a.step = v->a;
	b.step = v->b;
	v->groups = v->by_site;
	if (query_diff(t->q, &a, t->q, &b, -1, v->by_site ?
	    QUERY_DIFF_GROUPS : 0, &v->report, &cause) != 0) {
		tui_frame_fail(t, cause);
	}
}

/* Steps A or B or the data changed: read it all again. */
static void
tui_view_diff_reset(struct tui *t, struct tui_view_diff *v)
{
	tui_list_reset(&v->list);
	tui_view_diff_read(t, v);
}

static void
tui_view_diff_reload(struct tui *t, void *state)
{
	struct tui_view_diff	*v = state;

	if (v->b == 0 || v->b > t->run.counts.steps) {
		v->b = t->run.counts.steps;
		v->a = v->b > 1 ? v->b - 1 : 1;
	}
	tui_view_diff_reset(t, v);
}

static void *
tui_view_diff_create(struct tui *t)
{
	struct tui_view_diff	*v;

	v = xcalloc(1, sizeof *v);
	tui_list_init(&v->list, sizeof(struct diff_block),
	    tui_view_diff_fetch, v);
	tui_list_init(&v->sites, sizeof(struct diff_group),
	    tui_view_diff_fetch_site, v);
	tui_view_diff_reload(t, v);
	return (v);
}

static void
tui_view_diff_destroy(void *state)
{
	struct tui_view_diff	*v = state;

	tui_list_free(&v->list);
	tui_list_free(&v->sites);
	query_diff_free(v->report);
	free(v);
}

static void
tui_view_diff_steps(struct tui *t, void *arg, const char *text)
{
	struct tui_view_diff	*v = arg;
	long long		 a, b;

	if (sscanf(text, "%lld %lld", &a, &b) != 2 || a < 1 || b < 1 ||
	    a > t->run.counts.steps || b > t->run.counts.steps) {
		snprintf(t->message, sizeof t->message, "steps: want two "
		    "steps from 1 to %lld, not \"%s\"",
		    (long long)t->run.counts.steps, text);
		return;
	}
	v->a = a;
	v->b = b;
	tui_view_diff_reset(t, v);
}

static int
tui_view_diff_key(struct tui *t, void *state, int key)
{
	struct tui_view_diff	*v = state;
	char			 now[64];
	int64_t			*step;

	switch (key) {
	case 'a':
	case 'A':
	case 'b':
	case 'B':
		step = key == 'a' || key == 'A' ? &v->a : &v->b;
		if (key == 'a' || key == 'b')
			*step = *step > 1 ? *step - 1 : 1;
		else if (*step < t->run.counts.steps)
			(*step)++;
		tui_view_diff_reset(t, v);
		return (1);
	case 'p':
		snprintf(now, sizeof now, "%lld %lld", (long long)v->a,
		    (long long)v->b);
		tui_frame_prompt(t, "steps A B:", tui_view_diff_steps, v, now);
		return (1);
	case 'v':
		/* The groups are read when first wanted, then kept. */
		v->by_site = !v->by_site;
		if (v->by_site && !v->groups)
			tui_view_diff_read(t, v);
		return (1);
	}
	return (tui_list_key(t, v->by_site ? &v->sites : &v->list, key,
	    v->visible));
}

static void
tui_view_diff_row(const struct diff_block *d, struct tui_canvas *c, int y)
{
	char	size[32], id[32], made[FMT_LEN], freed[FMT_LEN];

	if (d->free_step >= 0)
		snprintf(freed, sizeof freed, "%" PRId64, d->free_step);
	else
		snprintf(freed, sizeof freed, "live");
	tui_canvas_put(c, y, 0, 1, d->is_new ? TUI_A_BAD : TUI_A_GOOD,
	    d->is_new ? "+" : "-");
	tui_canvas_printf(c, y, 2, -1, TUI_A_NORMAL, "%10s %5s %5s"
	    " %-14s %3d %-7s %s", fmt_bytes(d->bytes, size,
	    sizeof size), fmt_int(d->alloc_step, made, sizeof made), freed,
	    fmt_stream(d->stream,
	    id, sizeof id), d->device, tui_format_layer(d->layer),
	    d->site[0] != '\0' ? d->site : "(no stack)");
}

static void
tui_view_diff_draw_blocks(struct tui *t, struct tui_view_diff *v,
    struct tui_canvas *c, int y, int h)
{
	const struct diff_block		*d;
	int				 k;

	tui_canvas_printf(c, y, 0, -1, TUI_A_HEADER, "  %10s %5s %5s %-14s"
	    " %3s %-7s %s", "SIZE", "ALLOC", "FREED", "STREAM", "DEV",
	    "LAYER", "SITE");
	tui_canvas_attr(c, y, 0, c->w, TUI_A_HEADER);
	v->visible = h - 1;
	tui_list_scroll(&v->list, v->visible);
	for (k = 0; k < v->visible; k++) {
		if ((d = tui_list_row(t, &v->list, v->list.top + k)) == NULL)
			break;
		tui_view_diff_row(d, c, y + 1 + k);
		if (v->list.top + k == v->list.sel)
			tui_canvas_attr(c, y + 1 + k, 0, c->w, TUI_A_SELECTED);
	}
	if (k == 0 && v->list.top == 0)
		tui_canvas_put(c, y + 1, 1, -1, TUI_A_DIM,
		    "no difference between the two steps");
}

static void
tui_view_diff_draw_sites(struct tui *t, struct tui_view_diff *v,
    struct tui_canvas *c, int y, int h)
{
	const struct diff_group	*g;
	char			 n[32], o[32], id[32];
	int			 k;

	tui_canvas_printf(c, y, 0, -1, TUI_A_HEADER, "%11s %6s %11s %6s"
	    " %-14s %3s %s", "NEW", "BLOCKS", "GONE", "BLOCKS", "STREAM",
	    "DEV", "SITE");
	tui_canvas_attr(c, y, 0, c->w, TUI_A_HEADER);
	v->visible = h - 1;
	tui_list_scroll(&v->sites, v->visible);
	for (k = 0; k < v->visible; k++) {
		if ((g = tui_list_row(t, &v->sites, v->sites.top + k)) == NULL)
			break;
		tui_canvas_printf(c, y + 1 + k, 0, -1, TUI_A_NORMAL, "%11s %6"
		    PRId64 " %11s %6" PRId64 " %-14s %3d %s",
		    fmt_bytes(g->new_bytes, n, sizeof n),
		    g->new_blocks, fmt_bytes(g->gone_bytes, o,
		    sizeof o), g->gone_blocks, fmt_stream(g->stream,
		    id, sizeof id), g->device, g->name != NULL ? g->name :
		    "(no stack)");
		if (v->sites.top + k == v->sites.sel)
			tui_canvas_attr(c, y + 1 + k, 0, c->w, TUI_A_SELECTED);
	}
	if (k == 0 && v->sites.top == 0)
		tui_canvas_put(c, y + 1, 1, -1, TUI_A_DIM,
		    "no difference between the two steps");
}

static void
tui_view_diff_draw(struct tui *t, void *state, struct tui_canvas *c, int y,
    int h)
{
	struct tui_view_diff	*v = state;
	const struct diff_report *r = v->report;
	char			 a[32], b[32];

	if (t->run.counts.steps < 1) {
		tui_canvas_put(c, y + 1, 1, -1, TUI_A_NORMAL,
		    "no steps: nothing to compare");
		return;
	}
	tui_canvas_printf(c, y, 1, -1, TUI_A_BOLD, "step %lld -> step %lld"
	    " (layer %s, by %s)", (long long)v->a, (long long)v->b,
	    tui_format_layer(r != NULL ? r->layer : -1), v->by_site ? "site" :
	    "block");
	if (r != NULL)
		tui_canvas_printf(c, y + 1, 1, -1, TUI_A_NORMAL, "+%" PRId64
		    " blocks +%s appeared, -%" PRId64 " blocks -%s went away",
		    r->new_blocks, fmt_bytes(r->new_bytes, a,
		    sizeof a), r->gone_blocks, fmt_bytes(r->gone_bytes,
		    b, sizeof b));
	if (v->by_site)
		tui_view_diff_draw_sites(t, v, c, y + 2, h - 2);
	else
		tui_view_diff_draw_blocks(t, v, c, y + 2, h - 2);
}

const struct tui_view tui_view_diff = {
	"diff", "Diff", "a/A step A|b/B step B|p type steps|v by site",
	tui_view_diff_help,
	tui_view_diff_create, tui_view_diff_destroy, tui_view_diff_draw,
	tui_view_diff_key, tui_view_diff_reload
};
