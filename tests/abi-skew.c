/*
 * abi-skew.c: libvramtrace.so's own lib/abi.c, built into a stand-in
 * library whose answers can be made wrong, for t-library.sh: with
 * ABI_SKEW=version it says another version, with ABI_SKEW=STRUCT it says
 * struct STRUCT is 8 bytes larger than it is.  The Python package must
 * refuse it, naming the file and what differs.
 */
#define vramtrace_version	abi_version
#define vramtrace_struct_size	abi_struct_size
#include "../lib/abi.c"
#undef vramtrace_version
#undef vramtrace_struct_size

#include <stdlib.h>

const char	*vramtrace_version(void);
size_t		 vramtrace_struct_size(const char *);

const char *
vramtrace_version(void)
{
	const char	*skew = getenv("ABI_SKEW");

	return (skew != NULL && strcmp(skew, "version") == 0 ? "0.0.1" :
	    abi_version());
}

size_t
vramtrace_struct_size(const char *name)
{
	const char	*skew = getenv("ABI_SKEW");

	return (abi_struct_size(name) + (skew != NULL && name != NULL &&
	    strcmp(skew, name) == 0 ? 8 : 0));
}
