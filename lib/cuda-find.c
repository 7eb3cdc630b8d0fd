/*
 * cuda-find.c: libcupti and the CUDA runtime, found at run time, in the
 * order cuda-find.h gives.
 *
 * A search is a struct cuda_find_search: the library's stem ("libcupti.so"),
 * the majors to try in order (the process's own first), the site-packages
 * directories seen in the process's loaded files, and the message being
 * built.  Loaded files are read once with dl_iterate_phdr; every other
 * step is a stat() and a dlopen() per candidate.  The majors are those
 * whose structures and callback ids the injection library was checked
 * against (inject-cupti.c): CUDA 12 and 13.
 */
#include "config.h"

#include <sys/stat.h>

#include <dirent.h>
#include <dlfcn.h>
#include <link.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda-find.h"

#define CUDA_FIND_SITES		8	/* site-packages directories kept */

static const int	cuda_find_majors[] = { 13, 12 };
#define CUDA_FIND_NMAJORS \
	(sizeof cuda_find_majors / sizeof cuda_find_majors[0])

/* Where a toolkit keeps its libraries (CUPTI's own directory last). */
static const char *const cuda_find_subdirs[] = { "lib64", "lib",
    "targets/x86_64-linux/lib", "targets/sbsa-linux/lib", "extras/CUPTI/lib64",
    NULL };

struct cuda_find_search {
	const char	*stem;			/* "libcupti.so" */
	const char	*other;			/* the other library's stem */
	int		 majors[CUDA_FIND_NMAJORS];
	char		 sites[CUDA_FIND_SITES][PATH_MAX];
	size_t		 nsites;
	char		 loaded[PATH_MAX];	/* a loaded file of stem */
	int		 own_major;		/* of a loaded stem or other */
	int		 other_major;
};

/* The major of a file named STEM.N[.…], or 0. */
static int
cuda_find_major_of(const char *base, const char *stem)
{
	size_t	len = strlen(stem);

	if (strncmp(base, stem, len) != 0 || base[len] != '.')
		return (0);
	return (atoi(base + len + 1));
}

/* Keep SITE of a loaded file SITE/nvidia/... or SITE/torch/lib/.... */
static void
cuda_find_site(struct cuda_find_search *s, const char *path)
{
	const char	*end;
	size_t		 i, len;

	if ((end = strstr(path, "/nvidia/")) == NULL &&
	    (end = strstr(path, "/torch/lib/")) == NULL)
		return;
	len = (size_t)(end - path);
	if (len == 0 || len >= PATH_MAX || s->nsites == CUDA_FIND_SITES)
		return;
	for (i = 0; i < s->nsites; i++) {
		if (strlen(s->sites[i]) == len &&
		    strncmp(s->sites[i], path, len) == 0)
			return;
	}
	memcpy(s->sites[s->nsites], path, len);
	s->sites[s->nsites++][len] = '\0';
}

static int
cuda_find_phdr(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct cuda_find_search	*s = arg;
	const char		*base;
	int			 major;

	(void)size;
	if (info->dlpi_name == NULL || *info->dlpi_name != '/')
		return (0);
	base = strrchr(info->dlpi_name, '/') + 1;
	cuda_find_site(s, info->dlpi_name);
	if ((major = cuda_find_major_of(base, s->stem)) != 0 &&
	    s->own_major == 0) {
		s->own_major = major;
		if (strlen(info->dlpi_name) < sizeof s->loaded)
			strcpy(s->loaded, info->dlpi_name);
	}
	if ((major = cuda_find_major_of(base, s->other)) != 0 &&
	    s->other_major == 0)
		s->other_major = major;
	return (0);
}

static int
cuda_find_supported(int major)
{
	size_t	i;

	for (i = 0; i < CUDA_FIND_NMAJORS; i++) {
		if (cuda_find_majors[i] == major)
			return (1);
	}
	return (0);
}

/*
 * Read the process's loaded files; order the majors: the one of the
 * library itself if loaded, else of the other one, then the rest newest
 * first.  A major this build was not checked against is never tried.
 */
