/*
 * fuzz-common.h: what the fuzz targets that write files share
 * (fuzz-common.c).
 */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

/*
 * Make every file write past mib MiB fail with EFBIG (SIGXFSZ ignored), as
 * on a full disk, so that an input that unpacks or expands to gigabytes is
 * quick to refuse.  Aborts when the limit cannot be set.
 */
void	fuzz_limit_files(unsigned mib);

/*
 * 1 when directory dir holds nothing but the entries named in the
 * NULL-terminated list names (each there or not), else 0, after naming
 * on stderr each entry left behind.
 */
int	fuzz_holds_only(const char *dir, const char *const *names);

#endif
