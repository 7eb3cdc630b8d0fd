#!/bin/sh
# Run every file of the hostile corpus through the pickle reader: each must
# fail (exit 1) with one error line containing the substring listed for it
# in tests/data/pickle/bad/EXPECT.  Prints TAP.
#
# T_PICKLE names the checker (default ./tests/t-pickle, run as
# "$T_PICKLE --check FILE"); srcdir as for Automake tests.

srcdir=${srcdir:-.}
bad=$srcdir/tests/data/pickle/bad
check=${T_PICKLE:-./tests/t-pickle}
tab=$(printf '\t')
n=0
failed=0
out=$(mktemp) || exit 1
trap 'rm -f "$out"' EXIT

while IFS="$tab" read -r file want; do
	case $file in
	\#*|'') continue ;;
	esac
	n=$((n + 1))
	$check --check "$bad/$file" 2>"$out" >/dev/null
	rc=$?
	lines=$(wc -l <"$out")
	if [ $rc -eq 1 ] && [ "$lines" -eq 1 ] && grep -qF -- "$want" "$out"
	then
		echo "ok $n - $file"
	else
		echo "not ok $n - $file: exit $rc, got: $(head -c 300 "$out")"
		failed=$((failed + 1))
	fi
done <"$bad/EXPECT"
echo "1..$n"
[ $failed -eq 0 ]
