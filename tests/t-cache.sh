#!/bin/sh
# t-cache.sh: the import cache of a pickle given to a reading command
# (src/input.c) answers only for the same bytes: another file copied over
# the pickle with its time kept (cp -p), or bytes changed in place with
# the same size, time and inode, is imported again; an import replaces
# the cache files of the pickle's older keys.
. "${srcdir:-.}/tests/lib.sh"
plan 6
export XDG_CACHE_HOME="$TMP/cache"
ex=$srcdir/examples

cp "$ex/clean.pickle" "$TMP/x.pickle"
run "$VRAMTRACE" leaks "$TMP/x.pickle" --fail-on-leak
[ $rc -eq 0 ] && grep -q '^verdict: CLEAN' "$TMP/out"
ok $? "the clean example: CLEAN"
cp -p "$ex/garbage_stream.pickle" "$TMP/x.pickle"
run "$VRAMTRACE" leaks "$TMP/x.pickle" --fail-on-leak
[ $rc -eq 1 ] && grep -q '^verdict: LEAK' "$TMP/out"
ok $? "cp -p of the leaking one over it: LEAK, exit 1 (not the cached CLEAN)"
[ "$(ls "$XDG_CACHE_HOME/vramtrace" | grep -c '^x\.pickle-.*\.db$')" -eq 1 ]
ok $? "...and its import replaced the older one in the cache"

# The same size, time and inode, one byte of a frame's file name changed.
cp "$ex/clean.pickle" "$TMP/y.pickle"
touch -r "$ex/clean.pickle" "$TMP/ref"
names() { "$VRAMTRACE" sql "$TMP/y.pickle" "select count(*) from frames where filename = '$1'" | tail -n 1; }
[ "$(names train.py)" -gt 0 ] && [ "$(names trainXpy)" -eq 0 ]
ok $? "a pickle's frames, through the cache"
inode=$(stat -c %i "$TMP/y.pickle")
"$PY" - "$TMP/y.pickle" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    b = f.read()
    f.seek(0)
    f.write(b.replace(b"train.py", b"trainXpy"))
PY
touch -r "$TMP/ref" "$TMP/y.pickle"
[ "$(stat -c '%i %s %Y' "$TMP/y.pickle")" = "$inode $(stat -c '%s %Y' "$ex/clean.pickle")" ] &&
    [ "$(stat -c %y "$TMP/y.pickle")" = "$(stat -c %y "$ex/clean.pickle")" ]
ok $? "...rewritten in place: the same inode, size and time to the ns"
[ "$(names train.py)" -eq 0 ] && [ "$(names trainXpy)" -gt 0 ]
ok $? "...is imported again: its new bytes answer"
done_testing
