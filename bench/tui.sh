#!/bin/sh
# bench/tui.sh: how fast vramtrace tui answers on a large run: the time to
# the first frame and from each key to its frame, from the UI's own log
# (VRAMTRACE_TUI_TIMING), driving the real program in tmux.
#
# usage: bench/tui.sh [MILLIONS-OF-ALLOCATIONS] [DB]   (default 10; the DB,
# default /tmp/vramtrace-bench-tui-N.db, is made by bench/leaks when
# missing and kept).  Run from the build directory after `make bench`.
set -e
N=${1:-10}
DB=${2:-/tmp/vramtrace-bench-tui-$N.db}
VT=${VRAMTRACE:-./vramtrace}
GEN=${GEN_DB:-./bench/leaks}
command -v tmux >/dev/null || { echo "bench/tui.sh: needs tmux" >&2; exit 77; }
[ -f "$DB" ] || "$GEN" "$N" "$DB" 100
LOG=$(mktemp /tmp/vramtrace-bench-tui-XXXXXX)
SOCK=vt-bench-$$
tm() { tmux -L "$SOCK" "$@"; }
trap 'tm kill-server 2>/dev/null; [ -n "$KEEP_LOG" ] && cp "$LOG" "$KEEP_LOG"; rm -f "$LOG"' EXIT
lines() { wc -l <"$LOG"; }
# key K...: send one key and wait (at most 120 s) for its frame in the log.
key() {
	before=$(lines)
	tm send-keys -t b "$@"
	i=0
	while [ "$(lines)" -le "$before" ] && [ $i -lt 1200 ]; do
		sleep 0.1; i=$((i + 1))
	done
}
sync; cat "$DB" >/dev/null	# a warm page cache, as after record
tm -f /dev/null new-session -d -s b -x 120 -y 40 \
    "env TERM=xterm-256color LC_ALL=C.UTF-8 VRAMTRACE_TUI_TIMING=$LOG $VT tui $DB; sleep 600"
i=0
until grep -q first-frame "$LOG" 2>/dev/null || [ $i -ge 300 ]; do
	sleep 0.1; i=$((i + 1))
done
# Keys while the analysis still runs: the lists do not wait for it.
for k in 4 Down Down PgDn PgDn s S r r Enter Down Escape 6 B b 5 1; do
	key "$k"
done
echo "during the analysis:" >>"$LOG"
t0=$(date +%s)
until tm capture-pane -p -t b | grep -Eq 'LEAK|CLEAN|INCONCLUSIVE'; do
	sleep 0.5
done
echo "analysis done after about $(( $(date +%s) - t0 )) s more" >>"$LOG"
for k in 2 Down 3 s 4 Down Down PgDn PgDn PgDn s S r r Enter Down \
    Escape l l l l l a a 6 B b a g g 5 1; do
	key "$k"
done
echo "after the analysis:" >>"$LOG"
# Every order of all blocks, a next page of each, and a stream filter
# (each key is printed on its own).
echo "all blocks:" >>"$LOG"
for k in 4 a s PgDn r PgDn s s PgDn r s PgDn r s PgDn r PgDn r \
    t t t t PgDn t a; do
	key "$k"
done
echo "all blocks, by key:" >>"$LOG"
tm send-keys -t b q
awk -v db="$DB" '
/^first-frame/ { ff = $3 }
/^key/ { v[n++] = $3 }
/^during/ || /^after/ || /^all blocks,/ {
	m = 0; for (i = s; i < n; i++) if (v[i] > m) m = v[i]
	# median by insertion sort of this group
	k = 0; for (i = s; i < n; i++) w[k++] = v[i]
	for (i = 1; i < k; i++) { x = w[i]; for (j = i - 1; j >= 0 && w[j] > x; j--) w[j + 1] = w[j]; w[j + 1] = x }
	printf "keys %-22s %3d keys, median %7.2f ms, max %7.2f ms\n", $0, k, w[int(k / 2)], m
	s = n
}
/^analysis/ { print }
/^all blocks:/ { sep = 1 }
sep && /^key/ { printf " %s=%.1f", $2 == 1114117 ? "PgDn" : sprintf("%c", $2), $3 }
/^all blocks,/ { print ""; sep = 0 }
END { printf "first frame              %7.2f ms   (%s)\n", ff, db }
' "$LOG"
