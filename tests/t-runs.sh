#!/bin/sh
# t-runs.sh: runs in one database: record --append and import --append add
# runs that keep their command, cwd, git commit (record only), times, exit
# status and version.
. "${srcdir:-.}/tests/lib.sh"
plan 4
unset VRAMTRACE_SOCKET VRAMTRACE_OUTPUT
VT=$(cd "$(dirname "$VRAMTRACE")" && pwd)/$(basename "$VRAMTRACE")
q() { "$VT" sql "$1" "$2" --format csv | tail -n +2; }

if command -v git >/dev/null 2>&1; then
	mkdir "$TMP/repo" && cd "$TMP/repo" && git init -q . &&
	    git -c user.name=t -c user.email=t@t commit -q --allow-empty -m x ||
	    exit 99
	head=$(git rev-parse HEAD)
	"$VT" record -o "$TMP/runs.db" -- sh -c 'exit 3'
	cd "$TMP" || exit 99
	[ "$(q "$TMP/runs.db" "select git_commit, cwd = '$TMP/repo', exit_status, command from runs")" = "$head,1,3,sh -c exit 3" ]
	ok $? "record keeps the git commit, cwd, exit status and command"
else
	cd "$TMP" || exit 99
	"$VT" record -o "$TMP/runs.db" -- sh -c 'exit 3'
	skip 1 "no git"
fi
mkdir "$TMP/plain"
(cd "$TMP/plain" && "$VT" record -o "$TMP/runs.db" --append -- true)
[ "$(q "$TMP/runs.db" "select count(*), sum(git_commit is null) from runs")" = "2,1" ]
ok $? "record --append adds a run; outside a repository no commit"
if [ -f "$srcdir/examples/clean.pickle" ]; then
	"$VT" import "$srcdir/examples/clean.pickle" -o "$TMP/runs.db" \
	    --append >/dev/null
	[ "$(q "$TMP/runs.db" "select source, git_commit is null, cwd is null from runs where id = 3")" = "import,1,1" ]
	ok $? "import --append adds a run without cwd or commit"
else
	skip 1 "no examples/clean.pickle"
fi
[ "$(q "$TMP/runs.db" "select count(*) from runs where start_ns > 0 and end_ns >= start_ns and version <> '' and complete = 1")" = "$(q "$TMP/runs.db" "select count(*) from runs")" ]
ok $? "every run has its start, end and version and is complete"
done_testing
