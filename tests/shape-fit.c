/*
 * shape-fit.c: the shape model (src/leak-shape.c) on one series, for
 * tests/t-zoo.sh and bench/zoo.py until `vramtrace leaks` uses it.
 *
 * usage: shape-fit [-w WARMUP] [-d DEVICE_BYTES] [-h HORIZON]
 *        [-t THRESHOLD] <SERIES
 *
 * SERIES is the live bytes at each step end, one integer per line (or
 * separated by blanks).  Prints one JSON object: the verdict, the shape,
 * the period, the onset as a step number (the first step is 1), the rate
 * and its bound, and the projection.
 */
#include "config.h"

#include "vramtrace.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "leak.h"

int
main(int argc, char **argv)
{
	struct leak_shape_params	 p;
	struct leak_shape_result	 r;
	int64_t				*v = NULL, x;
	size_t				 n = 0, alloc = 0;
	int				 ch;

	leak_shape_defaults(&p);
	while ((ch = getopt(argc, argv, "w:d:h:t:")) != -1) {
		switch (ch) {
		case 'w':
			p.warmup = atoi(optarg);
			break;
		case 'd':
			p.device_bytes = strtoull(optarg, NULL, 10);
			break;
		case 'h':
			p.horizon = strtoll(optarg, NULL, 10);
			break;
		case 't':
			p.threshold = strtoull(optarg, NULL, 10);
			break;
		default:
			fprintf(stderr, "usage: shape-fit [-w WARMUP] [-d DEVICE]"
			    " [-h HORIZON] [-t THRESHOLD] <SERIES\n");
			return (2);
		}
	}
	while (scanf("%" SCNd64, &x) == 1) {
		if (n == alloc) {
			alloc = alloc == 0 ? 1024 : 2 * alloc;
			v = xreallocarray(v, alloc, sizeof *v);
		}
		v[n++] = x;
	}
	leak_shape_fit(v, n, &p, &r);
	printf("{\"verdict\": \"%s\", \"shape\": \"%s\", \"period\": %" PRId64
	    ", \"onset_step\": %" PRId64 ", \"growth_bytes_per_step\": %.1f, "
	    "\"growth_upper\": %.1f, \"p_value\": %.3g, \"window\": %" PRId64
	    ", \"windows\": %" PRId64 ", \"rises\": %" PRId64
	    ", \"kept_bytes\": %" PRId64 ", \"min_rate\": %.1f, \"horizon_bytes\": %.0f, "
	    "\"projected_bytes\": %.0f, \"steps_to_full\": %" PRId64
	    ", \"reason\": ", leak_verdict_name(r.verdict),
	    leak_shape_name(r.shape), r.period, r.onset >= 0 ? r.onset + 1 :
	    -1, r.growth_bytes_per_step, r.growth_upper, r.p_value, r.window,
	    r.windows, r.rises, r.kept_bytes, r.min_rate,
	    r.horizon_bytes, r.projected_bytes, r.steps_to_full);
	json_string(stdout, r.reason);
	printf("}\n");
	free(v);
	return (0);
}
