/*
 * tui-view-overview.c: view 1, the run at a glance: what was run where,
 * how much it held, the verdict (and the pinned host memory's beside it,
 * where the run has some), the garbage streams and the sites that hold
 * the growth, and the offload check's line when the run was recorded with
 * record --check-offload (read when the view is made and when the data
 * changes).  It has no keys of its own.
 */
#include "config.h"

#include "tui.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char *const tui_view_overview_help[] = {
	"The run, its processes and devices, the verdict with the growth per",
	"step (Pinned: the pinned host memory's, judged as leaks judges it,",
	"where the run allocated some), the live bytes per step as a",
	"sparkline, garbage streams and the allocation sites that hold what",
	"grew.  Offload check (runs of record --check-offload): how many",
	"saved tensors an offload engine gave back different from what it",
	"was given (the Offload view, 5, lists the first).",
	NULL
};

static void
tui_view_overview_reload(struct tui *t, void *state)
{
	struct query_check	*check = state;
	char			*cause = NULL;

	query_check_free(check);
	if (query_check(t->q, t->run.id, 1, check, &cause) != 0)
		tui_frame_fail(t, cause);
}

static void *
tui_view_overview_create(struct tui *t)
{
	struct query_check	*check;

	check = xcalloc(1, sizeof *check);
	tui_view_overview_reload(t, check);
	return (check);
}

static void
tui_view_overview_destroy(void *state)
{
	query_check_free(state);
	free(state);
}

static int
tui_view_overview_label(struct tui_canvas *c, int y, const char *label)
{
	tui_canvas_put(c, y, 1, -1, TUI_A_BOLD, label);
	return (13);
}

/* The devices as "0 NVIDIA H200 (139.8 GiB), 1 ...", as many as fit. */
static const char *
tui_view_overview_devices(const struct query_run *r, char *buf, size_t len)
{
	const struct query_device	*d;
	char				 size[FMT_LEN], one[96];
	size_t				 i, used = 0;
	int				 n;

	buf[0] = '\0';
	for (i = 0; i < r->ndevices; i++) {
		d = &r->devices[i];
		n = snprintf(one, sizeof one, "%s%d", used > 0 ? ", " : "",
		    d->device);
		if (d->name != NULL)
			n += snprintf(one + n, sizeof one - (size_t)n, " %s",
			    d->name);
		if (d->total_bytes >= 0)
			snprintf(one + n, sizeof one - (size_t)n, " (%s)",
			    fmt_bytes(d->total_bytes, size, sizeof size));
		if (used + strlen(one) < len) {
			memcpy(buf + used, one, strlen(one) + 1);
			used += strlen(one);
		}
	}
	return (buf);
}

static int
tui_view_overview_run(struct tui *t, struct tui_canvas *c, int y)
{
	const struct query_run	*r = &t->run;
	char			 when[FMT_LEN], dur[FMT_LEN], devices[160];
	int			 x;

	x = tui_view_overview_label(c, y, "Run");
	x = tui_canvas_printf(c, y, x, -1, TUI_A_NORMAL, "%" PRId64 " of %"
	    PRId64 ", %s, ", r->id, t->runs, fmt_text(r->source));
	tui_canvas_put(c, y++, x, -1, r->complete ? TUI_A_NORMAL : TUI_A_WARN,
	    r->complete ? "complete" : "not finished (still recording?)");
	x = tui_view_overview_label(c, y, "Command");
	tui_canvas_put(c, y++, x, -1, TUI_A_NORMAL, fmt_text(r->command !=
	    NULL ? r->command : r->input));
	x = tui_view_overview_label(c, y, "Started");
	tui_canvas_printf(c, y++, x, -1, TUI_A_NORMAL, "%s UTC  on %s  lasted"
	    " %s", fmt_date(r->start_ns, when, sizeof when), fmt_text(r->host),
	    fmt_duration(r->start_ns, r->end_ns, dur, sizeof dur));
	x = tui_view_overview_label(c, y, "Processes");
	tui_canvas_printf(c, y++, x, -1, TUI_A_NORMAL, "%" PRId64
	    "   streams %" PRId64 "   steps %" PRId64 " (%s)",
	    r->counts.processes, r->counts.streams, r->counts.steps,
	    fmt_text(r->step_source));
	x = tui_view_overview_label(c, y, "Devices");
	tui_canvas_printf(c, y++, x, -1, TUI_A_NORMAL, "%zu%s%s",
	    r->ndevices, r->ndevices > 0 ? ": " : "",
	    tui_view_overview_devices(r, devices, sizeof devices));
	x = tui_view_overview_label(c, y, "Dropped");
	tui_canvas_printf(c, y++, x, -1, r->counts.dropped_records > 0 ?
	    TUI_A_WARN : TUI_A_NORMAL, "%" PRId64 " records%s   offload "
	    "events %" PRId64, r->counts.dropped_records,
	    r->counts.dropped_records > 0 ? " (the counts below miss them)" :
	    "", r->counts.offload_events);
	return (y);
}

