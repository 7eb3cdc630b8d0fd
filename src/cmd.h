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

extern const struct cmd_entry cmd_import_entry;
extern const struct cmd_entry cmd_info_entry;
extern const struct cmd_entry cmd_record_entry;
extern const struct cmd_entry cmd_replay_entry;
extern const struct cmd_entry cmd_sql_entry;
extern const struct cmd_entry cmd_tui_entry;

#endif
