#!/bin/sh
# t-tui-resize.sh: a resize is never lost, whenever it comes.  curses notes
# a SIGWINCH in a flag it looks at only before it reads, so one that lands
# after that look and before a read() that blocks went unseen until the
# next key (CI once saw the 80x24 screen of t-tui.sh never come).  gdb
# makes that moment happen every time: after a key, it stops the real UI
# at its first call that reads or waits for the terminal once the key's
# frame is on the screen, the UI about to sleep there; tmux resizes the
# window while it is stopped, so the signal comes before the sleep; let
# go, the UI must draw the new size with no other key.  Skips without
# tmux or gdb, or where gdb may not attach to the UI (ptrace).
. "${srcdir:-.}/tests/lib.sh"
. "${srcdir:-.}/tests/tui-scenario.sh"
NTESTS=3
plan $NTESTS
. "${srcdir:-.}/tests/tui-tmux.sh"
GDB=${GDB:-$(command -v gdb)}
if [ -z "$GDB" ]; then
	skip $NTESTS "gdb not found"
	exit 0
fi

make_leak_db "$TMP/leak.db"
start "$TMP/leak.db"
wait_for 'Verdict +LEAK' && keys 4 && wait_for 'sort size'
# The UI is the pane's shell's one child (the shell runs `sleep` after it),
# found in /proc (no procps on a fresh machine): the fields after a
# process's "PID (NAME) " are its state and its parent.
pane=$(tm display-message -p -t ui '#{pane_pid}')
ui=
for stat in /proc/[0-9]*/stat; do
	# shellcheck disable=SC2046
	set -- $(sed 's/^.*) //' "$stat" 2>/dev/null)
	[ "${2:-}" = "$pane" ] && ui=${stat#/proc/} && ui=${ui%/stat}
done
tty=$(tm display-message -p -t ui '#{pane_tty}')

# drawn.sh: whether the screen shows the key's frame (waiting up to 1 s
# for tmux to take what the UI wrote).
cat >"$TMP/drawn.sh" <<SCRIPT
i=0
while [ \$i -lt 10 ]; do
	"$TMUX_BIN" -L "$SOCK" capture-pane -p -t ui | grep -q 'sort age' &&
	    exit 0
	sleep 0.1
	i=\$((i + 1))
done
exit 1
SCRIPT
# resize.sh: the resize, waited for until it has reached the terminal
# (which sends the SIGWINCH).
cat >"$TMP/resize.sh" <<SCRIPT
"$TMUX_BIN" -L "$SOCK" resize-window -t ui -x 80 -y 24
i=0
while [ \$i -lt 100 ] && [ "\$(stty -F $tty size)" != "24 80" ]; do
	sleep 0.1
	i=\$((i + 1))
done
echo "terminal while stopped: \$(stty -F $tty size)"
SCRIPT
cat >"$TMP/gdb.cmd" <<SCRIPT
handle SIGWINCH nostop noprint pass
set breakpoint pending on
break read
break poll
break ppoll
break select
break pselect
shell ( sleep 0.5; "$TMUX_BIN" -L "$SOCK" send-keys -t ui s ) &
set \$n = 0
set \$drawn = 1
while \$drawn != 0 && \$n < 50
	continue
	shell sh '$TMP/drawn.sh'
	set \$drawn = \$_shell_exitcode
	set \$n = \$n + 1
end
printf "stops: %d, drawn: %d\n", \$n, \$drawn
shell sh '$TMP/resize.sh'
delete
detach
SCRIPT

# The key is sent once gdb holds the UI and its breakpoints are set.
timeout 60 "$GDB" -q -nx -batch -p "$ui" -x "$TMP/gdb.cmd" \
    >"$TMP/gdb.log" 2>&1
if grep -q 'ptrace: Operation not permitted' "$TMP/gdb.log"; then
	skip $NTESTS "gdb may not attach to the UI here (ptrace)"
	exit 0
fi
grep -q '^stops: [0-9]*, drawn: 0$' "$TMP/gdb.log" &&
    grep -q '^terminal while stopped: 24 80$' "$TMP/gdb.log"
ok $? "gdb stopped the UI about to wait, its frame drawn, and the terminal became 80x24 there" ||
    sed 's/^/#   /' "$TMP/gdb.log"
wait_for '…  +\? help  q quit *$' && [ "$(wc -l <"$TMP/screen")" -le 24 ]
ok $? "no other key: the UI draws the new size, the footer whole at 80 columns"
keys q
i=0
while [ $i -lt 100 ] && kill -0 "$ui" 2>/dev/null; do
	sleep 0.1
	i=$((i + 1))
done
! kill -0 "$ui" 2>/dev/null
ok $? "q still quits"
