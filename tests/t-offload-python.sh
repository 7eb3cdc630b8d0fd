#!/bin/sh
# t-offload-python.sh: the offload binding's saved-tensor hooks without a
# GPU (tests/offload-python.py): the CPython extension and the Python
# hooks over the engine on a fake runtime (tests/libfake-offload.so).
# Skips without python3 or the extension.
. "${srcdir:-.}/tests/lib.sh"
b=${top_builddir:-.}
s=${srcdir:-.}
ext=$b/python/vramtrace/_offload.abi3.so
fake=$b/tests/libfake-offload.so
if [ -z "$PYTHON3" ] || [ ! -f "$ext" ] || [ ! -f "$fake" ]; then
	echo "1..0 # SKIP no python3 or no extension (configure's summary)"
	exit 0
fi
sanitize_python "$fake" || exit 99
VRAMTRACE_LIBRARY=$fake "$PYTHON3" "$s/tests/offload-python.py" "$ext" \
	"$s/python"
