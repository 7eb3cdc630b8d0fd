/*
 * got.h: a function's calls redirected in the objects that import it
 * (got.c), and pointers replaced where the objects keep them
 * (got-replace.c).
 */
#ifndef GOT_H
#define GOT_H

#include <stddef.h>

struct got_target {
	const char	*name;		/* the symbol */
	void		*wrapper;	/* what its importers call now */
	void		*real;		/* what they called: the wrapper's
					   (preset: only objects bound to it) */
	unsigned	 patched;	/* slots redirected */
	unsigned	 elsewhere;	/* slots left alone */
};

void			got_redirect(struct got_target *, size_t);
int			got_loaded_since(unsigned long long *);

/* got-replace.c */
long			got_replace(void *const *, void *const *, size_t,
			    const void *const *, size_t);

#endif
