/*
 * cmd.c: the command table, and the one parser of every command's line.
 *
 * A command is a const struct cmd_entry in its own src/cmd-NAME.c (cmd.h):
 * its positional arguments with their bounds and its options, each with a
 * kind of value.  cmd_exec() parses a command line against the entry with
 * getopt_long (tables built from the entry), checks every value against
 * its kind and the argument count against the bounds, answers -h and
 * --help, and only then calls the entry's exec with the parsed result.  A
 * usage error is one line naming what is wrong, then the usage line, on
 * stderr, and exit status 2.  The usage line and the option list that
 * --help prints are made from the same entry, so they cannot disagree.
 *
 * Adding a command: one src/cmd-NAME.c, one line in cmd_table, one entry
 * in the manual (tests/t-cli.sh checks the manual against --help).
 */
#include "config.h"

#include "vramtrace.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "query.h"
#include "cmd.h"

/* The column --help and the usage line wrap before. */
#define CMD_WIDTH	79
/* The widest option column of --help; a wider option has its own line. */
#define CMD_LEFT	24

static int	cmd_help_exec(const struct cmd_entry *,
		    const struct cmd_args *);

static const struct cmd_entry cmd_help_entry = {
	.name = "help",
	.args = "[COMMAND]",
	.lower = 0,
	.upper = 1,
	.summary = "show the usage of vramtrace or of one command",
	.exec = cmd_help_exec
};

static const struct cmd_entry *const cmd_table[] = {
	&cmd_help_entry,
	&cmd_attach_entry,
	&cmd_diff_entry,
	&cmd_export_entry,
	&cmd_history_entry,
	&cmd_import_entry,
	&cmd_info_entry,
	&cmd_leaks_entry,
	&cmd_merge_entry,
	&cmd_record_entry,
	&cmd_replay_entry,
	&cmd_report_entry,
	&cmd_sql_entry,
	&cmd_stats_entry,
	&cmd_tui_entry,
	NULL
};

/* The option every command has, after its own. */
static const struct cmd_option cmd_help_option = {
	.name = "help", .letter = 'h', .kind = CMD_FLAG,
	.help = "show this help and exit"
};

/* The command called name, or NULL. */
const struct cmd_entry *
cmd_find(const char *name)
{
	const struct cmd_entry *const	*e;

	for (e = cmd_table; *e != NULL; e++) {
		if (strcmp((*e)->name, name) == 0)
			return (*e);
	}
	return (NULL);
}

/* Print the program's usage: every command with its summary. */
void
cmd_print_usage(FILE *f)
{
	const struct cmd_entry *const	*e;

	fprintf(f, "usage: vramtrace [--help] [--version] COMMAND [ARGS]\n"
	    "\ncommands:\n");
	for (e = cmd_table; *e != NULL; e++)
		fprintf(f, "  %-8s %s\n", (*e)->name, (*e)->summary);
	fprintf(f, "\nvramtrace help COMMAND shows a command's options; "
	    "man vramtrace is the manual.\n");
}

/* The number of options of e, --help aside. */
static int
cmd_count(const struct cmd_entry *e)
{
	int	n = 0;

	while (e->options != NULL && e->options[n].name != NULL)
		n++;
	return (n);
}

/* The option of e whose key is letter, or NULL. */
static const struct cmd_option *
cmd_option(const struct cmd_entry *e, int letter)
{
	int	i, n = cmd_count(e);

	for (i = 0; i < n; i++) {
		if (e->options[i].letter == letter)
			return (&e->options[i]);
	}
	return (NULL);
}

/*
 * Write the choices of o into buf, joined by sep, the last two by last:
 * ("|", "|") gives "text|json", (", ", " or ") "text, json or csv".
 */
static const char *
cmd_choices(const struct cmd_option *o, const char *sep, const char *last,
    char *buf, size_t len)
{
	size_t	i, used = 0;

	buf[0] = '\0';
	for (i = 0; o->choices[i] != NULL && used < len; i++) {
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
		    i == 0 ? "" : o->choices[i + 1] == NULL ? last : sep,
		    o->choices[i]);
	}
	return (buf);
}

