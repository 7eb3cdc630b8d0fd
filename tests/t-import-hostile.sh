#!/bin/sh
# t-import-hostile.sh: every file of the hostile pickle corpus
# (tests/data/pickle/bad, which the reader refuses) and of the invalid
# snapshots (tests/data/pickle/invalid, which it reads but whose values
# PyTorch cannot write), given to `vramtrace import`, gets one clear line
# naming the file and containing the substring its EXPECT lists, exit 4 (a bad input),
# and leaves no database (not even a temporary one) behind.
# bad/EXPECT-import names the files whose content the importer refuses
# before the reader reaches the problem bad/EXPECT names.
. "${srcdir:-.}/tests/lib.sh"

data=$srcdir/tests/data/pickle
n=$(cat "$data/bad/EXPECT" "$data/invalid/EXPECT" | grep -cv '^#')
plan "$n"
tab=$(printf '\t')
for dir in bad invalid; do
	while IFS="$tab" read -r file want; do
		case $file in
		\#*|'') continue ;;
		esac
		override=$(grep "^$file$tab" "$data/$dir/EXPECT-import" \
		    2>/dev/null | cut -f2)
		[ -n "$override" ] && want=$override
		mkdir "$TMP/d" || exit 99
		run "$VRAMTRACE" import "$data/$dir/$file" -o "$TMP/d/out.db"
		lines=$(wc -l <"$TMP/err")
		[ $rc -eq 4 ] && [ "$lines" -eq 1 ] &&
		    grep -qF -- "$want" "$TMP/err" &&
		    grep -qF -- "$file" "$TMP/err" && [ -z "$(ls "$TMP/d")" ]
		st=$?
		[ $st -eq 0 ] || echo "# exit $rc: $(head -c 300 "$TMP/err")" \
		    "/ left: $(ls "$TMP/d")"
		ok $st "$dir/$file"
		rm -rf "$TMP/d"
	done <"$data/$dir/EXPECT"
done
done_testing
