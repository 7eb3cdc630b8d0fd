# tui-tmux.sh: the TUI on a real terminal, in a private tmux server.
# Source it after lib.sh and plan, with NTESTS set: without tmux it skips
# them all and exits.  start DB [ARGS] runs the UI in a fresh 120x40
# session "ui"; screen prints it; wait_for PATTERN waits until it shows
# PATTERN and stops changing; keys sends keys; tm is tmux on the private
# server, which the EXIT trap kills.
TMUX_BIN=${TMUX_BIN:-$(command -v tmux)}
if [ -z "$TMUX_BIN" ] || ! [ -x "$TMUX_BIN" ]; then
	skip $NTESTS "tmux not found"
	exit 0
fi
SOCK="vt-test-$$"
tm() { "$TMUX_BIN" -L "$SOCK" "$@"; }
trap 'tm kill-server 2>/dev/null; if [ "$tap_failed" -eq 0 ]; then rm -rf "$TMP"; else echo "# kept $TMP"; fi' EXIT

# The server outlives every "ui" session: a session of its own holds it up.
# Killing the last session makes the server exit, and a new-session sent
# while it exits is lost (CI once saw a screen that never came).
tm -f /dev/null new-session -d -s hold "sleep 3600"
# start DB [ARGS]: a fresh session of 120x40 running the UI.
start() {
	tm kill-session -t ui 2>/dev/null
	tm new-session -d -s ui -x 120 -y 40 \
	    "env TERM=xterm-256color LC_ALL=C.UTF-8 '$VRAMTRACE' tui $*; sleep 60"
	i=0
	while [ $i -lt 100 ] && ! tm has-session -t ui 2>/dev/null; do
		sleep 0.1
		i=$((i + 1))
	done
}
screen() { tm capture-pane -p -t ui; }
# wait_for PATTERN: until the screen matches (at most about 60 s: a loaded
# machine, a sanitizer build), and then until two captures 0.1 s apart are
# the same (at most 2 s more), so that the checks that read $TMP/screen
# after it never see a screen the TUI is still drawing.
wait_for() {
	i=0
	while [ $i -lt 600 ]; do
		screen >"$TMP/screen" 2>/dev/null
		if grep -Eq -- "$1" "$TMP/screen"; then
			j=0
			while [ $j -lt 20 ]; do
				sleep 0.1
				screen >"$TMP/screen.next" 2>/dev/null
				cmp -s "$TMP/screen" "$TMP/screen.next" && break
				mv "$TMP/screen.next" "$TMP/screen"
				j=$((j + 1))
			done
			grep -Eq -- "$1" "$TMP/screen" && return 0
		fi
		sleep 0.1
		i=$((i + 1))
	done
	echo "# waited for: $1"; sed 's/^/#   /' "$TMP/screen"
	return 1
}
keys() { tm send-keys -t ui "$@"; }
