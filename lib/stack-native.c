/*
 * stack-native.c: native stacks, captured on the allocating thread and
 * symbolised off the hot path.
 *
 * The allocating thread only records return addresses (backtrace(), the
 * unwinder of libgcc, warmed up at start because its first call loads a
 * library) and looks them up in nat_stacks.  A new stack gets a string id
 * reserved at once, so that its event can name it, and waits in
 * nat_pending; the client's thread, at its next batch, turns the addresses
 * into "symbol<TAB>library<TAB>0" lines (dladdr, and the C++ demangler when
 * the process has one) and defines the string.  The string thus arrives
 * after the events that name it, within a batch or two, well inside the
 * time the store holds events back to order them.
 *
 * The frames of this library, of CUPTI and of the CUDA driver and runtime
 * at the inner end of a stack are how the allocation reached us: they are
 * dropped when symbolising, and depth counts the frames that remain.
 * nat_lock guards nat_stacks and nat_pending.
 */
#include "config.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "stack.h"

#define NAT_SKIP	32		/* inner frames we may drop */
#define NAT_MAX		(256 + NAT_SKIP)	/* addresses captured at most */
#define NAT_NAME_MAX	512

struct nat_pending {
	uint32_t	 id;
	uint32_t	 n;
	uint64_t	*pcs;
	unsigned	 depth;
};

static pthread_mutex_t	 nat_lock = PTHREAD_MUTEX_INITIALIZER;
static struct stack_table nat_stacks;
static struct nat_pending *nat_pending;
static size_t		 nat_npending, nat_pending_alloc;
static char		*(*nat_demangle)(const char *, char *, size_t *,
			     int *);

/* Warm the unwinder up and find the demangler.  Returns 0. */
int
stack_native_start(void)
{
	void	*pcs[4];

	backtrace(pcs, 4);
	*(void **)&nat_demangle = dlsym(RTLD_DEFAULT, "__cxa_demangle");
	return (0);
}

/*
 * The string id of this thread's native stack, with depth frames at most
 * once symbolised; 0 when it cannot be had (recording off, no memory).
 */
uint32_t
stack_native_site(unsigned depth)
{
	struct stack_table_entry	*e;
	struct nat_pending		*grown, *p;
	void				*raw[NAT_MAX];
	uint64_t			 w[NAT_MAX], h;
	uint32_t			 id = 0;
	int				 n, i, want;
	size_t				 a;

	want = (int)(depth + NAT_SKIP + 1);
	if (want > NAT_MAX)
		want = NAT_MAX;
	/* Frames of this library are dropped when symbolising. */
	if ((n = backtrace(raw, want)) <= 0)
		return (0);
	for (i = 0; i < n; i++)
		w[i] = (uint64_t)(uintptr_t)raw[i];
	h = stack_table_hash(w, (uint32_t)n);
	pthread_mutex_lock(&nat_lock);
	if ((e = stack_table_find(&nat_stacks, w, (uint32_t)n, h)) != NULL) {
		id = (uint32_t)e->value;
		goto out;
	}
	if (nat_npending == nat_pending_alloc) {
		a = nat_pending_alloc == 0 ? 64 : 2 * nat_pending_alloc;
		if ((grown = realloc(nat_pending, a * sizeof *grown)) == NULL)
			goto out;
		nat_pending = grown;
		nat_pending_alloc = a;
	}
	if ((id = client_string_reserve()) == 0 ||
	    (e = stack_table_add(&nat_stacks, w, (uint32_t)n, h, id)) ==
	    NULL) {
		id = 0;
		goto out;
	}
	p = &nat_pending[nat_npending++];
	p->id = id;
	p->n = (uint32_t)n;
	p->pcs = e->words;	/* owned by the table, never freed */
	p->depth = depth;
out:
	pthread_mutex_unlock(&nat_lock);
	return (id);
}

