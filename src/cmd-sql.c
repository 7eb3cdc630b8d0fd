/*
 * cmd-sql.c: vramtrace sql DB QUERY: a read-only SQL prompt for scripts.
 */
#include "config.h"

#include "vramtrace.h"

#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "query.h"

static int	cmd_sql_exec(const struct cmd_entry *,
		    const struct cmd_args *);

enum { FORMAT_TABLE, FORMAT_CSV, FORMAT_JSON };
static const char *const formats[] = { "table", "csv", "json", NULL };

static const struct cmd_option cmd_sql_options[] = {
	CMD_OPTION_FORMAT(formats, "table (default), csv or json"),
	CMD_OPTION_END
};

const struct cmd_entry cmd_sql_entry = {
	.name = "sql",
	.args = "DB|PICKLE QUERY",
	.lower = 2,
	.upper = 2,
	.missing = "needs a database and a query",
	.options = cmd_sql_options,
	.summary = "run one read-only SQL statement on a database",
	.exec = cmd_sql_exec
};

struct sql_out {
	int	  format;
	int	  ncols;
	char	**names;
	long	  rows;
};

/* A CSV field, escaped for a terminal (fmt_safe), quoted when needed. */
static void
csv_field(const char *v)
{
	if (v == NULL)
		return;
	v = fmt_safe(v);
	if (strpbrk(v, ",\"\n\r") == NULL) {
		fputs(v, stdout);
		return;
	}
	putchar('"');
	for (; *v != '\0'; v++) {
		if (*v == '"')
			putchar('"');
		putchar(*v);
	}
	putchar('"');
}

static void
sql_row(void *arg, int n, const char **values, const int *types, int header)
{
	struct sql_out	*o = arg;
	int		 i;

	if (header) {
		o->ncols = n;
		o->names = xcalloc((size_t)n + 1, sizeof *o->names);
		for (i = 0; i < n; i++)
			o->names[i] = xstrdup(values[i]);
		if (o->format == FORMAT_JSON) {
			putchar('[');
			return;
		}
	}
	switch (o->format) {
	case FORMAT_JSON:
		printf("%s\n {", o->rows == 0 ? "" : ",");
		for (i = 0; i < n; i++) {
			if (i > 0)
				fputs(", ", stdout);
			json_string(stdout, o->names[i]);
			fputs(": ", stdout);
			if (types[i] == QUERY_NUMBER)
				fputs(values[i], stdout);
			else
				json_string(stdout, values[i]);
		}
		putchar('}');
		break;
	case FORMAT_CSV:
		for (i = 0; i < n; i++) {
			if (i > 0)
				putchar(',');
			csv_field(values[i]);
		}
		putchar('\n');
		break;
	default:
		for (i = 0; i < n; i++) {
			if (i > 0)
				putchar('|');
			fputs(values[i] != NULL ? fmt_safe(values[i]) :
			    (header ? "" : "NULL"), stdout);
		}
		putchar('\n');
		break;
	}
	if (!header)
		o->rows++;
}

static int
cmd_sql_exec(const struct cmd_entry *self, const struct cmd_args *args)
{
	struct sql_out	 out = { 0 };
	struct query	*q;
	char		*cause = NULL;
	int		 rc, i;

	(void)self;
	out.format = (int)cmd_args_number(args, 'f', FORMAT_TABLE);
	if ((q = input_open(args->argv[0], &cause)) == NULL)
		return (cmd_fail(EXIT_INPUT, cause));
	rc = query_sql(q, args->argv[1], sql_row, &out, &cause);
	if (out.format == FORMAT_JSON && out.names != NULL)
		printf("%s]\n", out.rows > 0 ? "\n" : "");
	for (i = 0; i < out.ncols; i++)
		free(out.names[i]);
	free(out.names);
	query_close(q);
	if (rc != 0)	/* a statement SQLite refuses */
		return (cmd_fail(EXIT_USAGE, cause));
	return (EXIT_OK);
}
