/*
 * cmd.h: the command table's entries.  Each src/cmd-NAME.c defines one
 * const struct cmd_entry; cmd.c lists them.
 */
#ifndef CMD_H
#define CMD_H

struct cmd_entry {
	const char	*name;
	const char	*usage;		/* the arguments, after the name */
	const char	*summary;	/* one line for --help */
	const char	*help;		/* the options, one per line */
	int		(*exec)(const struct cmd_entry *, int, char **);
};

/* cmd.c */
const struct cmd_entry *cmd_find(const char *);
void	 cmd_print_usage(FILE *);
void	 cmd_print_help(FILE *, const struct cmd_entry *);
int	 cmd_usage_error(const struct cmd_entry *, const char *, ...)
	     printflike(2, 3);
int	 cmd_getopt(const struct cmd_entry *, int, char **, const char *,
	     const struct option *, int *, const char **);
int	 cmd_parse_format(const struct cmd_entry *, const char *,
	     const char *const *);
int	 cmd_run_help(const struct cmd_entry *, int, char **);
int	 cmd_fail(char *);
struct leak_options;
void	 cmd_leak_defaults(struct leak_options *);
int	 cmd_leak_option(const struct cmd_entry *, int, const char *,
	     struct leak_options *);
int	 cmd_analysis_args(const struct cmd_entry *, int, char **,
	     const char *, const struct option *, const char *const *, int,
	     struct leak_options *, int *, int *);
int	 cmd_layer_number(const char *);
#define CMD_LEAK_SHORTOPTS	"w:t:r:L:"
#define CMD_LEAK_LONGOPTS \
	{ "warmup", required_argument, NULL, 'w' }, \
	{ "threshold", required_argument, NULL, 't' }, \
	{ "run", required_argument, NULL, 'r' }, \
	{ "layer", required_argument, NULL, 'L' }
#define CMD_LEAK_HELP \
	"  -w, --warmup N       steps left out at the start (1)\n" \
	"  -t, --threshold B    growth per step that is a leak (1MiB)\n" \
	"  -r, --run ID         the run to analyse (the newest)\n" \
	"  -L, --layer NAME     segment, pool, block or host (block, else\n" \
	"                       pool, else segment)\n"

extern const struct cmd_entry cmd_attach_entry;
extern const struct cmd_entry cmd_export_entry;
extern const struct cmd_entry cmd_history_entry;
extern const struct cmd_entry cmd_import_entry;
/* leak-print.c */
struct leak_report;
void	 leak_print_verdict(FILE *, const char *, const struct leak_report *);
void	 leak_print_streams(FILE *, const struct leak_report *, size_t);
void	 leak_print_suspects(FILE *, const struct leak_report *, size_t);
void	 leak_print_ranks(FILE *, const struct leak_report *);

extern const struct cmd_entry cmd_diff_entry;
extern const struct cmd_entry cmd_info_entry;
extern const struct cmd_entry cmd_leaks_entry;
extern const struct cmd_entry cmd_merge_entry;
extern const struct cmd_entry cmd_record_entry;
extern const struct cmd_entry cmd_replay_entry;
extern const struct cmd_entry cmd_report_entry;
extern const struct cmd_entry cmd_sql_entry;
extern const struct cmd_entry cmd_tui_entry;

#endif
