/*
 * cmd.h: the command table.  Each src/cmd-NAME.c defines one const struct
 * cmd_entry: its name, its positional arguments and how many it takes, and
 * its options.  cmd.c lists the entries, parses every command line against
 * its entry in one way (unknown options, missing values, values out of
 * bounds, too many or too few arguments: one line, the usage line, exit
 * 2), answers -h and --help for every command from the same table, and
 * hands exec the parsed result (struct cmd_args), in which exec looks
 * options up by letter.
 */
#ifndef CMD_H
#define CMD_H

#include <stdint.h>
#include <stdio.h>

/* What an option's value is; cmd.c checks it before exec runs. */
enum cmd_kind {
	CMD_FLAG = 0,	/* no value */
	CMD_TEXT,	/* any text */
	CMD_NUMBER,	/* a decimal number from min to max */
	CMD_BYTES,	/* a size: 4096, 512KiB, 1.5MiB (lib_parse_bytes) */
	CMD_CHOICE,	/* one of choices; its index */
	CMD_LAYER	/* segment, pool, block or host; the layer's number */
};

/* cmd_option flags */
#define CMD_LONG_ONLY	0x1	/* no -letter: the letter is only the key */
#define CMD_REQUIRED	0x2	/* the command cannot run without it */

/*
 * One option of a command.  letter is both the short option (unless
 * CMD_LONG_ONLY) and the key exec asks by; it is unique within the
 * command, and 'h' is taken by --help.
 */
struct cmd_option {
	const char		*name;		/* the long name, without -- */
	int			 letter;
	int			 flags;
	enum cmd_kind		 kind;
	const char		*value;		/* its name in usage and help */
	uint64_t		 min, max;	/* CMD_NUMBER; max 0: INT64_MAX */
	const char *const	*choices;	/* CMD_CHOICE, NULL-terminated */
	const char		*help;		/* one sentence; --help wraps it */
};

/* cmd_entry flags */
#define CMD_STOP	0x1	/* options end at the first argument (record) */

/* The most options one command has, -h and --help aside. */
#define CMD_MAX_OPTIONS	16

/* A command line parsed against its entry: what exec receives. */
struct cmd_args {
	const struct cmd_entry	*entry;
	int			 argc;		/* the positional arguments */
	char			**argv;
	struct {
		int		 given;		/* 0, or the place of its */
						/* last use, from 1 */
		const char	*text;		/* as typed */
		uint64_t	 number;	/* NUMBER, BYTES, CHOICE, LAYER */
	}			 values[CMD_MAX_OPTIONS];
};

struct cmd_entry {
	const char		*name;
	const char		*args;		/* the positional ones, for usage */
	int			 lower;		/* how many: at least */
	int			 upper;		/* at most; -1: no limit */
	const char		*missing;	/* said when fewer than lower */
	int			 flags;
	const struct cmd_option	*options;	/* a NULL name ends it */
	const char		*summary;	/* one line for the command list */
	int			(*exec)(const struct cmd_entry *,
				    const struct cmd_args *);
};

/*
 * The options every analysis command spells the same way; help is the
 * command's own sentence.  The defaults are the analysis's
 * (LEAK_DEFAULT_WARMUP, LEAK_DEFAULT_THRESHOLD in leak.h).
 */
#define CMD_OPTION_WARMUP(h) { .name = "warmup", .letter = 'w', \
	.kind = CMD_NUMBER, .value = "N", .max = 1000000, .help = h }
#define CMD_OPTION_THRESHOLD(h) { .name = "threshold", .letter = 't', \
	.kind = CMD_BYTES, .value = "BYTES", .help = h }
#define CMD_OPTION_RUN(h) { .name = "run", .letter = 'r', \
	.kind = CMD_NUMBER, .value = "ID", .min = 1, .help = h }
#define CMD_OPTION_LAYER(h) { .name = "layer", .letter = 'L', \
	.kind = CMD_LAYER, .value = "NAME", .help = h }
#define CMD_OPTION_FORMAT(list, h) { .name = "format", .letter = 'f', \
	.kind = CMD_CHOICE, .choices = list, .help = h }
