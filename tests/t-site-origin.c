/*
 * t-site-origin.c: which frames name a stack (site-origin.c) and the name
 * a leak suspect is printed with (leak_suspect_name): the kinds of frame
 * (program, library, native) on file names as PyTorch snapshots and
 * recordings write them, the origin, its caller and the library's frame
 * within it on stacks of each kind (Python only, with C++ frames as
 * stacks="all" gives them, a program installed as a package, no Python),
 * and the short form of a label.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "vramtrace.h"
#include "leak.h"
#include "site-origin.h"
#include "tap.h"

static const struct {
	const char		*filename;
	enum site_frame_kind	 kind;
} kinds[] = {
	{ "train.py", SITE_FRAME_PROGRAM },
	{ "/home/me/proj/model.py", SITE_FRAME_PROGRAM },
	{ "<stdin>", SITE_FRAME_PROGRAM },
	{ "<ipython-input-3-0a1b2c>", SITE_FRAME_PROGRAM },
	{ "/tmp/ipykernel_41/123456.py", SITE_FRAME_PROGRAM },
	{ "site-packages/torch/nn/functional.py", SITE_FRAME_LIBRARY },
	{ "/opt/venv/lib/python3.12/site-packages/torch/nn/functional.py",
	    SITE_FRAME_LIBRARY },
	{ "/usr/lib/python3/dist-packages/numpy/core/numeric.py",
	    SITE_FRAME_LIBRARY },
	{ "/usr/lib/python3.12/contextlib.py", SITE_FRAME_LIBRARY },
	{ "/opt/conda/lib/pypy3.10/threading.py", SITE_FRAME_LIBRARY },
	{ "<frozen runpy>", SITE_FRAME_LIBRARY },
	{ "<eval_with_key>.4", SITE_FRAME_LIBRARY },
	{ "/tmp/torchinductor_me/ab/cab12.py", SITE_FRAME_LIBRARY },
	{ "??", SITE_FRAME_NATIVE },
	{ "", SITE_FRAME_NATIVE },
	{ "memory_snapshot.cpp", SITE_FRAME_NATIVE },
	{ "/usr/lib/x86_64-linux-gnu/libcuda.so.1", SITE_FRAME_NATIVE },
	{ "<unknown>", SITE_FRAME_NATIVE },
	{ "a.py.bak", SITE_FRAME_NATIVE },
	{ NULL, SITE_FRAME_NATIVE },
};

#define F(file, line, name)	{ file, line, name }
#define TORCH			"/v/lib/python3.12/site-packages/torch/"

/* A graph kept by an evaluation: activations made inside torch. */
static const struct site_frame graph[] = {
	F(TORCH "nn/functional.py", 1723, "relu"),
	F(TORCH "nn/modules/module.py", 1790, "_call_impl"),
	F("/w/zoo.py", 98, "forward"),
	F(TORCH "nn/modules/module.py", 1779, "_wrapped_call_impl"),
	F("/w/zoo.py", 144, "evaluation_loss"),
	F("/w/zoo.py", 240, "main"),
	F("/w/zoo.py", 292, "<module>"),
};

/* stacks="all": PyTorch's C++ frames inside the Python ones. */
static const struct site_frame all[] = {
	F("??", 0, "torch::unwind::unwind()"),
	F("memory_snapshot.cpp", 0, "gather_with_cpp()"),
	F("CUDACachingAllocator.cpp", 0, "malloc"),
	F("", 0, "at::empty_like"),
	F("train.py", 51, "unpack"),
	F("train.py", 80, "main"),
};

/* An engine installed as a package, called from autograd's C++. */
static const struct site_frame engine[] = {
	F("site-packages/trl/models/activation_offloading.py", 412,
	    "unpack_tensor"),
	F("??", 0, "torch::autograd::Engine::execute"),
	F("site-packages/torch/autograd/graph.py", 829,
	    "_engine_run_backward"),
	F("train.py", 90, "main"),
};

/* A program installed as a package: nothing is the program's. */
static const struct site_frame installed[] = {
	F("site-packages/mytrainer/loop.py", 12, "step"),
	F("site-packages/mytrainer/cli.py", 3, "main"),
};

/* A native stack of a recording. */
static const struct site_frame native[] = {
	F("/usr/lib/libcudart.so.13", 0, "cudaMalloc"),
	F("/w/a.out", 0, "main"),
};

