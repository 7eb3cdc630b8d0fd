#!/bin/sh
# t-import-hostile.sh: every file of the hostile pickle corpus, given to
# `vramtrace import`, gets one clear line naming the file, exit 1, and
# leaves no database (not even a temporary one) behind.  EXPECT-import
# names the files whose content the importer refuses first.
. "${srcdir:-.}/tests/lib.sh"

bad=$srcdir/tests/data/pickle/bad
n=$(grep -cv '^#' "$bad/EXPECT")
plan "$n"
tab=$(printf '\t')
while IFS="$tab" read -r file want; do
	case $file in
	\#*|'') continue ;;
	esac
	override=$(grep "^$file$tab" "$bad/EXPECT-import" | cut -f2)
	[ -n "$override" ] && want=$override
	mkdir "$TMP/d" || exit 99
	run "$VRAMTRACE" import "$bad/$file" -o "$TMP/d/out.db"
	lines=$(wc -l <"$TMP/err")
	[ $rc -eq 1 ] && [ "$lines" -eq 1 ] && grep -qF -- "$want" "$TMP/err" &&
	    grep -qF -- "$file" "$TMP/err" && [ -z "$(ls "$TMP/d")" ]
	st=$?
	[ $st -eq 0 ] || echo "# exit $rc: $(head -c 300 "$TMP/err") / left: $(ls "$TMP/d")"
	ok $st "$file"
	rm -rf "$TMP/d"
done <"$bad/EXPECT"
done_testing