static void
cuda_find_scan(struct cuda_find_search *s)
{
	size_t	i, n = 0;
	int	first;

	dl_iterate_phdr(cuda_find_phdr, s);
	if (!cuda_find_supported(s->own_major)) {
		s->own_major = 0;
		*s->loaded = '\0';
	}
	first = s->own_major != 0 ? s->own_major : s->other_major;
	if (cuda_find_supported(first))
		s->majors[n++] = first;
	for (i = 0; i < CUDA_FIND_NMAJORS; i++) {
		if (n == 0 || cuda_find_majors[i] != s->majors[0])
			s->majors[n++] = cuda_find_majors[i];
	}
}

/* Is step (process, wheels, toolkit, system) in VRAMTRACE_CUDA_SEARCH? */
static int
cuda_find_step(const char *step)
{
	const char	*list = getenv("VRAMTRACE_CUDA_SEARCH"), *p;
	size_t		 len = strlen(step);

	if (list == NULL || *list == '\0')
		return (1);
	for (p = list; (p = strstr(p, step)) != NULL; p += len) {
		if ((p == list || p[-1] == ',') &&
		    (p[len] == '\0' || p[len] == ','))
			return (1);
	}
	return (0);
}

/* dlopen path if it is a file; the message says where it came from. */
static void *
cuda_find_try(const char *path, const char *how, char *msg, size_t len)
{
	struct stat	 sb;
	void		*h;

	if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
		return (NULL);
	if ((h = dlopen(path, RTLD_NOW | RTLD_LOCAL)) != NULL)
		snprintf(msg, len, "%s (%s)", path, how);
	return (h);
}

/*
 * The first soname of the search's stem, major by major, that dlopen with
 * flags gives; msg says its file and how it was found.
 */
static void *
cuda_find_soname(struct cuda_find_search *s, int flags, const char *how,
    char *msg, size_t len)
{
	struct link_map	*map;
	char		 name[64];
	void		*h;
	size_t		 i;

	for (i = 0; i < CUDA_FIND_NMAJORS && s->majors[i] != 0; i++) {
		snprintf(name, sizeof name, "%s.%d", s->stem, s->majors[i]);
		if ((h = dlopen(name, flags)) == NULL)
			continue;
		if (dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 &&
		    map->l_name != NULL && *map->l_name != '\0')
			snprintf(msg, len, "%s (%s)", map->l_name, how);
		else
			snprintf(msg, len, "%s (%s)", name, how);
		return (h);
	}
	return (NULL);
}

static void *
cuda_find_process(struct cuda_find_search *s, char *msg, size_t len)
{
	void	*h;

	if ((h = cuda_find_soname(s, RTLD_NOW | RTLD_NOLOAD,
	    "loaded by the process", msg, len)) != NULL)
		return (h);
	if (*s->loaded != '\0' &&
	    (h = dlopen(s->loaded, RTLD_NOW | RTLD_NOLOAD)) != NULL) {
		snprintf(msg, len, "%s (loaded by the process)", s->loaded);
		return (h);
	}
	return (NULL);
}

/* SITE/nvidia/NAME/lib/STEM.MAJOR for every NAME, in directory order. */
static void *
cuda_find_wheels(struct cuda_find_search *s, char *msg, size_t len)
{
	struct dirent	*d;
	DIR		*dir;
	char		 path[PATH_MAX];
	void		*h = NULL;
	size_t		 i, m;

	for (i = 0; i < s->nsites && h == NULL; i++) {
		for (m = 0; m < CUDA_FIND_NMAJORS && s->majors[m] != 0 &&
		    h == NULL; m++) {
			snprintf(path, sizeof path, "%s/nvidia", s->sites[i]);
			if ((dir = opendir(path)) == NULL)
				break;
			while (h == NULL && (d = readdir(dir)) != NULL) {
				if (*d->d_name == '.')
					continue;
				if ((size_t)snprintf(path, sizeof path,
				    "%s/nvidia/%s/lib/%s.%d", s->sites[i],
				    d->d_name, s->stem, s->majors[m]) >=
				    sizeof path)
					continue;
				h = cuda_find_try(path,
				    "PyTorch's nvidia wheels", msg, len);
			}
			closedir(dir);
		}
	}
	return (h);
}

