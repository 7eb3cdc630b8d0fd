/*
 * t-leak.c: the pure leak logic (leak.c) on made-up numbers: the verdicts
 * through the shape model and the threshold it scales, the default stream,
 * the three garbage kinds and what is never garbage, which garbage fails,
 * and how a report finds or adds a stream.  The model itself is checked in
 * t-leak-shape.c, the verdicts on real runs in t-zoo.sh.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vramtrace.h"
#include "leak.h"
#include "tap.h"

#define MiB	(1024 * 1024)
#define TESTS	40

/* A report of n steps with a total series and nstreams empty streams. */
static struct leak_report *
report(const int64_t *total, size_t n, size_t nstreams)
{
	struct leak_report	*r;
	size_t			 i;

	r = xcalloc(1, sizeof *r);
	r->warmup = 1;
	r->nsteps = n;
	r->steps = xcalloc(n + 1, sizeof *r->steps);
	for (i = 0; i < n; i++) {
		r->steps[i].step = (int64_t)i + 1;
		r->steps[i].live_bytes = total[i];
	}
	r->nstreams = nstreams;
	r->streams = xcalloc(nstreams, sizeof *r->streams);
	for (i = 0; i < nstreams; i++) {
		r->streams[i].stream = 100 + i;
		r->streams[i].created_ns = UNKNOWN_U64;
		r->streams[i].destroyed_ns = UNKNOWN_U64;
		r->streams[i].live_per_step = xcalloc(n + 1, sizeof(int64_t));
	}
	return (r);
}

static void
series(struct leak_stream *s, const int64_t *v, size_t n)
{
	memcpy(s->live_per_step, v, n * sizeof *v);
	s->live_bytes = n > 0 ? v[n - 1] : 0;
}

/* A report's streams: one per (device, stream), each with a zero series. */
static void
report_stream(void)
{
	static const int64_t	 total[] = { 1, 2, 3 };
	struct leak_report	*r;
	struct leak_stream	*s;

	r = report(total, 3, 1);
	s = leak_report_stream(r, 0, 100);
	tap_ok(s == &r->streams[0] && r->nstreams == 1,
	    "an existing stream is found, not added");
	s = leak_report_stream(r, 1, 100);
	tap_ok(r->nstreams == 2 && s->device == 1 && s->stream == 100 &&
	    s->live_per_step[0] == 0 && s->live_per_step[2] == 0,
	    "another device's stream is added, with zero live bytes");
	tap_ok(leak_report_stream(r, 1, 100) == &r->streams[1] &&
	    leak_report_stream(r, 0, EVENT_NONE) == &r->streams[2],
	    "then found; an unknown stream is one more");
	leak_report_free(r);
}

/* The skew of ranks: the fastest against the median. */
static void
rank_skew(void)
{
	struct leak_rank	ranks[3];
	struct leak_skew	sk;

	memset(ranks, 0, sizeof ranks);
	ranks[0].growth_bytes_per_step = 0;
	ranks[1].growth_bytes_per_step = 8 * MiB;
	ranks[2].growth_bytes_per_step = 2 * MiB;
	leak_skew(ranks, 3, &sk);
	tap_ok(sk.worst == 1 && sk.median_growth_bytes_per_step == 2 * MiB &&
	    sk.ratio == 4, "skew: the worst of 3 ranks is 4 times the median");
	leak_skew(ranks, 2, &sk);
	tap_ok(sk.worst == 1 && sk.median_growth_bytes_per_step == 4 * MiB &&
	    sk.ratio == 2, "2 ranks: the median is their mean");
	ranks[1].growth_bytes_per_step = 0;
	leak_skew(ranks, 2, &sk);
	tap_ok(sk.worst == 0 && isnan(sk.ratio), "no growth: no ratio");
}

