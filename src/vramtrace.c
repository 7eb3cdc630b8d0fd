/*
 * vramtrace.c: main(): global options and dispatch to a command.
 */
#include "config.h"

#include "vramtrace.h"

#include <locale.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "unwrap.h"

int
main(int argc, char **argv)
{
	const struct cmd_entry	*e;

	/*
	 * Nothing here reads SQLite's memory statistics, and keeping them
	 * takes a mutex on every allocation: an import runs 8% faster
	 * without (bench/import.sh).  Before SQLite is first used.
	 */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	setlocale(LC_ALL, "");
	if (argc < 2) {
		cmd_print_usage(stderr);
		return (EXIT_USAGE);
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		cmd_print_usage(stdout);
		return (EXIT_OK);
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
		printf("vramtrace %s (event encoding %d, schema %d;"
		    " snapshots unpacked from %s)\n", PACKAGE_VERSION,
		    EVENT_VERSION, STORE_SCHEMA_VERSION, unwrap_formats());
		return (EXIT_OK);
	}
	if (argv[1][0] == '-') {
		fprintf(stderr, "%s: unknown option %s\n", log_program,
		    argv[1]);
		cmd_print_usage(stderr);
		return (EXIT_USAGE);
	}
	if ((e = cmd_find(argv[1])) == NULL) {
		fprintf(stderr, "%s: unknown command %s\n", log_program,
		    argv[1]);
		cmd_print_usage(stderr);
		return (EXIT_USAGE);
	}
	return (cmd_exec(e, argc - 1, argv + 1));
}