/* Write "--name VALUE" (or "-l, --name VALUE" when short) into buf. */
static const char *
cmd_spell(const struct cmd_option *o, int short_too, char *buf, size_t len)
{
	char	 list[128];
	size_t	 used = 0;

	if (short_too && !(o->flags & CMD_LONG_ONLY))
		used = (size_t)snprintf(buf, len, "-%c, ", o->letter);
	else if (short_too)
		used = (size_t)snprintf(buf, len, "    ");
	if (o->kind == CMD_FLAG)
		snprintf(buf + used, len - used, "--%s", o->name);
	else if (o->kind == CMD_CHOICE)
		snprintf(buf + used, len - used, "--%s %s", o->name,
		    cmd_choices(o, "|", "|", list, sizeof list));
	else
		snprintf(buf + used, len - used, "--%s %s", o->name, o->value);
	return (buf);
}

/*
 * Print the n bytes of word at column *col: at once when *col is indent
 * (the start of a line), else after a space, or on a new line indented to
 * indent when it would pass CMD_WIDTH.
 */
static void
cmd_word(FILE *f, const char *word, size_t n, int indent, int *col)
{
	if (*col != indent && *col + 1 + (int)n > CMD_WIDTH) {
		fprintf(f, "\n%*s", indent, "");
		*col = indent;
	} else if (*col != indent) {
		fputc(' ', f);
		(*col)++;
	}
	fwrite(word, 1, n, f);
	*col += (int)n;
}

/* Print text's words from column col, wrapped with indent, and a newline. */
static void
cmd_wrap(FILE *f, const char *text, int indent, int col)
{
	const char	*p = text;
	size_t		 n;

	while (*p != '\0') {
		while (*p == ' ')
			p++;
		if ((n = strcspn(p, " ")) == 0)
			break;
		cmd_word(f, p, n, indent, &col);
		p += n;
	}
	fputc('\n', f);
}

/*
 * Print e's usage line: "usage: vramtrace NAME ARGS [--opt VALUE]...",
 * wrapped under its first option; a required option has no brackets, and
 * a command whose options end at its first argument (record) has them
 * last.
 */
static void
cmd_print_usage_line(FILE *f, const struct cmd_entry *e)
{
	const struct cmd_option	*o;
	char			 word[192], spelt[160];
	int			 i, n = cmd_count(e), indent, col;

	col = fprintf(f, "usage: vramtrace %s", e->name);
	indent = col + 1;
	if (!(e->flags & CMD_STOP) && e->args != NULL)
		cmd_word(f, e->args, strlen(e->args), indent, &col);
	for (i = 0; i < n; i++) {
		o = &e->options[i];
		cmd_spell(o, 0, spelt, sizeof spelt);
		snprintf(word, sizeof word, (o->flags & CMD_REQUIRED) ? "%s" :
		    "[%s]", spelt);
		cmd_word(f, word, strlen(word), indent, &col);
	}
	if ((e->flags & CMD_STOP) && e->args != NULL)
		cmd_word(f, e->args, strlen(e->args), indent, &col);
	fputc('\n', f);
}

/*
 * Print one command's help: the usage line, the summary and every option
 * with its letter, value and sentence, from the command's entry.
 */
void
cmd_print_help(FILE *f, const struct cmd_entry *e)
{
	const struct cmd_option	*o;
	char			 left[160];
	int			 i, n = cmd_count(e), width = 0, len;

	cmd_print_usage_line(f, e);
	fprintf(f, "%s\n\n", e->summary);
	for (i = 0; i <= n; i++) {
		o = i < n ? &e->options[i] : &cmd_help_option;
		len = (int)strlen(cmd_spell(o, 1, left, sizeof left));
		if (len > width && len <= CMD_LEFT)
			width = len;
	}
	for (i = 0; i <= n; i++) {
		o = i < n ? &e->options[i] : &cmd_help_option;
		len = fprintf(f, "  %s", cmd_spell(o, 1, left, sizeof left));
		if (len > width + 2)
			fprintf(f, "\n%*s", width + 4, "");
		else
			fprintf(f, "%*s", width + 4 - len, "");
		cmd_wrap(f, o->help, width + 4, width + 4);
	}
}

/*
 * Report a usage error for command e in one line, then its usage line, on
 * stderr.  Returns EXIT_USAGE for the caller to return.
 */
int
cmd_usage_error(const struct cmd_entry *e, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	fprintf(stderr, "%s: %s: ", log_program, e->name);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	cmd_print_usage_line(stderr, e);
	return (EXIT_USAGE);
}

