/*
 * tui-frame.c: what is around the views: the tab bar at the top, the
 * footer with the keys at the bottom, the message or prompt line above
 * it, the help screen; and the keys that are the same in every view.
 * Pure: it draws into a canvas and takes key codes, so --dump uses it too.
 *
 * A view's footer is "KEY label|KEY label|...": each key is drawn
 * highlighted, htop-style; "? help" and "q quit" are always at the right.
 */
#include "config.h"

#include "tui.h"

#include <stdlib.h>
#include <string.h>

static const struct tui_view *const tui_frame_views[TUI_NVIEWS] = {
	&tui_view_overview,
	&tui_view_streams,
	&tui_view_steps,
	&tui_view_blocks,
	&tui_view_offload,
	&tui_view_diff,
	&tui_view_segments
};

static const char *const tui_frame_help[] = {
	"1-7, Tab    switch view: Overview, Streams, Steps, Blocks, Offload,",
	"            Diff, Segments",
	"Up/Down j/k move, PgUp/PgDn page, Home/End g/G first and last row",
	"?  h        this help (any key closes it)",
	"Ctrl-L      redraw",
	"q           quit",
	NULL
};

/*
 * The index of the view called name ("blocks") or numbered by it ("4"),
 * or -1.
 */
int
tui_frame_find_view(const char *name)
{
	int	i;

	for (i = 0; i < TUI_NVIEWS; i++) {
		if (strcmp(tui_frame_views[i]->name, name) == 0 ||
		    (name[0] == '1' + i && name[1] == '\0'))
			return (i);
	}
	return (-1);
}

static void *
tui_frame_state(struct tui *t, int i)
{
	if (t->state[i] == NULL && tui_frame_views[i]->create != NULL)
		t->state[i] = tui_frame_views[i]->create(t);
	return (t->state[i]);
}

/*
 * The tab bar: a tab per view, the verdict, LIVE with --live.  When they
 * do not all fit (80 columns), the other views' tabs show their number
 * only, so that the verdict is never cut.
 */
static void
tui_frame_tabs(struct tui *t, struct tui_canvas *c)
{
	const struct leak_report	*r = t->report, *p = t->pinned;
	char				 rate[32], status[64], pinned[64] = "";
	int				 i, x = 0, attr, width = 0, brief;

	/* A pinned host memory that leaks shows on every view. */
	if (r != NULL && p != NULL && p->verdict == LEAK_LEAK) {
		fmt_delta(p->growth_bytes_per_step, rate, sizeof rate);
		snprintf(pinned, sizeof pinned, " pinned LEAK %s/step", rate);
	}
	if (r != NULL) {
		fmt_delta(r->growth_bytes_per_step, rate, sizeof rate);
		snprintf(status, sizeof status, "%s%s%s%s",
		    leak_verdict_name(r->verdict),
		    r->verdict == LEAK_LEAK ? " " : "",
		    r->verdict == LEAK_LEAK ? rate : "",
		    r->verdict == LEAK_LEAK ? "/step" : "");
	} else
		snprintf(status, sizeof status, "%s", t->report_error != NULL ?
		    "no analysis" : "analysing…");
	for (i = 0; i < TUI_NVIEWS; i++)
		width += 4 + (int)strlen(tui_frame_views[i]->title);
	brief = width + 1 + (int)strlen(status) + (int)strlen(pinned) +
	    (t->live ? 5 : 0) > c->w;
	tui_canvas_fill(c, 0, 0, c->w, ' ', TUI_A_TITLE);
	for (i = 0; i < TUI_NVIEWS; i++) {
		attr = i == t->view ? TUI_A_TAB : TUI_A_TITLE;
		if (brief && i != t->view)
			x = tui_canvas_printf(c, 0, x, -1, attr, " %d ", i + 1);
		else
			x = tui_canvas_printf(c, 0, x, -1, attr, " %d %s ",
			    i + 1, tui_frame_views[i]->title);
	}
	attr = r == NULL ? TUI_A_TITLE : r->verdict == LEAK_LEAK ? TUI_A_BAD :
	    r->verdict == LEAK_CLEAN ? TUI_A_GOOD : TUI_A_WARN;
	x = tui_canvas_put(c, 0, x + 1, -1, attr, status);
	tui_canvas_put(c, 0, x, -1, TUI_A_BAD, pinned);
	if (t->live)
		tui_canvas_put(c, 0, c->w - 5, -1, TUI_A_WARN, " LIVE");
}

