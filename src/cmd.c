/*
 * cmd.c: the command table, lookup, usage and option parsing shared by
 * the commands.  Adding a command: one src/cmd-NAME.c, one line here, one
 * entry in the manual.
 */
#include "config.h"

#include "vramtrace.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "cmd.h"

static const struct cmd_entry cmd_help_entry = {
	"help", "[COMMAND]", "show the usage of vramtrace or of one command",
	NULL, cmd_run_help
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
	&cmd_tui_entry,
	NULL
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

/* Print one command's usage line and options. */
void
cmd_print_help(FILE *f, const struct cmd_entry *e)
{
	fprintf(f, "usage: vramtrace %s %s\n", e->name, e->usage);
	fprintf(f, "%s\n", e->summary);
	if (e->help != NULL)
		fprintf(f, "\n%s", e->help);
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
	fprintf(stderr, "usage: vramtrace %s %s\n", e->name, e->usage);
	return (EXIT_USAGE);
}

/*
 * getopt_long for a command, with its errors reported our way: returns the
 * option, -1 at the end, or '?' after printing the usage error (the caller
 * returns EXIT_USAGE).  --help is handled by the caller as 'h'.
 */
int
cmd_getopt(const struct cmd_entry *e, int argc, char **argv,
    const char *shortopts, const struct option *longopts, int *index,
    const char **optarg_out)
{
	int	c;

	opterr = 0;
	c = getopt_long(argc, argv, shortopts, longopts, index);
	*optarg_out = optarg;
	if (c == '?') {
		if (optopt != 0 && strchr(shortopts, optopt) != NULL)
			cmd_usage_error(e, "option %s needs a value",
			    argv[optind - 1]);
		else if (optopt != 0)
			cmd_usage_error(e, "unknown option -%c", optopt);
		else
			cmd_usage_error(e, "unknown option %s",
			    argv[optind - 1]);
	}
	return (c);
}

/*
 * Return the index of value in the NULL-terminated list of formats, or -1
 * after printing a usage error.
 */
int
cmd_parse_format(const struct cmd_entry *e, const char *value,
    const char *const *formats)
{
	int	i;

	for (i = 0; formats[i] != NULL; i++) {
		if (strcmp(formats[i], value) == 0)
			return (i);
	}
	cmd_usage_error(e, "unknown format %s", value);
	return (-1);
}

/*
 * Report a failure whose one-line cause names the file and what is wrong,
 * free the cause and return EXIT_FOUND, for a command to return.
 */
int
cmd_fail(char *cause)
{
	log_warn("%s", cause);
	free(cause);
	return (EXIT_FOUND);
}

/* vramtrace help [COMMAND] */
int
cmd_run_help(const struct cmd_entry *self, int argc, char **argv)
{
	const struct cmd_entry	*e;

	if (argc > 2)
		return (cmd_usage_error(self, "too many arguments"));
	if (argc < 2) {
		cmd_print_usage(stdout);
		return (EXIT_OK);
	}
	if ((e = cmd_find(argv[1])) == NULL) {
		fprintf(stderr, "%s: unknown command %s\n", log_program,
		    argv[1]);
		cmd_print_usage(stderr);
		return (EXIT_USAGE);
	}
	cmd_print_help(stdout, e);
	return (EXIT_OK);
}

/* Fill *o with the defaults of the analysis options. */
void
cmd_leak_defaults(struct leak_options *o)
{
	leak_options_init(o);
}

/* The number of a layer given by name or number, or -1. */
int
cmd_layer_number(const char *name)
{
	unsigned int	i;

	for (i = 0; i < EVENT_LAYER_MAX; i++) {
		if (strcmp(event_layer_name(i), name) == 0 ||
		    (name[0] == (char)('0' + i) && name[1] == '\0'))
			return ((int)i);
	}
	return (-1);
}

/*
 * Take one of the analysis options (CMD_LEAK_SHORTOPTS) into *o.  Returns
 * 0, 1 when c is not one of them, or -1 after printing a usage error.
 */
int
cmd_leak_option(const struct cmd_entry *e, int c, const char *arg,
    struct leak_options *o)
{
	uint64_t	v;

	switch (c) {
	case 'w':
		if (lib_parse_uint(arg, &v) != 0 || v > 1000000) {
			cmd_usage_error(e, "bad warm-up %s", arg);
			return (-1);
		}
		o->warmup = (int)v;
		return (0);
	case 't':
		if (lib_parse_bytes(arg, &o->threshold) != 0) {
			cmd_usage_error(e, "bad threshold %s", arg);
			return (-1);
		}
		return (0);
	case 'r':
		if (lib_parse_uint(arg, &v) != 0 || v == 0 ||
		    v > INT64_MAX) {
			cmd_usage_error(e, "bad run id %s", arg);
			return (-1);
		}
		o->run_id = (int64_t)v;
		return (0);
	case 'L':
		if ((o->layer = cmd_layer_number(arg)) < 0) {
			cmd_usage_error(e, "unknown layer %s", arg);
			return (-1);
		}
		return (0);
	}
	return (1);
}

/*
 * Parse the command line of an analysis command: the analysis options (of
 * CMD_LEAK_SHORTOPTS, those in shortopts) into *o after its defaults, -f
 * into *format (an index into formats; 0 by default), option letter flag
 * (0: none) into *flagged, and exactly one database argument.  Returns the
 * database argument's index in argv, or -1 after printing a usage error
 * (the caller returns EXIT_USAGE).
 */
int
cmd_analysis_args(const struct cmd_entry *e, int argc, char **argv,
    const char *shortopts, const struct option *longopts,
    const char *const *formats, int flag, struct leak_options *o,
    int *format, int *flagged)
{
	const char	*arg;
	int		 c, rc;

	cmd_leak_defaults(o);
	*format = *flagged = 0;
	while ((c = cmd_getopt(e, argc, argv, shortopts, longopts, NULL,
	    &arg)) != -1) {
		if ((rc = cmd_leak_option(e, c, arg, o)) < 0)
			return (-1);
		if (rc == 0)
			continue;
		if (c == 'f') {
			if ((*format = cmd_parse_format(e, arg, formats)) < 0)
				return (-1);
		} else if (flag != 0 && c == flag)
			*flagged = 1;
		else
			return (-1);
	}
	if (optind != argc - 1) {
		cmd_usage_error(e, optind >= argc ? "missing database" :
		    "too many arguments");
		return (-1);
	}
	return (optind);
}