/* A verdict's line after label: the verdict, then why, or its growth. */
static void
tui_view_overview_judged(const struct leak_report *r, const char *label,
    struct tui_canvas *c, int y)
{
	char	a[FMT_LEN], p[FMT_LEN];
	int	x, attr;

	attr = r->verdict == LEAK_LEAK ? TUI_A_BAD : r->verdict ==
	    LEAK_CLEAN ? TUI_A_GOOD : TUI_A_WARN;
	x = tui_view_overview_label(c, y, label);
	x = tui_canvas_put(c, y, x, -1, attr, leak_verdict_name(r->verdict));
	if (r->reason != NULL)
		tui_canvas_printf(c, y, x, -1, TUI_A_NORMAL, ": %s", r->reason);
	else
		tui_canvas_printf(c, y, x, -1, TUI_A_NORMAL, "  %s per step,"
		    " %s of steps grew (layer %s, warm-up %d)",
		    fmt_delta(r->growth_bytes_per_step, a, sizeof a),
		    fmt_percent(r->grew_fraction, p, sizeof p),
		    tui_format_layer(r->layer), r->warmup);
}

/* The bytes every stream of a run holds at its end. */
static int64_t
tui_view_overview_live(const struct leak_report *r)
{
	int64_t	live = 0;
	size_t	i;

	for (i = 0; i < r->nstreams; i++)
		live += r->streams[i].live_bytes;
	return (live);
}

static int
tui_view_overview_verdict(const struct leak_report *r,
    const struct leak_report *pinned, const struct query_check *check,
    struct tui_canvas *c, int y)
{
	char	a[FMT_LEN], b[FMT_LEN];
	int	x;

	tui_view_overview_judged(r, "Verdict", c, y++);
	if (pinned != NULL)
		tui_view_overview_judged(pinned, "Pinned", c, y++);
	if (r->history_from > 0) {
		x = tui_view_overview_label(c, y, "History");
		tui_canvas_printf(c, y++, x, -1, TUI_A_WARN, "the snapshot's "
		    "trace begins in step %d of %zu, so the warm-up reaches "
		    "to it (%s)", r->history_from, r->nsteps,
		    LEAK_HISTORY_NOTE);
	}
	if (check->checked_run) {
		x = tui_view_overview_label(c, y, "Check");
		y = tui_format_check(c, y, x, check);
	}
	if (r->nsteps == 0) {
		/* No step ends to peak at: what the streams hold at the end. */
		x = tui_view_overview_label(c, y, "Live");
		tui_canvas_printf(c, y++, x, -1, TUI_A_NORMAL, "%s at the end",
		    fmt_bytes(tui_view_overview_live(r), a, sizeof a));
		return (y);
	}
	x = tui_view_overview_label(c, y, "Peak");
	tui_canvas_printf(c, y++, x, -1, TUI_A_NORMAL, "%s   live at the "
	    "last step %s", fmt_bytes(r->peak_bytes, a, sizeof a),
	    fmt_bytes(r->steps[r->nsteps - 1].live_bytes, b, sizeof b));
	return (y);
}