/* Check arg against o's kind into *v.  0, or -1 after a usage error. */
static int
cmd_value(const struct cmd_entry *e, const struct cmd_option *o,
    const char *arg, uint64_t *v)
{
	uint64_t	max = o->max != 0 ? o->max : INT64_MAX;
	char		list[128];
	unsigned int	i;

	switch (o->kind) {
	case CMD_FLAG:
	case CMD_TEXT:
		return (0);
	case CMD_NUMBER:
		if (lib_parse_uint(arg, v) == 0 && *v >= o->min && *v <= max)
			return (0);
		if (o->max == 0)
			cmd_usage_error(e, "bad %s %s (a number, at least %"
			    PRIu64 ")", o->name, arg, o->min);
		else
			cmd_usage_error(e, "bad %s %s (a number from %" PRIu64
			    " to %" PRIu64 ")", o->name, arg, o->min, max);
		return (-1);
	case CMD_BYTES:
		if (lib_parse_bytes(arg, v) == 0)
			return (0);
		cmd_usage_error(e, "bad %s %s (a size such as 512KiB or 1MiB)",
		    o->name, arg);
		return (-1);
	case CMD_CHOICE:
		for (i = 0; o->choices[i] != NULL; i++) {
			if (strcmp(o->choices[i], arg) == 0) {
				*v = i;
				return (0);
			}
		}
		cmd_usage_error(e, "unknown %s %s (%s)", o->name, arg,
		    cmd_choices(o, ", ", " or ", list, sizeof list));
		return (-1);
	case CMD_LAYER:
		for (i = 0; i < EVENT_LAYER_MAX; i++) {
			if (strcmp(event_layer_name(i), arg) == 0 ||
			    (arg[0] == (char)('0' + i) && arg[1] == '\0')) {
				*v = i;
				return (0);
			}
		}
		cmd_usage_error(e, "unknown layer %s (segment, pool, block or"
		    " host)", arg);
		return (-1);
	}
	fatal("%s: option --%s of no known kind", e->name, o->name);
}

/* Build getopt_long's tables for e into shortopts and longopts. */
static void
cmd_getopt_tables(const struct cmd_entry *e, char *shortopts,
    struct option *longopts)
{
	const struct cmd_option	*o;
	int			 i, n = cmd_count(e);

	if (n > CMD_MAX_OPTIONS)
		fatal("%s: more than %d options", e->name, CMD_MAX_OPTIONS);
	if (e->flags & CMD_STOP)
		*shortopts++ = '+';
	*shortopts++ = ':';
	for (i = 0; i < n; i++) {
		o = &e->options[i];
		if (o->letter == 'h' || cmd_option(e, o->letter) != o)
			fatal("%s: option key -%c taken twice", e->name,
			    o->letter);
		longopts[i].name = o->name;
		longopts[i].has_arg = o->kind == CMD_FLAG ? no_argument :
		    required_argument;
		longopts[i].flag = NULL;
		longopts[i].val = o->letter;
		if (o->flags & CMD_LONG_ONLY)
			continue;
		*shortopts++ = (char)o->letter;
		if (o->kind != CMD_FLAG)
			*shortopts++ = ':';
	}
	longopts[n].name = cmd_help_option.name;
	longopts[n].has_arg = no_argument;
	longopts[n].flag = NULL;
	longopts[n].val = 'h';
	memset(&longopts[n + 1], 0, sizeof longopts[n + 1]);
	*shortopts++ = 'h';
	*shortopts = '\0';
}

/*
 * Parse argv (argv[0] is the command's name) against e into *a.  Returns
 * 0, 1 when help was asked for, or -1 after a usage error.
 */
static int
cmd_parse(const struct cmd_entry *e, int argc, char **argv,
    struct cmd_args *a)
{
	struct option			 longopts[CMD_MAX_OPTIONS + 2];
	char				 shortopts[3 * CMD_MAX_OPTIONS + 8];
	const struct cmd_option		*o;
	const char			*arg;
	int				 c, i, given = 0;

