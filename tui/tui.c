/*
 * tui.c: the two ways to run the UI: on the terminal (tui_main: curses,
 * the main loop) and as text (tui_dump: one view drawn into a canvas and
 * printed, no curses).
 *
 * The main loop draws only when something changed: a key, a resize, a
 * finished analysis or new rows under --live.  It waits for keys with a
 * timeout only while there is something to wait for (an analysis running,
 * --live polling), else it sleeps in the key read.
 *
 * VRAMTRACE_TUI_TIMING=FILE appends to FILE the time from start to the
 * first frame on the screen and from each key to its frame, in ms.
 */
#include "config.h"

#include "tui.h"

#include <stdlib.h>
#include <string.h>

#define TUI_DUMP_WIDTH	120
#define TUI_DUMP_HEIGHT	60
#define TUI_TICK_MS	100

static FILE *
tui_timing_open(void)
{
	const char	*path = getenv("VRAMTRACE_TUI_TIMING");

	if (path == NULL || *path == '\0')
		return (NULL);
	return (fopen(path, "a"));
}

static void
tui_timing_log(FILE *f, const char *what, int key, uint64_t since)
{
	if (f == NULL)
		return;
	fprintf(f, "%s %d %.3f\n", what, key,
	    (double)(lib_now_ns() - since) / 1e6);
	fflush(f);
}

static void
tui_paint(struct tui *t, struct tui_canvas *c)
{
	int	w, h;

	tui_screen_size(&w, &h);
	if (w != c->w || h != c->h)
		tui_canvas_resize(c, w, h);
	tui_frame_draw(t, c, 1);
	tui_screen_paint(c);
}

/*
 * Run the UI on the terminal for path (a database or a pickle), run `run`
 * (0: the newest), following the database with `live`.  Returns an exit
 * status; errors opening the input are reported on stderr.
 */
int
tui_main(const char *path, int64_t run, int live)
{
	struct tui		 t;
	struct tui_canvas	*c;
	FILE			*timing = tui_timing_open();
	uint64_t		 start = lib_now_ns(), at;
	uint64_t		 seen;
	char			*cause = NULL;
	int			 key, redraw;

	if (tui_data_open(&t, path, run, live, &cause) != 0) {
		log_warn("%s", cause);
		free(cause);
		tui_data_close(&t);
		if (timing != NULL)
			fclose(timing);
		return (EXIT_INPUT);
	}
	tui_screen_start();
	c = tui_canvas_create(1, 1);
	tui_paint(&t, c);
	tui_timing_log(timing, "first-frame", 0, start);
	tui_data_analyse(&t, 0);
	seen = t.generation;
	while (!t.quit) {
		key = tui_screen_key(tui_data_busy(&t) || t.live ?
		    TUI_TICK_MS : -1);
		at = lib_now_ns();
		redraw = 0;
		if (key == TUI_KEY_RESIZE || key == 12)	/* ^L */
			redraw = 1;
		else if (key != TUI_KEY_NONE)
			redraw = tui_frame_key(&t, key);
		if (tui_data_update(&t) || t.generation != seen) {
			seen = t.generation;
			tui_frame_reload(&t);
			redraw = 1;
		}
		if (redraw && !t.quit) {
			tui_paint(&t, c);
			if (key != TUI_KEY_NONE)
				tui_timing_log(timing, "key", key, at);
		}
	}
	tui_screen_end();
	tui_canvas_free(c);
	tui_frame_free(&t);
	tui_data_close(&t);
	if (timing != NULL)
		fclose(timing);
	return (EXIT_OK);
}

/*
 * Print view `view` (a name or 1-7) of path, run `run`, to f as text, as
 * the screen would show it on a TUI_DUMP_WIDTH x TUI_DUMP_HEIGHT terminal
 * without the footer.  The analysis is done first.  0, or -1 with *cause
 * when a query failed (the view is printed all the same, with the error
 * where the screen shows it).
 */
int
tui_dump(const char *path, int64_t run, const char *view, FILE *f,
    char **cause)
{
	struct tui		 t;
	struct tui_canvas	*c;
	int			 i;

	*cause = NULL;
	if ((i = tui_frame_find_view(view)) < 0) {
		xasprintf(cause, "unknown view %s (overview, streams, steps,"
		    " blocks, offload, diff, segments or 1-7)", view);
		return (-1);
	}
	if (tui_data_open(&t, path, run, 0, cause) != 0) {
		tui_data_close(&t);
		return (-1);
	}
	tui_data_analyse(&t, 1);
	t.view = i;
	c = tui_canvas_create(TUI_DUMP_WIDTH, TUI_DUMP_HEIGHT);
	tui_frame_draw(&t, c, 0);
	tui_canvas_write(c, f);
	tui_canvas_free(c);
	if (t.failed)
		*cause = xstrdup(t.message);
	else if (t.report_error != NULL)
		*cause = xstrdup(t.report_error);
	tui_frame_free(&t);
	tui_data_close(&t);
	return (*cause != NULL ? -1 : 0);
}