static int
tui_view_overview_history(const struct leak_report *r, struct tui_canvas *c,
    int y)
{
	int64_t	*v;
	size_t	 i, first = leak_report_first_whole(r), n;
	int	 x;

	if (first >= r->nsteps)
		return (y);
	n = r->nsteps - first;
	v = xcalloc(n, sizeof *v);
	for (i = 0; i < n; i++)
		v[i] = r->steps[first + i].live_bytes;
	x = tui_view_overview_label(c, y, "Live/step");
	tui_canvas_spark(c, y++, x, c->w - x - 1, v, n, 0, TUI_A_BAR);
	free(v);
	return (y);
}

static int
tui_view_overview_garbage(const struct leak_report *r, struct tui_canvas *c,
    int y, int end)
{
	const struct leak_stream	*s;
	char				 id[32], bytes[32];
	size_t				 i;
	int				 x, any = 0;

	x = tui_view_overview_label(c, y, "Garbage");
	for (i = 0; i < r->nstreams && y < end; i++) {
		s = &r->streams[i];
		if (s->garbage == LEAK_GARBAGE_NONE)
			continue;
		tui_canvas_printf(c, y++, x, -1, TUI_A_BAD, "GARBAGE %s: "
		    "stream %s on device %d, %s in %" PRId64 " blocks",
		    leak_garbage_name(s->garbage),
		    fmt_stream(s->stream, id, sizeof id), s->device,
		    fmt_bytes(s->garbage_bytes, bytes, sizeof bytes),
		    s->garbage_blocks);
		any = 1;
	}
	if (!any)
		tui_canvas_put(c, y++, x, -1, TUI_A_GOOD, "no garbage streams");
	return (y);
}

static void
tui_view_overview_suspects(const struct leak_report *r, struct tui_canvas *c,
    int y, int end)
{
	const struct leak_suspect	*s;
	char				 bytes[32], id[32], *name;
	size_t				 i;

	if (r->nsuspects == 0 || y + 1 >= end)
		return;
	tui_canvas_put(c, y++, 1, -1, TUI_A_BOLD, r->nsteps == 0 ?
	    "Sites holding memory live at the end" :
	    "Sites holding what grew after the warm-up");
	for (i = 0; i < r->nsuspects && y < end; i++) {
		s = &r->suspects[i];
		name = leak_suspect_name(s);
		tui_canvas_printf(c, y++, 3, -1, TUI_A_NORMAL, "%10s %6" PRId64
		    " blocks  stream %-14s %s", fmt_bytes(s->bytes,
		    bytes, sizeof bytes), s->blocks, fmt_stream(s->stream,
		    id, sizeof id), name);
		free(name);
	}
}

static void
tui_view_overview_draw(struct tui *t, void *state, struct tui_canvas *c,
    int y, int h)
{
	const struct leak_report	*r = t->report;
	int				 end = y + h;

	y = tui_view_overview_run(t, c, y + 1) + 1;
	if (r == NULL) {
		tui_view_overview_label(c, y, "Verdict");
		tui_canvas_put(c, y, 13, -1, TUI_A_WARN, t->report_error !=
		    NULL ? t->report_error : "analysing… (reading every "
		    "allocation)");
		return;
	}
	y = tui_view_overview_verdict(r, t->pinned, state, c, y);
	y = tui_view_overview_history(r, c, y);
	y = tui_view_overview_garbage(r, c, y, end) + 1;
	tui_view_overview_suspects(r, c, y, end);
}

const struct tui_view tui_view_overview = {
	"overview", "Overview", "", tui_view_overview_help,
	tui_view_overview_create, tui_view_overview_destroy,
	tui_view_overview_draw, NULL, tui_view_overview_reload
};
