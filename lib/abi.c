/*
 * abi.c: what this libvramtrace.so was built as, for bindings that mirror
 * its header: the version, and the size of each struct of libvramtrace.h.
 * The Python package checks both when it loads the library
 * (vramtrace._library), so that a package and a library from different
 * builds say so instead of passing each other structs of another shape.
 */
#include "config.h"

#include <string.h>

#include "libvramtrace.h"

#define ABI_STRUCT(name)	{ #name, sizeof(struct name) }

static const struct {
	const char	*name;
	size_t		 size;
} abi_structs[] = {
	ABI_STRUCT(vramtrace_offload_config),
	ABI_STRUCT(vramtrace_offload_tensor),
	ABI_STRUCT(vramtrace_offload_request),
	ABI_STRUCT(vramtrace_offload_stats),
	ABI_STRUCT(vramtrace_check_step),
	ABI_STRUCT(vramtrace_check_diff)
};

/* The version of vramtrace this library belongs to, "MAJOR.MINOR.PATCH". */
const char *
vramtrace_version(void)
{
	return (PACKAGE_VERSION);
}

/*
 * The size in bytes of struct name ("vramtrace_offload_tensor") as this
 * library was compiled; 0 for a name libvramtrace.h does not define.
 */
size_t
vramtrace_struct_size(const char *name)
{
	size_t	i;

	for (i = 0; name != NULL &&
	    i < sizeof abi_structs / sizeof abi_structs[0]; i++) {
		if (strcmp(abi_structs[i].name, name) == 0)
			return (abi_structs[i].size);
	}
	return (0);
}
