#!/bin/sh
# report-html-embed.sh SRCDIR: print report-html-page.c, the page of
# `vramtrace report --html` as two C strings: SRCDIR/report-html.html with
# its @CSS@ and @JS@ lines replaced by report-html.css and report-html.js,
# cut at its @DATA@ line (where report-html.c writes the data) into
# report_html_head and report_html_tail.  Run by make; needs only sed and
# awk.
set -eu
d=$1
html=$d/report-html.html
if [ "$(grep '^@[A-Z]*@$' "$html" | tr '\n' ' ')" != "@CSS@ @DATA@ @JS@ " ]
then
	echo "$html: wants the lines @CSS@, @DATA@ and @JS@ in that order" >&2
	exit 1
fi
# part N: the lines of the page after its Nth marker line, up to the next.
part() {
	awk -v n="$1" '/^@[A-Z]+@$/ { k++; next } k == n' "$html"
}
# cstr: each line as a C string literal ("?" escaped: no trigraphs).
cstr() {
	sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/?/\\?/g' \
	    -e 's/^/	"/' -e 's/$/\\n"/'
}
echo "/* report-html-page.c: made by src/report-html-embed.sh from"
echo " * src/report-html.html, .css and .js; do not edit. */"
echo '#include "config.h"'
echo
echo '#include "report.h"'
echo
echo 'const char report_html_head[] ='
part 0 | cstr
cstr <"$d/report-html.css"
part 1 | cstr
echo '	"";'
echo 'const char report_html_tail[] ='
part 2 | cstr
cstr <"$d/report-html.js"
part 3 | cstr
echo '	"";'
