/*
 * stack.h: the stacks of allocations, captured inside the traced process
 * (stack*.c).
 *
 * An allocation event gets a stack when the thread that made it has one to
 * give: a Python stack (stack-python.c) when the thread's Python frames can
 * be read safely, a native stack (stack-native.c) when asked for or when
 * there is no Python frame.  A stack travels as an EVENT_STRING whose first
 * line names its kind ("!python" or "!native") and whose other lines are
 * its frames, "name<TAB>file<TAB>line", innermost first; the event's
 * u.alloc.site holds the string's id.  Both kinds are interned twice: by
 * their raw frames here (a stack seen before costs a hash and one lookup)
 * and by text in the client.
 *
 * Python frames may only be read by a thread that holds the GIL, and
 * PyTorch releases the GIL around every operation, so most allocations are
 * made by a thread that does not hold it.  Such a thread's frames cannot
 * change until it takes the GIL back, and its stack at that moment is the
 * stack of the allocation.  stack-hook.c therefore sees every GIL release
 * and acquisition of the process's extension modules; an allocation made
 * in between waits in its thread's slot (stack.c) and is given its stack
 * when the thread takes the GIL back, or leaves without a stack after
 * STACK_PARK_NS.
 *
 * With PyTorch's caching allocator the tensors' blocks and their stacks
 * come from PyTorch's own history instead (python/vramtrace/_history.py),
 * through stack_block().
 */
#ifndef STACK_H
#define STACK_H

#include <stdint.h>

#include "event.h"

/* What to capture: LIB_STACK_* (lib.h) and the frames kept at most. */
struct stack_config {
	unsigned	kinds;
	unsigned	depth;
};

/* A stack's frames as raw words, the key it is interned by. */
struct stack_table_entry {
	uint64_t	 hash;		/* 0: empty slot */
	uint64_t	*words;
	uint32_t	 nwords;
	uint64_t	 value;
};

/* An open-addressing map from arrays of words to a value. */
struct stack_table {
	struct stack_table_entry *slots;
	size_t			 mask;		/* slots - 1, or 0 */
	size_t			 count;
};

/* stack.c */
int	 stack_start(const struct stack_config *);
int	 stack_alloc(struct event *);
void	 stack_sweep(int);
void	 stack_block(int, uint64_t, int32_t, uint64_t, uint64_t, uint64_t,
	     const char *);

/* stack-python.c */
int	 stack_python_start(void);
int	 stack_python_held(void);
int	 stack_python_has_frames(void);
uint32_t stack_python_site(unsigned);

/* stack-native.c */
int	 stack_native_start(void);
uint32_t stack_native_site(unsigned);
void	 stack_native_symbolize(void);

/* stack-hook.c */
int	 stack_hook_start(void (*)(void), void (*)(void));
void	 stack_hook_rescan(void);

/* stack-table.c */
uint64_t stack_table_hash(const uint64_t *, uint32_t);
struct stack_table_entry *stack_table_find(struct stack_table *,
	     const uint64_t *, uint32_t, uint64_t);
struct stack_table_entry *stack_table_add(struct stack_table *,
	     const uint64_t *, uint32_t, uint64_t, uint64_t);

#endif
