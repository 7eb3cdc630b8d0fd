/*
 * cmd-sql.c: vramtrace sql DB QUERY: a read-only SQL prompt for scripts.
 */
#include "config.h"

#include "vramtrace.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

static int	cmd_sql_exec(const struct cmd_entry *, int, char **);

const struct cmd_entry cmd_sql_entry = {
	"sql", "DB|PICKLE QUERY [--format table|csv|json]",
	"run one read-only SQL statement on a database",
	"  -f, --format FMT   table (default), csv or json\n",
	cmd_sql_exec
};

enum { FORMAT_TABLE, FORMAT_CSV, FORMAT_JSON };
static const char *const formats[] = { "table", "csv", "json", NULL };

struct sql_out {
	int	  format;
	int	  ncols;
	char	**names;
	long	  rows;
};

static void
csv_field(const char *v)
{
	if (v == NULL)
		return;
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
			fputs(values[i] != NULL ? values[i] :
			    (header ? "" : "NULL"), stdout);
		}
		putchar('\n');
		break;
	}
	if (!header)
		o->rows++;
}

static int
cmd_sql_exec(const struct cmd_entry *self, int argc, char **argv)
{
	static const struct option	 longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 }
	};
	struct sql_out			 out = { 0 };
	struct query			*q;
	const char			*arg;
	char				*cause = NULL;
	int				 c, rc, i;

	while ((c = cmd_getopt(self, argc, argv, "f:", longopts, NULL,
	    &arg)) != -1) {
		switch (c) {
		case 'f':
			if ((out.format = cmd_parse_format(self, arg,
			    formats)) < 0)
				return (EXIT_USAGE);
			break;
		default:
			return (EXIT_USAGE);
		}
	}
	if (argc - optind != 2)
		return (cmd_usage_error(self, argc - optind < 2 ?
		    "needs a database and a query" : "too many arguments"));
	if ((q = input_open(argv[optind], &cause)) == NULL)
		return (cmd_fail(cause));
	rc = query_sql(q, argv[optind + 1], sql_row, &out, &cause);
	if (out.format == FORMAT_JSON && out.names != NULL)
		printf("%s]\n", out.rows > 0 ? "\n" : "");
	for (i = 0; i < out.ncols; i++)
		free(out.names[i]);
	free(out.names);
	query_close(q);
	if (rc != 0)
		return (cmd_fail(cause));
	return (EXIT_OK);
}
