/*
 * cmd-info.c: vramtrace info DB: what a database holds, or one of its runs
 * (--run).
 */
#include "config.h"

#include "vramtrace.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>

#include "analysis.h"
#include "cmd.h"

static int	cmd_info_exec(const struct cmd_entry *, int, char **);

const struct cmd_entry cmd_info_entry = {
	"info", "DB|PICKLE [--run ID] [--format text|json]",
	"show the schema version and what a database holds",
	"  -r, --run ID       count only what run ID holds (default: the whole\n"
	"                     database)\n"
	"  -f, --format FMT   text (default) or json\n",
	cmd_info_exec
};

static const char *const formats[] = { "text", "json", NULL };

static void
print_json(int64_t run_id, const struct query_info *in)
{
	printf("{\"run\": ");
	json_int_or_null(stdout, run_id, run_id != 0);
	printf(", \"schema_version\": %d, \"runs\": %" PRId64
	    ", \"incomplete_runs\": %" PRId64 ", \"processes\": %" PRId64
	    ", \"devices\": %" PRId64 ", \"streams\": %" PRId64
	    ", \"steps\": %" PRId64 ", \"allocations\": %" PRId64
	    ", \"memcpys\": %" PRId64 ", \"offload_events\": %" PRId64
	    ", \"marks\": %" PRId64 ", \"sites\": %" PRId64
	    ", \"snapshots\": %" PRId64 ", \"segments\": %" PRId64
	    ", \"blocks\": %" PRId64 ", \"trace_entries\": %" PRId64
	    ", \"dropped_records\": %" PRId64 "}\n",
	    in->schema_version, in->runs, in->incomplete_runs, in->processes,
	    in->devices, in->streams, in->steps, in->allocations, in->memcpys,
	    in->offload_events, in->marks, in->sites, in->snapshots,
	    in->segments, in->blocks, in->trace_entries,
	    in->dropped_records);
}

static void
print_text(const char *path, int64_t run_id, const struct query_info *in)
{
	printf("%s: vramtrace database, schema version %d\n", path,
	    in->schema_version);
	if (run_id != 0)
		printf("  counts of run   %" PRId64 "\n", run_id);
	printf("  runs            %" PRId64, in->runs);
	if (in->incomplete_runs > 0)
		printf(" (%" PRId64 " not finished)", in->incomplete_runs);
	printf("\n");
	printf("  processes       %" PRId64 "\n", in->processes);
	printf("  devices         %" PRId64 "\n", in->devices);
	printf("  streams         %" PRId64 "\n", in->streams);
	printf("  steps           %" PRId64 "\n", in->steps);
	printf("  allocations     %" PRId64 "\n", in->allocations);
	printf("  memcpys         %" PRId64 "\n", in->memcpys);
	printf("  offload events  %" PRId64 "\n", in->offload_events);
	printf("  marks           %" PRId64 "\n", in->marks);
	printf("  sites           %" PRId64 "\n", in->sites);
	printf("  snapshots       %" PRId64 "\n", in->snapshots);
	printf("  segments        %" PRId64 "\n", in->segments);
	printf("  blocks          %" PRId64 "\n", in->blocks);
	printf("  trace entries   %" PRId64 "\n", in->trace_entries);
	printf("  dropped records %" PRId64 "\n", in->dropped_records);
}

static int
cmd_info_exec(const struct cmd_entry *self, int argc, char **argv)
{
	static const struct option	 longopts[] = {
		{ "run", required_argument, NULL, 'r' },
		{ "format", required_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 }
	};
	struct leak_options		 opts;
	struct query_info		 info;
	struct query			*q;
	const char			*arg;
	char				*cause = NULL;
	int				 c, format = 0;

	cmd_leak_defaults(&opts);
	while ((c = cmd_getopt(self, argc, argv, "r:f:", longopts, NULL,
	    &arg)) != -1) {
		switch (c) {
		case 'r':
			if (cmd_leak_option(self, c, arg, &opts) != 0)
				return (EXIT_USAGE);
			break;
		case 'f':
			if ((format = cmd_parse_format(self, arg, formats)) < 0)
				return (EXIT_USAGE);
			break;
		default:
			return (EXIT_USAGE);
		}
	}
	if (optind != argc - 1)
		return (cmd_usage_error(self, optind >= argc ?
		    "missing database" : "too many arguments"));
	if ((q = input_open(argv[optind], &cause)) == NULL)
		return (cmd_fail(cause));
	if (query_info(q, opts.run_id, &info, &cause) == 0 &&
	    opts.run_id != 0 && info.runs == 0)
		xasprintf(&cause, "%s: no run %" PRId64, argv[optind],
		    opts.run_id);
	if (cause != NULL) {
		query_close(q);
		return (cmd_fail(cause));
	}
	if (format == 1)
		print_json(opts.run_id, &info);
	else
		print_text(argv[optind], opts.run_id, &info);
	query_close(q);
	return (EXIT_OK);
}