static void *
cuda_find_toolkit(struct cuda_find_search *s, const char *dir,
    const char *how, char *msg, size_t len)
{
	const char *const	*sub;
	char			 path[PATH_MAX];
	void			*h;
	size_t			 m;

	if (dir == NULL || *dir == '\0')
		return (NULL);
	for (m = 0; m < CUDA_FIND_NMAJORS && s->majors[m] != 0; m++) {
		for (sub = cuda_find_subdirs; *sub != NULL; sub++) {
			if ((size_t)snprintf(path, sizeof path, "%s/%s/%s.%d",
			    dir, *sub, s->stem, s->majors[m]) >= sizeof path)
				continue;
			if ((h = cuda_find_try(path, how, msg, len)) != NULL)
				return (h);
		}
	}
	return (NULL);
}

/* Append one place looked in to the message of a failed search. */
static void
cuda_find_looked(char *msg, size_t len, const char *place, const char *dir)
{
	size_t	used = strlen(msg);

	if (used >= len)
		return;
	snprintf(msg + used, len - used, "%s%s%s%s%s", used == 0 ? "" : ", ",
	    place, dir != NULL ? " (" : "", dir != NULL ? dir : "",
	    dir != NULL ? ")" : "");
}

void *
cuda_find_open(int which, const char *toolkit, char *msg, size_t len)
{
	struct cuda_find_search	*s;
	const char		*home = getenv("CUDA_HOME");
	const char		*cpath = getenv("CUDA_PATH");
	char			 looked[512] = "";
	void			*h = NULL;

	if (len > 0)
		*msg = '\0';
	if ((s = calloc(1, sizeof *s)) == NULL) {
		snprintf(msg, len, "out of memory");
		return (NULL);
	}
	s->stem = which == CUDA_FIND_CUPTI ? "libcupti.so" : "libcudart.so";
	s->other = which == CUDA_FIND_CUPTI ? "libcudart.so" : "libcupti.so";
	cuda_find_scan(s);
	if (cuda_find_step("process")) {
		h = cuda_find_process(s, msg, len);
		cuda_find_looked(looked, sizeof looked, "the process", NULL);
	}
	if (h == NULL && cuda_find_step("wheels")) {
		h = cuda_find_wheels(s, msg, len);
		cuda_find_looked(looked, sizeof looked,
		    "PyTorch's nvidia wheels", NULL);
	}
	if (h == NULL && cuda_find_step("toolkit")) {
		if ((h = cuda_find_toolkit(s, home, "CUDA_HOME", msg,
		    len)) == NULL && home != NULL && *home != '\0')
			cuda_find_looked(looked, sizeof looked, "CUDA_HOME",
			    home);
		if (h == NULL && (h = cuda_find_toolkit(s, cpath, "CUDA_PATH",
		    msg, len)) == NULL && cpath != NULL && *cpath != '\0')
			cuda_find_looked(looked, sizeof looked, "CUDA_PATH",
			    cpath);
		if (h == NULL && (h = cuda_find_toolkit(s, toolkit,
		    "the toolkit vramtrace was built with", msg,
		    len)) == NULL && toolkit != NULL && *toolkit != '\0')
			cuda_find_looked(looked, sizeof looked, "the toolkit",
			    toolkit);
	}
	if (h == NULL && cuda_find_step("system")) {
		h = cuda_find_soname(s, RTLD_NOW | RTLD_LOCAL,
		    "the linker's path", msg, len);
		cuda_find_looked(looked, sizeof looked, "the linker's path",
		    NULL);
	}
	if (h == NULL)
		snprintf(msg, len, "no %s.%d or .%d in %s", s->stem,
		    cuda_find_majors[0], cuda_find_majors[1],
		    *looked != '\0' ? looked :
		    "no place (VRAMTRACE_CUDA_SEARCH)");
	free(s);
	return (h);
}

int
cuda_find_bind(void *handle, const struct cuda_find_symbol *syms, size_t n,
    const char **missing)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		if ((*syms[i].slot = dlsym(handle, syms[i].name)) == NULL) {
			*missing = syms[i].name;
			return (-1);
		}
	}
	return (0);
}