static void
check_origin(const char *what, const struct site_frame *frames, size_t n,
    long origin, long caller, long within)
{
	struct site_origin	o;

	site_origin_find(frames, n, &o);
	if (!tap_ok(o.origin == origin && o.caller == caller &&
	    o.within == within, "%s: origin %ld, caller %ld, within %ld",
	    what, origin, caller, within))
		printf("# got %ld %ld %ld\n", o.origin, o.caller, o.within);
}

static char *
label_at(const struct site_frame *frames, long i)
{
	return (i >= 0 ? site_frame_label(frames[i].filename, frames[i].line,
	    frames[i].name) : NULL);
}

/* Suspect with the labels of frames[origin, caller, within] named name. */
static void
check_name(const char *label, const struct site_frame *frames, size_t n,
    const char *want)
{
	struct leak_suspect	x;
	struct site_origin	o;
	char			*name;

	memset(&x, 0, sizeof x);
	x.site = (char *)label;
	site_origin_find(frames, n, &o);
	x.origin = label_at(frames, o.origin);
	x.caller = label_at(frames, o.caller);
	x.within = label_at(frames, o.within);
	name = leak_suspect_name(&x);
	if (!tap_ok(strcmp(name, want) == 0, "suspect named \"%s\"", want))
		printf("# got \"%s\"\n", name);
	free(name);
	free(x.origin);
	free(x.caller);
	free(x.within);
}

#define N(a)	(sizeof (a) / sizeof (a)[0])

int
main(void)
{
	struct leak_suspect	none;
	size_t			i;
	char			*name;

	tap_plan((int)N(kinds) + 6 + 6 + 5);
	for (i = 0; i < N(kinds); i++)
		tap_eq(site_frame_kind(kinds[i].filename), kinds[i].kind,
		    "kind of \"%s\"", kinds[i].filename != NULL ?
		    kinds[i].filename : "(null)");

	check_origin("a graph kept by an evaluation", graph, N(graph), 2, 4,
	    0);
	check_origin("stacks=\"all\"", all, N(all), 4, 5, -1);
	check_origin("an installed engine", engine, N(engine), 3, -1, 0);
	check_origin("a program installed as a package", installed,
	    N(installed), -1, -1, -1);
	check_origin("a native stack", native, N(native), -1, -1, -1);
	check_origin("no frames", NULL, 0, -1, -1, -1);

	check_name(TORCH "nn/functional.py:1723 relu", graph, N(graph),
	    "/w/zoo.py:98 forward < zoo.py:144 evaluation_loss (in"
	    " torch/nn/functional.py:1723 relu)");
	check_name("memory_snapshot.cpp:0 gather_with_cpp()", all, N(all),
	    "train.py:51 unpack < train.py:80 main");
	check_name("site-packages/trl/models/activation_offloading.py:412"
	    " unpack_tensor", engine, N(engine), "train.py:90 main (in"
	    " trl/models/activation_offloading.py:412 unpack_tensor)");
	check_name("site-packages/mytrainer/loop.py:12 step", installed,
	    N(installed), "site-packages/mytrainer/loop.py:12 step");
	check_name("/usr/lib/libcudart.so.13:0 cudaMalloc", native,
	    N(native), "/usr/lib/libcudart.so.13:0 cudaMalloc");
	memset(&none, 0, sizeof none);
	name = leak_suspect_name(&none);
	tap_ok(strcmp(name, "(no stack)") == 0, "no stack: \"(no stack)\"");
	free(name);

	tap_ok(strcmp(site_label_short("/a/b/c.py:3 f"), "c.py:3 f") == 0,
	    "short: a program's file by its base name");
	tap_ok(strcmp(site_label_short("/v/dist-packages/np/x.py:3 f"),
	    "np/x.py:3 f") == 0, "short: a package's file from the package");
	tap_ok(strcmp(site_label_short("/a:b/c.py:12 g"), "c.py:12 g") == 0,
	    "short: a ':' in a directory");
	tap_ok(strcmp(site_label_short("noline"), "noline") == 0,
	    "short: no file:line, whole");
	tap_ok(strcmp(site_label_short("<stdin>:7 <module>"),
	    "<stdin>:7 <module>") == 0, "short: a pseudo-file");
	return (tap_done());
}
