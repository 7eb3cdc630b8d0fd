/*
 * site-origin.h: which frames of a stack name it to people (site-origin.c).
 */
#ifndef SITE_ORIGIN_H
#define SITE_ORIGIN_H

#include <stddef.h>
#include <stdint.h>

enum site_frame_kind {
	SITE_FRAME_NATIVE = 0,	/* C or C++: no Python source */
	SITE_FRAME_LIBRARY,	/* Python an installed package, the standard
				   library or PyTorch's code generators wrote */
	SITE_FRAME_PROGRAM	/* the program's own Python code */
};

/* A frame as the query layer reads it from frames. */
struct site_frame {
	const char	*filename;
	int64_t		 line;
	const char	*name;
};

/*
 * The frames that name a stack, as indexes into it (innermost first); -1
 * for none.
 */
struct site_origin {
	long		 origin;	/* the innermost frame of the program */
	long		 caller;	/* the next frame of the program out */
	long		 within;	/* the innermost Python frame, when it is
					   a library's inside the origin */
};

enum site_frame_kind site_frame_kind(const char *);
void	 site_origin_find(const struct site_frame *, size_t,
	     struct site_origin *);
char	*site_frame_label(const char *, int64_t, const char *);
const char *site_label_short(const char *);
char	*site_origin_name(const char *, const char *, const char *,
	     const char *);
char	*site_frame_label_at(const struct site_frame *, long);
char	*site_name(const struct site_frame *, size_t, const char *);

#endif
