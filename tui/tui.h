/*
 * tui.h: the terminal UI's shared declarations, listed under a line per
 * file.  Views draw into a canvas (a grid of cells), never into curses:
 * tui-screen.c paints a canvas on the terminal and tui.c's --dump prints
 * one as text, so the screen and the scripts see the same rendering.
 * Nothing under tui/ holds SQL; the data comes from the query layer
 * (query.h).
 */
#ifndef TUI_H
#define TUI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "vramtrace.h"
#include "query.h"

/* Keys: a character is its code point; the others are these. */
enum {
	TUI_KEY_NONE = 0,		/* nothing came before the timeout */
	TUI_KEY_UP = 0x110000,
	TUI_KEY_DOWN,
	TUI_KEY_LEFT,
	TUI_KEY_RIGHT,
	TUI_KEY_PGUP,
	TUI_KEY_PGDN,
	TUI_KEY_HOME,
	TUI_KEY_END,
	TUI_KEY_ENTER,
	TUI_KEY_ESC,
	TUI_KEY_BACKSPACE,
	TUI_KEY_RESIZE
};

/* What a cell looks like; tui-screen.c maps these to colours. */
enum tui_attr {
	TUI_A_NORMAL = 0,
	TUI_A_DIM,
	TUI_A_BOLD,
	TUI_A_TITLE,		/* the tab bar */
	TUI_A_TAB,		/* the current tab */
	TUI_A_HEADER,		/* column headings */
	TUI_A_SELECTED,		/* the cursor row */
	TUI_A_GOOD,
	TUI_A_BAD,
	TUI_A_WARN,
	TUI_A_BAR,		/* charts */
	TUI_A_KEY,		/* a key in the footer */
	TUI_A_MAX
};

struct tui_cell {
	uint32_t	 ch;		/* a code point, one column wide */
	uint8_t		 attr;		/* enum tui_attr */
};

struct tui_canvas {
	int		 w;
	int		 h;
	struct tui_cell	*cells;		/* h rows of w cells */
};

struct tui;

/*
 * A paged list: rows come from fetch() a page at a time, so a list of ten
 * million rows costs one page.  top and sel are row numbers; the cached
 * page holds rows first..first+n.  end is the number of rows once a fetch
 * came back short, -1 before.
 */
typedef int (*tui_list_fetch_fn)(struct tui *, void *, int64_t, void *, int,
    char **);
struct tui_list {
	size_t		 row_size;
	tui_list_fetch_fn fetch;
	void		*arg;
	void		*rows;
	int		 cap;
	int64_t		 first;
	int		 n;
	int		 valid;
	int64_t		 top;
	int64_t		 sel;
	int64_t		 end;
};

/*
 * One screen of the UI: tui-view-*.c each define one.  create() makes the
 * view's state (NULL: the view has none, and no destroy); key() returns 1
 * when it used the key and the screen must be drawn again (NULL: the view
 * has no keys); reload() says the data changed (NULL: nothing to do).
 */
struct tui_view {
	const char	*name;		/* for --dump */
	const char	*title;		/* in the tab bar */
	const char	*footer;	/* the view's keys, for the footer */
	const char *const *help;	/* lines for the help screen; NULL ends */
	void		*(*create)(struct tui *);
	void		 (*destroy)(void *);
	void		 (*draw)(struct tui *, void *, struct tui_canvas *,
			     int, int);
	int		 (*key)(struct tui *, void *, int);
	void		 (*reload)(struct tui *, void *);
};
#define TUI_NVIEWS	7

/* A line being typed at the bottom of the screen. */
typedef void (*tui_prompt_fn)(struct tui *, void *, const char *);
struct tui_prompt {
	const char	*label;
	char		 text[128];
	size_t		 len;
	int		 fresh;		/* text is the initial one, untouched:
					   a key replaces it */
	tui_prompt_fn	 done;
	void		*arg;
};

struct tui_worker;