#define CMD_OPTION_END { .name = NULL }

/* The offload check's differences leaks and report list. */
#define CMD_CHECK_FIRST	5

/* The options of leaks and report: what to analyse, and how. */
#define CMD_OPTIONS_LEAK(run_help) \
	CMD_OPTION_WARMUP("steps left out at the start (1)"), \
	CMD_OPTION_THRESHOLD("the growth per step that matters (default: 1% of" \
	    " the device's memory over 100000 steps)"), \
	CMD_OPTION_RUN(run_help), \
	CMD_OPTION_LAYER("segment, pool, block or host (default: block, else" \
	    " pool, else segment)")

/* What every command says of a run cut short (runs.complete is 0). */
#define CMD_UNFINISHED_NOTE "not finished: the run was cut short (killed, its" \
	" database failed, or still recording) or lacks processes record turned" \
	" away; what follows covers only what was recorded"

/* The arguments of a command that reads one database (or snapshot). */
#define CMD_ARGS_DB .args = "DB|PICKLE", .lower = 1, .upper = 1, \
	.missing = "missing database"

/* cmd.c */
const struct cmd_entry *cmd_find(const char *);
int	 cmd_exec(const struct cmd_entry *, int, char **);
void	 cmd_print_usage(FILE *);
void	 cmd_print_help(FILE *, const struct cmd_entry *);
int	 cmd_usage_error(const struct cmd_entry *, const char *, ...)
	     printflike(2, 3);
int	 cmd_args_has(const struct cmd_args *, int);
const char *cmd_args_text(const struct cmd_args *, int, const char *);
uint64_t cmd_args_number(const struct cmd_args *, int, uint64_t);
struct leak_options;
void	 cmd_args_leak(const struct cmd_args *, struct leak_options *);
int	 cmd_fail(int, char *);

extern const struct cmd_entry cmd_attach_entry;
extern const struct cmd_entry cmd_diff_entry;
extern const struct cmd_entry cmd_export_entry;
extern const struct cmd_entry cmd_history_entry;
extern const struct cmd_entry cmd_import_entry;
extern const struct cmd_entry cmd_info_entry;
extern const struct cmd_entry cmd_leaks_entry;
extern const struct cmd_entry cmd_merge_entry;
extern const struct cmd_entry cmd_record_entry;
extern const struct cmd_entry cmd_replay_entry;
extern const struct cmd_entry cmd_report_entry;
extern const struct cmd_entry cmd_sql_entry;
extern const struct cmd_entry cmd_stats_entry;
extern const struct cmd_entry cmd_tui_entry;

/* leak-print.c */
struct leak_report;
const char *leak_print_shape(const struct leak_report *, char *, size_t);
struct query;
/* A run's peak: its high-water mark, and its largest at a step end. */
struct leak_print_peak {
	int64_t		 bytes;		/* the high-water mark */
	uint64_t	 ns;		/* when; UNKNOWN_U64: unknown */
	uint64_t	 t0_ns;		/* the run's first instant */
	int64_t		 step;		/* its step; UNKNOWN_INT: unknown */
	int64_t		 end_bytes;	/* the largest at a step end */
	int64_t		 end_step;	/* that step; UNKNOWN_INT: none */
};
int	 leak_print_peak_read(struct query *, const struct leak_report *,
	     struct leak_print_peak *, char **);
void	 leak_print_peak(FILE *, const char *, const struct leak_print_peak *);
void	 leak_print_peak_json(FILE *, const struct leak_print_peak *);
void	 leak_print_verdict(FILE *, const char *, const struct leak_report *);
void	 leak_print_history(FILE *, const char *, const struct leak_report *);
void	 leak_print_streams(FILE *, const struct leak_report *, size_t);
void	 leak_print_suspects(FILE *, const struct leak_report *, size_t);
void	 leak_print_suspects_json(FILE *, const struct leak_report *, size_t);
void	 leak_print_ranks(FILE *, const struct leak_report *);

#endif