/* Is this library one the allocation passed through to reach us? */
static int
nat_plumbing(const char *path, const void *self_base, const void *base)
{
	const char	*b;

	if (base == self_base)
		return (1);
	if (path == NULL)
		return (0);
	b = (b = strrchr(path, '/')) != NULL ? b + 1 : path;
	return (strncmp(b, "libcupti", 8) == 0 ||
	    strncmp(b, "libcuda.", 8) == 0 ||
	    strncmp(b, "libcudart", 9) == 0);
}

/* One frame's line of a native stack into buf. */
static void
nat_frame(char *buf, size_t len, uint64_t pc)
{
	Dl_info		 info;
	const char	*lib = "??", *name;
	char		*dem = NULL, clean[NAT_NAME_MAX + 1];
	int		 status = -1;
	size_t		 i;

	/* A return address may be past its function's end: look it up - 1. */
	if (dladdr((void *)(uintptr_t)(pc - 1), &info) == 0)
		memset(&info, 0, sizeof info);
	if (info.dli_fname != NULL && *info.dli_fname != '\0')
		lib = (lib = strrchr(info.dli_fname, '/')) != NULL ? lib + 1 :
		    info.dli_fname;
	name = info.dli_sname;
	if (name != NULL && nat_demangle != NULL && name[0] == '_' &&
	    name[1] == 'Z')
		dem = nat_demangle(name, NULL, NULL, &status);
	if (status == 0 && dem != NULL)
		name = dem;
	if (name == NULL) {
		snprintf(clean, sizeof clean, "0x%llx", (unsigned long long)
		    (pc - (uint64_t)(uintptr_t)info.dli_fbase));
		name = clean;
	} else {
		/* Tabs and newlines separate fields and frames. */
		for (i = 0; name[i] != '\0' && i < NAT_NAME_MAX; i++)
			clean[i] = name[i] == '\t' || name[i] == '\n' ? ' ' :
			    name[i];
		clean[i] = '\0';
		name = clean;
	}
	snprintf(buf, len, "%s\t%s\t0\n", name, lib);
	free(dem);
}

/* The text of a pending stack; NULL on failure (caller frees). */
static char *
nat_text(const struct nat_pending *p, const void *self_base)
{
	Dl_info		 info;
	char		*text, *at;
	size_t		 size, used;
	uint32_t	 i, first = 0, kept = 0;

	while (first < p->n && first < NAT_SKIP &&
	    dladdr((void *)(uintptr_t)(p->pcs[first] - 1), &info) != 0 &&
	    nat_plumbing(info.dli_fname, self_base, info.dli_fbase))
		first++;
	size = 16 + (size_t)(p->n - first + 1) * (NAT_NAME_MAX + 300);
	if ((text = malloc(size)) == NULL)
		return (NULL);
	used = (size_t)snprintf(text, size, "!native\n");
	for (i = first; i < p->n && kept < p->depth &&
	    used + NAT_NAME_MAX + 300 < EVENT_STRING_MAX; i++, kept++) {
		at = text + used;
		nat_frame(at, size - used, p->pcs[i]);
		used += strlen(at);
	}
	if (i < p->n)
		used += (size_t)snprintf(text + used, size - used,
		    "...\t??\t0\n");
	return (text);
}

/*
 * Define the strings of the native stacks captured since the last call.
 * For the client's thread, between batches.
 */
void
stack_native_symbolize(void)
{
	struct nat_pending	*list;
	Dl_info			 self;
	size_t			 n, i;
	char			*text;

	pthread_mutex_lock(&nat_lock);
	list = nat_pending;
	n = nat_npending;
	nat_pending = NULL;
	nat_npending = nat_pending_alloc = 0;
	pthread_mutex_unlock(&nat_lock);
	if (dladdr((void *)(uintptr_t)stack_native_symbolize, &self) == 0)
		self.dli_fbase = NULL;
	for (i = 0; i < n; i++) {
		if ((text = nat_text(&list[i], self.dli_fbase)) == NULL)
			text = strdup("!native\n...\t??\t0\n");
		if (text != NULL)
			client_string_define(list[i].id, text);
		free(text);
	}
	free(list);
}