/*
 * Draw "KEY label|KEY label" from column x, in max columns: the items that
 * fit, then "…" when some did not (the help lists them all); returns the
 * column after.
 */
static int
tui_frame_keys(struct tui_canvas *c, int y, int x, int max, const char *spec)
{
	char	*copy, *item, *save, *sp;
	int	 end = x + max;

	copy = xstrdup(spec);
	for (item = strtok_r(copy, "|", &save); item != NULL;
	    item = strtok_r(NULL, "|", &save)) {
		if ((sp = strchr(item, ' ')) != NULL)
			*sp = '\0';
		if (x + (int)strlen(item) + (sp != NULL ?
		    (int)strlen(sp + 1) + 1 : 0) > end) {
			tui_canvas_put(c, y, x, end - x, TUI_A_DIM, "…");
			break;
		}
		x = tui_canvas_put(c, y, x, end - x, TUI_A_KEY, item);
		if (sp != NULL) {
			*sp = ' ';
			x = tui_canvas_put(c, y, x, end - x, TUI_A_NORMAL, sp);
		}
		x = tui_canvas_put(c, y, x, end - x, TUI_A_NORMAL, "  ");
	}
	free(copy);
	return (x);
}

static void
tui_frame_footer(struct tui *t, struct tui_canvas *c)
{
	static const char	*global = "? help|q quit";
	const char		*own = tui_frame_views[t->view]->footer;
	int			 y = c->h - 1, right = 16;

	tui_canvas_fill(c, y, 0, c->w, ' ', TUI_A_NORMAL);
	if (t->prompt.label != NULL)
		own = "Enter apply|Esc cancel";
	else if (t->help)
		own = "any key close help";
	tui_frame_keys(c, y, 0, c->w - right, own);
	tui_frame_keys(c, y, c->w - right + 1 > 0 ? c->w - right + 1 : 0,
	    right - 1, global);
}

static void
tui_frame_help_draw(struct tui *t, struct tui_canvas *c, int y, int h)
{
	const char *const	*line;
	int			 end = y + h;

	tui_canvas_put(c, y++, 0, -1, TUI_A_HEADER,
	    " vramtrace tui: keys in every view");
	for (line = tui_frame_help; *line != NULL && y < end; line++)
		tui_canvas_printf(c, y++, 2, -1, TUI_A_NORMAL, "%s", *line);
	if (y < end)
		tui_canvas_printf(c, ++y, 0, -1, TUI_A_HEADER,
		    " %s view", tui_frame_views[t->view]->title);
	y++;
	for (line = tui_frame_views[t->view]->help; *line != NULL && y < end;
	    line++)
		tui_canvas_printf(c, y++, 2, -1, TUI_A_NORMAL, "%s", *line);
}

/*
 * Draw the whole screen into c: the tab bar, view t->view (or the help),
 * the message or prompt line, and, when `footer` is set, the footer.
 */
void
tui_frame_draw(struct tui *t, struct tui_canvas *c, int footer)
{
	const struct tui_view	*v = tui_frame_views[t->view];
	int			 h = c->h - 1 - (footer ? 1 : 0);
	int			 line = 0, x;

	tui_canvas_clear(c);
	tui_frame_tabs(t, c);
	if (t->prompt.label != NULL || t->message[0] != '\0')
		line = 1;
	if (t->help)
		tui_frame_help_draw(t, c, 1, h - line);
	else
		v->draw(t, tui_frame_state(t, t->view), c, 1, h - line);
	if (t->prompt.label != NULL) {
		/* Text to be replaced shows as the cursor row does. */
		x = tui_canvas_printf(c, h, 0, -1, TUI_A_BOLD, "%s ",
		    t->prompt.label);
		x = tui_canvas_put(c, h, x, -1, t->prompt.fresh ?
		    TUI_A_SELECTED : TUI_A_BOLD, t->prompt.text);
		tui_canvas_put(c, h, x, -1, TUI_A_BOLD, "_");
	}
	else if (t->message[0] != '\0')
		tui_canvas_put(c, h, 0, -1, TUI_A_WARN, t->message);
	if (footer)
		tui_frame_footer(t, c);
}

