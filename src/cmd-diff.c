/*
 * cmd-diff.c: vramtrace diff A B: the blocks live at B and not at A, and
 * the other way round, by site and stream.  A and B are DB|PICKLE with an
 * optional #RUN and @STEP: run.db@3 run.db@5 compares two step ends of a
 * run; a.db b.db, or run.db#1 run.db#2, the ends of two runs.
 */
#include "config.h"

#include "vramtrace.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "query.h"
#include "unwrap.h"

static int	cmd_diff_exec(const struct cmd_entry *,
		    const struct cmd_args *);

enum { FORMAT_TEXT, FORMAT_JSON };
static const char *const formats[] = { "text", "json", NULL };

static const struct cmd_option cmd_diff_options[] = {
	CMD_OPTION_LAYER("the layer to compare (default: the one leaks would"
	    " analyse in B)"),
	CMD_OPTION_FORMAT(formats, "text (default) or json"),
	CMD_OPTION_END
};

const struct cmd_entry cmd_diff_entry = {
	.name = "diff",
	.args = "DB|PICKLE[#RUN][@STEP] DB|PICKLE[#RUN][@STEP]",
	.lower = 2,
	.upper = 2,
	.missing = "needs two points to compare",
	.options = cmd_diff_options,
	.summary = "compare the live blocks of two steps, runs or snapshots",
	.exec = cmd_diff_exec
};

struct diff_arg {
	char			*path;
	struct diff_point	 p;
};

/*
 * Take a trailing "<mark>N" (N > 0, decimal) off s into *v.  Anything else
 * stays part of the file name.
 */
static void
split_suffix(char *s, int mark, int64_t *v)
{
	char		*at = strrchr(s, mark);
	uint64_t	 n;

	if (at == NULL || at == s || lib_parse_uint(at + 1, &n) != 0 ||
	    n == 0 || n > INT64_MAX)
		return;
	*v = (int64_t)n;
	*at = '\0';
}

static void
parse_arg(const char *s, struct diff_arg *d)
{
	d->path = xstrdup(s);
	d->p.run_id = d->p.step = 0;
	split_suffix(d->path, '@', &d->p.step);
	split_suffix(d->path, '#', &d->p.run_id);
}

static void
print_point(const char *name, const struct diff_arg *d,
    const struct diff_point *p, int64_t live)
{
	char	b[32];

	printf("%s: %s run %" PRId64 " ", name, unwrap_label(d->path),
	    p->run_id);
	if (p->step != 0)
		printf("step %" PRId64, p->step);
	else
		printf("end");
	printf(", %s live\n", fmt_bytes(live, b, sizeof b));
}

static void
print_text(const struct diff_report *r, const struct diff_arg *a,
    const struct diff_arg *b)
{
	const struct diff_group	*g;
	char			 x[32], y[32], z[32];
	size_t			 i;

	printf("layer %s\n", event_layer_name((unsigned int)r->layer));
	print_point("A", a, &r->a, r->a_bytes);
	print_point("B", b, &r->b, r->b_bytes);
	printf("new %s in %" PRId64 " blocks, gone %s in %" PRId64
	    " blocks, net %s\n", fmt_bytes(r->new_bytes, x, sizeof x),
	    r->new_blocks, fmt_bytes(r->gone_bytes, y, sizeof y),
	    r->gone_blocks, fmt_delta((double)(r->new_bytes -
	    r->gone_bytes), z, sizeof z));
	if (r->ngroups == 0)
		return;
	printf("\n%12s %7s %12s %7s %6s  %-12s %s\n", "new", "blocks",
	    "gone", "blocks", "device", "stream", "site");
	for (i = 0; i < r->ngroups; i++) {
		g = &r->groups[i];
		printf("%12s %7" PRId64 " %12s %7" PRId64 " %6d  %-12s %s\n",
		    fmt_bytes(g->new_bytes, x, sizeof x),
		    g->new_blocks,
		    fmt_bytes(g->gone_bytes, y, sizeof y),
		    g->gone_blocks, (int)g->device,
		    fmt_stream(g->stream, z, sizeof z),
		    g->name != NULL ? fmt_safe(g->name) : "(no stack)");
	}
}

static void
print_json_point(const struct diff_arg *d, const struct diff_point *p,
    int64_t live)
{
	printf("{\"file\": ");
	json_string(stdout, d->path);
	printf(", \"run_id\": %" PRId64 ", \"step\": ", p->run_id);
	json_int_or_null(stdout, p->step, p->step != 0);
	printf(", \"live_bytes\": %" PRId64 "}", live);
}

static void
print_json(const struct diff_report *r, const struct diff_arg *a,
    const struct diff_arg *b)
{
	const struct diff_group	*g;
	size_t			 i;

	printf("{\"layer\": \"%s\", \"a\": ",
	    event_layer_name((unsigned int)r->layer));
	print_json_point(a, &r->a, r->a_bytes);
	printf(", \"b\": ");
	print_json_point(b, &r->b, r->b_bytes);
	printf(", \"new_bytes\": %" PRId64 ", \"new_blocks\": %" PRId64
	    ", \"gone_bytes\": %" PRId64 ", \"gone_blocks\": %" PRId64
	    ", \"net_bytes\": %" PRId64 ",\n \"groups\": [", r->new_bytes,
	    r->new_blocks, r->gone_bytes, r->gone_blocks,
	    r->new_bytes - r->gone_bytes);
	for (i = 0; i < r->ngroups; i++) {
		g = &r->groups[i];
		printf("%s\n  {\"name\": ", i ? "," : "");
		json_string(stdout, g->name);
		printf(", \"site\": ");
		json_string(stdout, g->site);
		printf(", \"device\": %d, \"stream\": ", (int)g->device);
		json_stream(stdout, g->stream);
		printf(", \"new_bytes\": %" PRId64 ", \"new_blocks\": %" PRId64
		    ", \"gone_bytes\": %" PRId64 ", \"gone_blocks\": %" PRId64
		    ", \"net_bytes\": %" PRId64 "}", g->new_bytes,
		    g->new_blocks, g->gone_bytes, g->gone_blocks,
		    g->new_bytes - g->gone_bytes);
	}
	printf("]}\n");
}

static int
cmd_diff_exec(const struct cmd_entry *self, const struct cmd_args *args)
{
	struct diff_arg			 a = { NULL, { 0, 0 } };
	struct diff_arg			 b = { NULL, { 0, 0 } };
	struct diff_report		*r = NULL;
	struct query			*qa = NULL, *qb = NULL;
	char				*cause = NULL;
	int				 format, layer = -1;
	int				 rc = EXIT_INPUT;

	(void)self;
	if (cmd_args_has(args, 'L'))
		layer = (int)cmd_args_number(args, 'L', 0);
	format = (int)cmd_args_number(args, 'f', FORMAT_TEXT);
	parse_arg(args->argv[0], &a);
	parse_arg(args->argv[1], &b);
	if ((qa = input_open(a.path, &cause)) == NULL ||
	    (qb = input_open(b.path, &cause)) == NULL ||
	    query_diff(qa, &a.p, qb, &b.p, layer, QUERY_DIFF_ALL, &r,
	    &cause) != 0) {
		log_warn("%s", cause);
		free(cause);
		goto out;
	}
	if (format == FORMAT_JSON)
		print_json(r, &a, &b);
	else
		print_text(r, &a, &b);
	rc = EXIT_OK;

out:
	query_diff_free(r);
	query_close(qa);
	query_close(qb);
	free(a.path);
	free(b.path);
	return (rc);
}
