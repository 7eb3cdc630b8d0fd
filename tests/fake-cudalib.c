/*
 * fake-cudalib.c: a stand-in for libcupti.so.N or libcudart.so.N, built
 * once per soname (FAKE_CUDALIB_SONAME, which -Wl,-soname gives too), for
 * t-cuda-find.sh: cuda_find_open() must pick the file a process state
 * calls for, and say which it picked.
 */
#include "config.h"

const char	*fake_cudalib(void);

/* The soname this stand-in was built as. */
const char *
fake_cudalib(void)
{
	return (FAKE_CUDALIB_SONAME);
}
