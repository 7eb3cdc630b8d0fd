#!/bin/sh
# t-hook.sh: a function's calls redirected in the objects that import it
# (lib/got.c, which the injection library uses for the CUDA
# runtime's allocation calls), without CUDA: tests/hook-host imports
# hook_probe() lazily and by address and loads tests/hook/libhook-use.so,
# bound to a second definition, which must be left alone; then
# tests/hook/libhook-late.so, loaded after got_watch(), must be redirected
# as it loads.
b=${top_builddir:-.}
exec "$b/tests/hook-host" "$b/tests/hook/libhook-use.so" \
    "$b/tests/hook/libhook-late.so"