int
main(void)
{
	static const int64_t	 line[] = { 10, 20, 30, 40, 50 };
	static const int64_t	 spike[] = { 10, 20, 1000, 40, 50 };
	static const int64_t	 flat[] = { 5, 5, 5, 5, 5 };
	static const int64_t	 leak[] = { 100 * MiB, 110 * MiB, 120 * MiB,
				    130 * MiB, 140 * MiB, 150 * MiB };
	static const int64_t	 side[] = { 0, 10 * MiB, 20 * MiB, 30 * MiB,
				    40 * MiB, 50 * MiB };
	static const int64_t	 saw[] = { 100 * MiB, 400 * MiB, 100 * MiB,
				    400 * MiB, 100 * MiB, 400 * MiB, 100 * MiB,
				    400 * MiB };
	struct leak_report	*r;
	struct leak_stream	*s;

	tap_plan(TESTS);

	tap_ok(leak_grew_fraction(line, 5) == 1, "a line grew every step");
	tap_ok(fabs(leak_grew_fraction(spike, 5) - 0.75) < 1e-9,
	    "3 of 4 steps grew with the spike");
	tap_ok(leak_grew_fraction(flat, 5) == 0, "flat never grew");

	/* A leak on a side stream; stream 0 is the known default. */
	r = report(leak, 6, 2);
	r->streams[0].stream = 0;
	r->streams[0].is_default = r->streams[0].default_known = 1;
	series(&r->streams[0], (const int64_t[]){ 100 * MiB, 100 * MiB,
	    100 * MiB, 100 * MiB, 100 * MiB, 100 * MiB }, 6);
	series(&r->streams[1], side, 6);
	r->streams[1].new_live_bytes = 40 * MiB;
	r->streams[1].new_live_blocks = 4;
	leak_analyse(r);
	tap_eq(r->verdict, LEAK_LEAK, "10 MiB per step: LEAK");
	tap_ok(r->growth_bytes_per_step == 10 * MiB, "growth 10 MiB per step");
	tap_ok(r->shape.shape == LEAK_SHAPE_STEADY && r->shape.period == 1 &&
	    leak_report_onset(r) == 2, "steady, every step from step 2");
	tap_ok(r->shape.horizon == LEAK_SHAPE_HORIZON &&
	    r->shape.projected_bytes == 150.0 * MiB + 1e5 * 10 * MiB,
	    "projected over the horizon from the last step");
	tap_eq(r->threshold, (uint64_t)ceil((double)LEAK_SHAPE_MIN_GROWTH /
	    LEAK_SHAPE_HORIZON), "device unknown: the threshold is 1 GiB "
	    "over the horizon");
	tap_eq(r->steps_analysed, 5, "5 steps after a warm-up of 1");
	tap_eq(r->steps[2].delta_bytes, 10 * MiB, "the change of step 3");
	tap_eq(r->peak_bytes, 150 * MiB, "the peak");
	tap_eq(r->streams[1].garbage, LEAK_GARBAGE_GROWING,
	    "the side stream is growing garbage");
	tap_eq(r->streams[1].garbage_bytes, 40 * MiB,
	    "...with the bytes made after the warm-up");
	tap_eq(r->streams[0].garbage, LEAK_GARBAGE_NONE,
	    "the default stream is not garbage");
	tap_eq(r->top_stream, 1, "the side stream is named");
	tap_ok(r->streams[1].verdict == LEAK_LEAK &&
	    r->streams[0].verdict == LEAK_CLEAN, "each stream's verdict");
	tap_ok(leak_garbage_fails(r), "growing garbage fails");
	leak_report_free(r);

	/* What matters: a threshold given, or the device's memory. */
	r = report(leak, 6, 0);
	r->threshold = 20 * MiB;
	leak_analyse(r);
	tap_ok(r->verdict == LEAK_CLEAN && r->shape.shape == LEAK_SHAPE_STEADY
	    && r->reason != NULL && r->threshold == 20 * MiB,
	    "under a threshold given: CLEAN, steady, said why");
	leak_report_free(r);
	r = report(line, 5, 0);
	r->device_bytes = (uint64_t)80 << 30;
	leak_analyse(r);
	tap_ok(r->verdict == LEAK_CLEAN && r->threshold == (uint64_t)ceil(
	    0.01 * (double)((uint64_t)80 << 30) / LEAK_SHAPE_HORIZON),
	    "10 B per step on 80 GiB: CLEAN, the threshold 1%% of it over the "
	    "horizon");
	leak_report_free(r);
	r = report(saw, 8, 0);
	r->warmup = 0;
	leak_analyse(r);
	tap_ok(r->verdict == LEAK_CLEAN && r->shape.shape ==
	    LEAK_SHAPE_BOUNDED && r->shape.period == 2 &&
	    r->grew_fraction > 0.5, "a saw back to its base every 2 steps: "
	    "CLEAN, bounded, though most steps grew");
	leak_report_free(r);

	/* Too few steps, or none. */
	r = report(leak, 3, 0);
	leak_analyse(r);
	tap_eq(r->verdict, LEAK_INCONCLUSIVE, "2 steps after warm-up: "
	    "INCONCLUSIVE");
	leak_report_free(r);
	r = report(leak, 0, 0);
	leak_analyse(r);
	tap_ok(r->verdict == LEAK_INCONCLUSIVE &&
	    strcmp(r->reason, LEAK_NO_STEPS_RECORD) == 0, "no steps: "
	    "INCONCLUSIVE, said why");
	leak_report_free(r);
	r = report(leak, 0, 0);
	r->imported = 1;
	leak_analyse(r);
	tap_ok(r->verdict == LEAK_INCONCLUSIVE &&
	    strcmp(r->reason, LEAK_NO_STEPS_IMPORT) == 0, "no steps in a "
	    "snapshot: INCONCLUSIVE, the import's options said");
	leak_report_free(r);

	/* No known default: the stream with the most bytes is the main one. */
	r = report(flat, 5, 2);
	r->streams[0].alloc_bytes = 10;
	r->streams[1].alloc_bytes = 20;
	leak_analyse(r);
	tap_ok(!r->streams[0].is_default && r->streams[1].is_default,
	    "the stream with the most bytes is the default");
	leak_report_free(r);

	/* Destroyed with blocks left; stranded cache on an idle stream. */
	r = report(flat, 5, 4);
	r->streams[0].is_default = r->streams[0].default_known = 1;
	s = &r->streams[1];
	s->destroyed_ns = 1234;
	s->unfreed_bytes = 4096;
	s->unfreed_blocks = 2;
	s = &r->streams[2];
	s->last_alloc_step = 2;
	s->segment_bytes = 2 * MiB;
	s->segment_blocks = 1;
	/* Synchronous cudaMalloc: no stream, held since step 1. */
	s = &r->streams[3];
	s->stream = UNKNOWN_U64;
	s->last_alloc_step = 1;
	s->unfreed_bytes = s->segment_bytes = 64 * MiB;
	s->unfreed_blocks = s->segment_blocks = 3;
	leak_analyse(r);
	tap_eq(r->verdict, LEAK_CLEAN, "flat: CLEAN");
	tap_eq(r->streams[1].garbage, LEAK_GARBAGE_DESTROYED,
	    "a destroyed stream holding blocks");
	tap_eq(r->streams[1].garbage_blocks, 2, "...with its blocks");
	tap_ok(leak_garbage_fails(r), "...which fails");
	tap_eq(r->streams[2].garbage, LEAK_GARBAGE_STRANDED,
	    "cached segments on a stream idle for 3 steps are stranded");
	tap_eq(r->streams[2].garbage_bytes, 2 * MiB, "...with their bytes");
	tap_eq(r->streams[3].garbage, LEAK_GARBAGE_NONE,
	    "segments with no stream (cudaMalloc) are not garbage");
	r->streams[1].destroyed_ns = UNKNOWN_U64;
	leak_analyse(r);
	tap_ok(r->streams[2].garbage == LEAK_GARBAGE_STRANDED &&
	    !leak_garbage_fails(r), "a stranded cache alone does not fail");
	r->streams[2].last_alloc_step = 3;
	leak_analyse(r);
	tap_eq(r->streams[2].garbage, LEAK_GARBAGE_NONE,
	    "idle for only 2 steps: not stranded");
	leak_report_free(r);

	rank_skew();
	report_stream();

	tap_ok(strcmp(leak_garbage_name(LEAK_GARBAGE_GROWING), "growing") == 0
	    && leak_garbage_name(LEAK_GARBAGE_NONE) == NULL &&
	    strcmp(leak_verdict_name(LEAK_LEAK), "LEAK") == 0, "names");
	return (tap_done());
}