/* The state of one UI session. */
struct tui {
	char		*path;		/* the database (a pickle's imported copy) */
	struct query	*q;
	int64_t		 want_run;	/* --run; 0: the newest */
	int		 live;		/* --live: follow a growing database */
	struct query_run run;		/* its counts: tui-data.c */
	int64_t		 runs;		/* in the database */
	struct leak_report *report;	/* NULL while the analysis runs */
	struct leak_report *pinned;	/* its pinned host memory's, judged
					   beside it; NULL: none, or not yet */
	char		*report_error;	/* why there is no report */
	int		 failed;	/* a query failed (tui_frame_fail) */
	struct tui_worker *worker;	/* the analysis being computed */
	struct query_poll poll;
	uint64_t	 polled_ns;
	uint64_t	 generation;	/* bumped when the data changed */

	int		 view;
	void		*state[TUI_NVIEWS];
	int		 show_stream;	/* Streams asks Blocks to filter */
	uint64_t	 show_stream_id;
	int		 help;
	struct tui_prompt prompt;	/* label NULL: no prompt */
	char		 message[160];
	int		 quit;
};

/* tui-canvas.c */
struct tui_canvas *tui_canvas_create(int, int);
void	 tui_canvas_free(struct tui_canvas *);
void	 tui_canvas_resize(struct tui_canvas *, int, int);
void	 tui_canvas_clear(struct tui_canvas *);
int	 tui_canvas_put(struct tui_canvas *, int, int, int, int,
	     const char *);
int	 tui_canvas_printf(struct tui_canvas *, int, int, int, int,
	     const char *, ...) printflike(6, 7);
void	 tui_canvas_fill(struct tui_canvas *, int, int, int, uint32_t, int);
void	 tui_canvas_attr(struct tui_canvas *, int, int, int, int);
int64_t	 tui_canvas_spark_top(const int64_t *, size_t, int);
void	 tui_canvas_spark(struct tui_canvas *, int, int, int,
	     const int64_t *, size_t, int64_t, int);
void	 tui_canvas_bar(struct tui_canvas *, int, int, int, double, int);
void	 tui_canvas_write(const struct tui_canvas *, FILE *);

/* tui-format.c */
const char *tui_format_layer(int);
int	 tui_format_check(struct tui_canvas *, int, int,
	     const struct query_check *);

/* tui-list.c */
void	 tui_list_init(struct tui_list *, size_t, tui_list_fetch_fn, void *);
void	 tui_list_free(struct tui_list *);
void	 tui_list_reset(struct tui_list *);
int	 tui_list_key(struct tui *, struct tui_list *, int, int);
const void *tui_list_row(struct tui *, struct tui_list *, int64_t);
const void *tui_list_selected(struct tui *, struct tui_list *);
void	 tui_list_scroll(struct tui_list *, int);

/* tui-data.c */
int	 tui_data_open(struct tui *, const char *, int64_t, int, char **);
void	 tui_data_close(struct tui *);
void	 tui_data_analyse(struct tui *, int);
int	 tui_data_update(struct tui *);
int	 tui_data_busy(struct tui *);

/* tui-screen.c */
void	 tui_screen_start(void);
void	 tui_screen_end(void);
void	 tui_screen_size(int *, int *);
void	 tui_screen_paint(const struct tui_canvas *);
int	 tui_screen_key(int);

/* tui-frame.c */
int	 tui_frame_find_view(const char *);
void	 tui_frame_draw(struct tui *, struct tui_canvas *, int);
int	 tui_frame_key(struct tui *, int);
void	 tui_frame_prompt(struct tui *, const char *, tui_prompt_fn, void *,
	     const char *);
void	 tui_frame_reload(struct tui *);
void	 tui_frame_free(struct tui *);
void	 tui_frame_fail(struct tui *, char *);

/* tui.c */
int	 tui_main(const char *, int64_t, int);
int	 tui_dump(const char *, int64_t, const char *, FILE *, char **);

/* tui-view-*.c */
extern const struct tui_view tui_view_overview;
extern const struct tui_view tui_view_streams;
extern const struct tui_view tui_view_steps;
extern const struct tui_view tui_view_blocks;
extern const struct tui_view tui_view_offload;
extern const struct tui_view tui_view_diff;
extern const struct tui_view tui_view_segments;

#endif