	memset(a, 0, sizeof *a);
	a->entry = e;
	cmd_getopt_tables(e, shortopts, longopts);
	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) !=
	    -1) {
		arg = argv[optind - 1];
		if (c == 'h')
			return (1);
		if (c == ':') {
			cmd_usage_error(e, "option %s needs a value", arg);
			return (-1);
		}
		if (c == '?') {
			if (optopt != 0 && strncmp(arg, "--", 2) == 0)
				cmd_usage_error(e, "option %s takes no value",
				    arg);
			else if (optopt != 0)
				cmd_usage_error(e, "unknown option -%c",
				    optopt);
			else
				cmd_usage_error(e, "unknown option %s", arg);
			return (-1);
		}
		o = cmd_option(e, c);
		i = (int)(o - e->options);
		a->values[i].given = ++given;
		a->values[i].text = optarg;
		if (cmd_value(e, o, optarg, &a->values[i].number) != 0)
			return (-1);
	}
	a->argc = argc - optind;
	a->argv = argv + optind;
	if (a->argc < e->lower) {
		cmd_usage_error(e, "%s", e->missing);
		return (-1);
	}
	if (e->upper >= 0 && a->argc > e->upper) {
		cmd_usage_error(e, "too many arguments");
		return (-1);
	}
	for (i = 0; i < cmd_count(e); i++) {
		o = &e->options[i];
		if ((o->flags & CMD_REQUIRED) && !a->values[i].given) {
			cmd_usage_error(e, "missing --%s %s", o->name,
			    o->value);
			return (-1);
		}
	}
	return (0);
}

/*
 * Run command e on its command line (argv[0] is its name): parse it, print
 * the help for -h or --help, and call e's exec.  Returns the exit status.
 */
int
cmd_exec(const struct cmd_entry *e, int argc, char **argv)
{
	struct cmd_args	a;

	switch (cmd_parse(e, argc, argv, &a)) {
	case 0:
		return (e->exec(e, &a));
	case 1:
		cmd_print_help(stdout, e);
		return (EXIT_OK);
	}
	return (EXIT_USAGE);
}

/* The index of the option of a's command keyed by letter; it must exist. */
static int
cmd_args_index(const struct cmd_args *a, int letter)
{
	const struct cmd_option	*o = cmd_option(a->entry, letter);

	if (o == NULL)
		fatal("%s has no option -%c", a->entry->name, letter);
	return ((int)(o - a->entry->options));
}

/*
 * Was option letter given?  0 if not, else the place (from 1) among the
 * options given of the last time it was, so that of two options the last
 * can win.
 */
int
cmd_args_has(const struct cmd_args *a, int letter)
{
	return (a->values[cmd_args_index(a, letter)].given);
}

/* The text given to option letter (the last, if several), or def. */
const char *
cmd_args_text(const struct cmd_args *a, int letter, const char *def)
{
	int	i = cmd_args_index(a, letter);

	return (a->values[i].given ? a->values[i].text : def);
}

/*
 * The value of option letter as its kind reads it (a number, a size in
 * bytes, the index of a choice, a layer's number), or def.
 */
uint64_t
cmd_args_number(const struct cmd_args *a, int letter, uint64_t def)
{
	int	i = cmd_args_index(a, letter);

	return (a->values[i].given ? a->values[i].number : def);
}

/*
 * Fill *o with the analysis defaults (leak_options_init), then with the
 * analysis options (CMD_OPTION_WARMUP, _THRESHOLD, _RUN, _LAYER) that a's
 * command has and that were given.
 */
void
cmd_args_leak(const struct cmd_args *a, struct leak_options *o)
{
	leak_options_init(o);
	if (cmd_option(a->entry, 'w') != NULL)
		o->warmup = (int)cmd_args_number(a, 'w', (uint64_t)o->warmup);
	if (cmd_option(a->entry, 't') != NULL)
		o->threshold = cmd_args_number(a, 't', o->threshold);
	if (cmd_option(a->entry, 'r') != NULL)
		o->run_id = (int64_t)cmd_args_number(a, 'r', 0);
	if (cmd_option(a->entry, 'L') != NULL && cmd_args_has(a, 'L'))
		o->layer = (int)cmd_args_number(a, 'L', 0);
}

/*
 * Report a failure whose one-line cause names the file and what is wrong,
 * free the cause and return status, for a command to return: EXIT_INPUT
 * when the input is at fault (unreadable, not a database or snapshot, no
 * such run), EXIT_ERROR for anything else (an output that cannot be
 * written).
 */
int
cmd_fail(int status, char *cause)
{
	log_warn("%s", cause);
	free(cause);
	return (status);
}

/* vramtrace help [COMMAND] */
static int
cmd_help_exec(const struct cmd_entry *self, const struct cmd_args *a)
{
	const struct cmd_entry	*e;

	(void)self;
	if (a->argc == 0) {
		cmd_print_usage(stdout);
		return (EXIT_OK);
	}
	if ((e = cmd_find(a->argv[0])) == NULL) {
		fprintf(stderr, "%s: unknown command %s\n", log_program,
		    a->argv[0]);
		cmd_print_usage(stderr);
		return (EXIT_USAGE);
	}
	cmd_print_help(stdout, e);
	return (EXIT_OK);
}
