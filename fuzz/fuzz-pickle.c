/*
 * libFuzzer target for the pickle reader: each input is parsed three
 * times from memory, as a whole tree, streaming with most elements
 * consumed, and as the importer reads it (annotations streamed, every
 * top-level key but one dropped), and the trees are walked so that every
 * value is read.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdint.h>
#include <stdlib.h>

#include "pickle.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Read every value below v, as a consumer would. */
static void
fuzz_walk(const struct pickle_value *v)
{
	size_t	i, len;
	int64_t	i64;
	uint64_t u64;
	double	d;
	int	b;

	switch (pickle_type(v)) {
	case PICKLE_LIST:
	case PICKLE_TUPLE:
		for (i = 0; i < pickle_list_len(v); i++)
			fuzz_walk(pickle_list_at(v, i));
		break;
	case PICKLE_DICT:
		for (i = 0; i < pickle_dict_len(v); i++) {
			fuzz_walk(pickle_dict_key_at(v, i));
			fuzz_walk(pickle_dict_value_at(v, i));
		}
		pickle_dict_get(v, "segments");
		break;
	case PICKLE_STR:
		pickle_str(v, &len);
		break;
	case PICKLE_BYTES:
		pickle_bytes(v, &len);
		break;
	case PICKLE_INT:
		pickle_int(v, &i64);
		break;
	case PICKLE_UINT64:
		pickle_uint(v, &u64);
		pickle_float(v, &d);
		break;
	case PICKLE_FLOAT:
		pickle_float(v, &d);
		break;
	case PICKLE_BOOL:
		pickle_bool(v, &b);
		break;
	case PICKLE_NONE:
		break;
	}
}

static int
fuzz_element(void *arg, enum pickle_list_kind kind, size_t device,
    size_t index, const struct pickle_value *v, char **cause)
{
	(void)arg;
	(void)kind;
	(void)device;
	(void)cause;
	fuzz_walk(v);
	return (index % 7 == 3 ? 0 : 1);	/* keep a few */
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const keep[] = { "allocator_settings", NULL };
	struct pickle_callbacks	 cb = { .element = fuzz_element };
	struct pickle_callbacks	 import = { .element = fuzz_element,
	    .annotations = 1, .keep = keep };
	struct pickle_value	*root;
	char			*cause = NULL;

	root = pickle_parse_buffer(data, size, "fuzz", NULL, &cause);
	if (root != NULL)
		fuzz_walk(root);
	pickle_free(root);
	free(cause);

	cause = NULL;
	root = pickle_parse_buffer(data, size, "fuzz", &cb, &cause);
	if (root != NULL)
		fuzz_walk(root);
	pickle_free(root);
	free(cause);

	cause = NULL;
	root = pickle_parse_buffer(data, size, "fuzz", &import, &cause);
	if (root != NULL)
		fuzz_walk(root);
	pickle_free(root);
	free(cause);
	return (0);
}