/*
 * Ask for a line of text at the bottom, starting with `initial` (NULL:
 * empty), which the first key replaces as a selection would (a character
 * starts a new text, Backspace clears it); Enter calls done(t, arg,
 * text), Esc drops it.
 */
void
tui_frame_prompt(struct tui *t, const char *label, tui_prompt_fn done,
    void *arg, const char *initial)
{
	memset(&t->prompt, 0, sizeof t->prompt);
	t->prompt.label = label;
	t->prompt.done = done;
	t->prompt.arg = arg;
	if (initial != NULL) {
		snprintf(t->prompt.text, sizeof t->prompt.text, "%s", initial);
		t->prompt.len = strlen(t->prompt.text);
		t->prompt.fresh = t->prompt.len > 0;
	}
}

static void
tui_frame_prompt_key(struct tui *t, int key)
{
	struct tui_prompt	*p = &t->prompt;
	char			 text[sizeof p->text];

	if (p->fresh && (key == TUI_KEY_BACKSPACE || (key >= ' ' &&
	    key < 0x7f))) {
		p->len = 0;
		p->text[0] = '\0';
		if (key == TUI_KEY_BACKSPACE)
			key = 0;
	}
	p->fresh = 0;
	switch (key) {
	case TUI_KEY_ENTER:
		memcpy(text, p->text, sizeof text);
		p->label = NULL;
		p->done(t, p->arg, text);
		break;
	case TUI_KEY_ESC:
		p->label = NULL;
		break;
	case TUI_KEY_BACKSPACE:
		if (p->len > 0)
			p->text[--p->len] = '\0';
		break;
	default:
		if (key >= ' ' && key < 0x7f && p->len + 1 < sizeof p->text) {
			p->text[p->len++] = (char)key;
			p->text[p->len] = '\0';
		}
		break;
	}
}

/*
 * A query failed: show why (cause, which is freed) on the status line,
 * and remember it, so that tui --dump fails.
 */
void
tui_frame_fail(struct tui *t, char *cause)
{
	snprintf(t->message, sizeof t->message, "%s", cause);
	free(cause);
	t->failed = 1;
}

/*
 * Act on a key: the prompt's or the help's first, then the keys of every
 * view, then the current view's.  Returns 1 when the screen must be
 * drawn again.
 */
int
tui_frame_key(struct tui *t, int key)
{
	int	i;

	t->message[0] = '\0';
	if (t->prompt.label != NULL) {
		tui_frame_prompt_key(t, key);
		return (1);
	}
	if (t->help) {
		t->help = 0;
		return (1);
	}
	if (key >= '1' && key < '1' + TUI_NVIEWS) {
		t->view = key - '1';
		return (1);
	}
	switch (key) {
	case '\t':
		t->view = (t->view + 1) % TUI_NVIEWS;
		return (1);
	case '?':
	case 'h':
		t->help = 1;
		return (1);
	case 'q':
		t->quit = 1;
		return (0);
	}
	i = t->view;
	if (tui_frame_views[i]->key == NULL)
		return (0);
	return (tui_frame_views[i]->key(t, tui_frame_state(t, i), key));
}

/* Tell every view that the data changed. */
void
tui_frame_reload(struct tui *t)
{
	int	i;

	for (i = 0; i < TUI_NVIEWS; i++) {
		if (t->state[i] != NULL && tui_frame_views[i]->reload != NULL)
			tui_frame_views[i]->reload(t, t->state[i]);
	}
}

/* Free every view's state. */
void
tui_frame_free(struct tui *t)
{
	int	i;

	for (i = 0; i < TUI_NVIEWS; i++) {
		if (t->state[i] != NULL)
			tui_frame_views[i]->destroy(t->state[i]);
		t->state[i] = NULL;
	}
}
