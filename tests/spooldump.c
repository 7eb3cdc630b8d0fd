/*
 * spooldump.c: print the offload check's events of a spool file (.vtr),
 * one line each with the strings they name, so that tests can see what a
 * traced process wrote before any store reads it.
 *
 * usage: spooldump FILE.vtr
 *
 *	check-step STEP ENGINE packs=N unpacks=N checked=N differ=N
 *	    packed=BYTES moved=BYTES device=D
 *	check-diff STEP #INDEX ENGINE SHAPE DTYPE BYTES device=D
 *	    differs=0xBITS at=WHERE pack=FILE:LINE unpack=NAME "DETAIL"
 *
 * where WHERE is the event's FILE:LINE in the user's code, FILE:LINE the
 * innermost frame of the pack's stack and NAME the unpack stack's first
 * function.  Other events are counted on a last line:
 * "other N".  A spool that does not decode exits 1 with the reader's words.
 */
#include "config.h"

#include "vramtrace.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char	*strs[1 << 16];

static const char *
str(uint32_t id)
{
	return (id < sizeof strs / sizeof strs[0] && strs[id] != NULL ?
	    strs[id] : "-");
}

/* The first frame of a site string: "function\tfile\tline\n...". */
static void
frame(uint32_t id, int want_file, char *out, size_t len)
{
	const char	*s = str(id), *t1, *t2, *nl;

	t1 = strchr(s, '\t');
	t2 = t1 != NULL ? strchr(t1 + 1, '\t') : NULL;
	nl = t2 != NULL ? strchr(t2, '\n') : NULL;
	if (nl == NULL)
		snprintf(out, len, "-");
	else if (want_file)
		snprintf(out, len, "%.*s:%.*s", (int)(t2 - t1 - 1), t1 + 1,
		    (int)(nl - t2 - 1), t2 + 1);
	else
		snprintf(out, len, "%.*s", (int)(t1 - s), s);
}

static void
dump(const struct event *ev, uint64_t *other)
{
	const struct event_check_step	*cs = &ev->u.check_step;
	const struct event_check_diff	*cd = &ev->u.check_diff;
	char				 pack[512], unpack[256];

	switch (ev->type) {
	case EVENT_STRING:
		if (ev->u.string.id < sizeof strs / sizeof strs[0]) {
			free(strs[ev->u.string.id]);
			strs[ev->u.string.id] = xstrndup(ev->u.string.text,
			    ev->u.string.length);
		}
		break;
	case EVENT_CHECK_STEP:
		printf("check-step %" PRId64 " %s packs=%" PRIu64 " unpacks=%"
		    PRIu64 " checked=%" PRIu64 " differ=%" PRIu64 " packed=%"
		    PRIu64 " moved=%" PRIu64 " device=%d\n", cs->step,
		    str(cs->engine), cs->packs, cs->unpacks, cs->checked,
		    cs->differ, cs->packed_bytes, cs->moved_bytes, cs->device);
		break;
	case EVENT_CHECK_DIFF:
		frame(cd->pack_site, 1, pack, sizeof pack);
		frame(cd->unpack_site, 0, unpack, sizeof unpack);
		printf("check-diff %" PRId64 " #%" PRIu64 " %s %s %s %" PRIu64
		    " device=%d differs=0x%x at=%s pack=%s unpack=%s \"%s\"\n",
		    cd->step, cd->index, str(cd->engine), str(cd->shape),
		    str(cd->dtype), cd->bytes, cd->device, cd->differs,
		    str(cd->where), pack, unpack, str(cd->detail));
		break;
	default:
		(*other)++;
		break;
	}
}

int
main(int argc, char **argv)
{
	struct event_reader	 r;
	struct event		 ev;
	FILE			*f;
	unsigned char		 buf[65536];
	char			*cause = NULL;
	uint64_t		 other = 0;
	size_t			 n;
	int			 got = 0;

	if (argc != 2)
		fatal("usage: spooldump FILE.vtr");
	if ((f = fopen(argv[1], "rb")) == NULL)
		fatal("%s: cannot open", argv[1]);
	event_reader_init(&r, argv[1]);
	while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
		event_reader_feed(&r, buf, n);
		while ((got = event_reader_next(&r, &ev, &cause)) == 1)
			dump(&ev, &other);
		if (got < 0)
			break;
	}
	fclose(f);
	if (got < 0 || event_reader_finish(&r, &cause) != 0) {
		fprintf(stderr, "spooldump: %s\n", cause);
		return (1);
	}
	event_reader_free(&r);
	printf("other %" PRIu64 "\n", other);
	return (0);
}
