/*
 * offload-config.c: the offload engine's defaults and environment knobs.
 *
 * The defaults are TRL's (so that OffloadActivations drops in): tensors
 * under 1024 bytes stay, five sources stay alive in the forward stash,
 * copies run on side streams into pinned memory.  The slab is sized from
 * the first step unless VRAMTRACE_OFFLOAD_SLAB sets it.  Every knob is an
 * environment variable listed in libvramtrace(3); an argument the binding
 * passes explicitly overrides it.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "offload.h"

#include "lib.h"

static const struct {
	const char	*name;
	uint32_t	 flag;
} offload_config_breaks[] = {
	{ "dedupe-generation", VRAMTRACE_OFFLOAD_BREAK_DEDUPE_GENERATION },
	{ "exit-cleanup", VRAMTRACE_OFFLOAD_BREAK_EXIT_CLEANUP },
	{ "stream-wait", VRAMTRACE_OFFLOAD_BREAK_STREAM_WAIT },
	{ "slab", VRAMTRACE_OFFLOAD_BREAK_SLAB },
};

/* Parse a comma list of invariant names into *flags. */
static int
offload_config_break(const char *s, uint32_t *flags)
{
	size_t	len, i;
	int	rc = 0;

	while (*s != '\0') {
		len = strcspn(s, ",");
		for (i = 0; i < sizeof offload_config_breaks /
		    sizeof offload_config_breaks[0]; i++) {
			if (strlen(offload_config_breaks[i].name) == len &&
			    strncmp(s, offload_config_breaks[i].name, len) == 0)
				break;
		}
		if (i == sizeof offload_config_breaks /
		    sizeof offload_config_breaks[0])
			rc = -1;
		else
			*flags |= offload_config_breaks[i].flag;
		s += len;
		if (*s == ',')
			s++;
	}
	return (rc);
}

/* Read an environment variable of bytes or a count into *out, if set. */
static int
offload_config_env(const char *name, uint64_t *out)
{
	const char	*s = getenv(name);
	uint64_t	 v;

	if (s == NULL || *s == '\0')
		return (0);
	if (lib_parse_bytes(s, &v) != 0)
		return (-1);
	*out = v;
	return (0);
}

/*
 * VRAMTRACE_OFFLOAD_MAX_MEMORY, if set: bytes (suffixes K M G) into
 * *bytes, or a fraction of the device (0 < f <= 1, with a point) into
 * *fraction.
 */
static int
offload_config_max_memory(uint64_t *bytes, double *fraction)
{
	const char	*s = getenv("VRAMTRACE_OFFLOAD_MAX_MEMORY");
	char		*end;
	double		 f;

	if (s == NULL || *s == '\0')
		return (0);
	if (strchr(s, '.') == NULL)
		return (lib_parse_bytes(s, bytes));
	f = strtod(s, &end);
	if (*end != '\0' || !(f > 0 && f <= 1))
		return (-1);
	*fraction = f;
	return (0);
}

int
vramtrace_offload_config_init(struct vramtrace_offload_config *cfg)
{
	uint64_t	 slab = 0, min = 1024, stash = 5, prefetch = 0;
	uint64_t	 budget = UINT64_MAX, max_memory = 0;
	double		 fraction = 0;
	const char	*s;
	int		 rc = 0;

	memset(cfg, 0, sizeof *cfg);
	if (offload_config_env("VRAMTRACE_OFFLOAD_SLAB", &slab) != 0 ||
	    offload_config_env("VRAMTRACE_OFFLOAD_MIN_SIZE", &min) != 0 ||
	    offload_config_env("VRAMTRACE_OFFLOAD_STASH", &stash) != 0 ||
	    offload_config_env("VRAMTRACE_OFFLOAD_PREFETCH", &prefetch) != 0 ||
	    offload_config_env("VRAMTRACE_OFFLOAD_BUDGET", &budget) != 0 ||
	    offload_config_max_memory(&max_memory, &fraction) != 0)
		rc = -1;
	cfg->max_memory = max_memory;
	cfg->max_memory_fraction = fraction;
	cfg->slab_bytes = slab;
	cfg->min_offload_size = min;
	cfg->budget = budget > INT64_MAX ? -1 : (int64_t)budget;
	cfg->max_fwd_stash = stash == 0 ? 1 : stash > 1024 ? 1024 :
	    (uint32_t)stash;
	cfg->prefetch = prefetch;
	cfg->use_streams = 1;
	cfg->use_pin_memory = 1;
	if ((s = getenv("VRAMTRACE_OFFLOAD_BREAK")) != NULL &&
	    offload_config_break(s, &cfg->breaks) != 0)
		rc = -1;
	return (rc);
}
