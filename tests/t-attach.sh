#!/bin/sh
# t-attach.sh: vramtrace attach through a fake libnvidia-ml that reports a
# growing usage for one pid on device 1, a constant one on device 0, and
# 1 GiB for another pid: the same dlopen and NVML calls as on a GPU.
. "${srcdir:-.}/tests/lib.sh"
plan 13
FAKE="${top_builddir:-.}/tests/libfake-nvml.so"
q() { "$VRAMTRACE" sql "$1" "$2" --format csv | tail -n +2; }

VRAMTRACE_NVML_LIB="$TMP/no-such-libnvidia-ml.so" run "$VRAMTRACE" attach $$ -o "$TMP/none.db"
expect 7 '^vramtrace: cannot load NVML' "without NVML: one line, exit 7"
[ "$(wc -l <"$TMP/err")" -eq 1 ] && [ ! -e "$TMP/none.db" ]
ok $? "...one line only, and no database"
run "$VRAMTRACE" attach 4194305 -o "$TMP/none.db"
expect 4 "no process 4194305" "no such process: exit 4"

export VRAMTRACE_NVML_LIB="$FAKE"
# 2.5 s: about 12 steps of 200 ms, enough for the shape model to call the
# uneven growth of device 1 (4 to 12 MiB a step, as samples fall) a leak.
sleep 2.5 &
pid=$!
export FAKE_NVML_PID=$pid FAKE_NVML_PERIOD_MS=100 FAKE_NVML_GROWTH=4194304
t0=$(date +%s)
run "$VRAMTRACE" attach $pid -o "$TMP/a.db" --interval 20 --step-ms 200
t1=$(date +%s)
wait $pid
[ $rc -eq 0 ] && [ $((t1 - t0)) -le 5 ] && grep -q 'streams and blocks are not visible' "$TMP/out"
ok $? "stops when the process ends, and says what it cannot see"
[ "$(q "$TMP/a.db" "select source, complete, step_source from runs")" = "attach,1,time" ] &&
    [ "$(q "$TMP/a.db" "select pid from processes")" = "$pid" ]
ok $? "an attach run with the process's pid"
[ "$(q "$TMP/a.db" "select count(*), min(used_bytes), max(used_bytes) from usage_samples where device = 0")" = "$(q "$TMP/a.db" "select count(*), 104857600, 104857600 from usage_samples where device = 0")" ] &&
    [ "$(q "$TMP/a.db" "select count(*) > 20 from usage_samples where device = 0")" = 1 ]
ok $? "device 0: the pid's constant usage, sampled every interval"
# Device 1 grows: never down, up by 4 MiB per 100 ms overall, and the other
# pid's 1 GiB is never taken.
[ "$(q "$TMP/a.db" "select count(*) from usage_samples a join usage_samples b on b.device = a.device and b.time_ns > a.time_ns where a.device = 1 and b.used_bytes < a.used_bytes")" = 0 ] &&
    [ "$(q "$TMP/a.db" "select max(used_bytes) - min(used_bytes) >= 40 * 1048576 and max(used_bytes) < 1073741824 from usage_samples where device = 1")" = 1 ]
ok $? "device 1: the growth, in order, and only this pid's"
[ "$(q "$TMP/a.db" "select count(*) between 10 and 14, max(end_ns) - min(end_ns) = (count(*) - 1) * 200000000 from steps")" = "1,1" ]
ok $? "steps cut every --step-ms"
# leaks on the samples: a verdict per device, the run's on their total.
run "$VRAMTRACE" leaks "$TMP/a.db" --format json
jq_py "$TMP/out" 'd["verdict"] == "LEAK" and d["usage_only"] and [(s["device"], s["stream"], s["verdict"]) for s in d["streams"]] == [(0, None, "CLEAN"), (1, None, "LEAK")] and d["streams"][0]["live_bytes"] == 104857600'
ok $? "leaks: LEAK on the growing device 1, CLEAN on the constant device 0"
run "$VRAMTRACE" leaks "$TMP/a.db"
grep -q '^attach saw total usage per device only; streams and blocks are not visible$' "$TMP/out" &&
    grep -Eq '^ +0 +100\.0 MiB +\+0 B +CLEAN$' "$TMP/out" &&
    grep -Eq '^ +1 .* LEAK$' "$TMP/out" && grep -q 'mostly on device 1' "$TMP/out"
ok $? "leaks as text: says what attach cannot see, a verdict per device"
# One description of a run: info, report and the TUI name the devices
# that were sampled, though no stream or allocation names them.
"$VRAMTRACE" info "$TMP/a.db" --format json >"$TMP/info.json" &&
    "$VRAMTRACE" report "$TMP/a.db" --format json >"$TMP/report.json" &&
    "$VRAMTRACE" tui --dump overview "$TMP/a.db" >"$TMP/tui.txt" &&
    jq_py "$TMP/info.json" 'd["devices"] == 2' &&
    jq_py "$TMP/report.json" 'd["devices"] == 2' &&
    grep -Eq '^ +Devices +2: 0, 1$' "$TMP/tui.txt"
ok $? "info, report and the TUI: the 2 sampled devices"

sleep 30 &
pid=$!
export FAKE_NVML_PID=$pid
run "$VRAMTRACE" attach $pid -o "$TMP/d.db" --interval 50 --duration 1
[ $rc -eq 0 ] && kill -0 $pid && [ "$(q "$TMP/d.db" "select complete from runs")" = 1 ]
ok $? "--duration stops sampling and leaves the process alone"
"$VRAMTRACE" attach $pid -o "$TMP/i.db" --interval 50 >/dev/null 2>&1 &
apid=$!
catching $apid 2	# SIGINT: then a second of samples every 50 ms
sleep 1
kill -INT $apid
wait $apid
st=$?
kill $pid
[ $st -eq 0 ] && [ "$(q "$TMP/i.db" "select complete, (select count(*) > 5 from usage_samples) from runs")" = "1,1" ]
ok $? "SIGINT stops it and keeps the run"
done_testing
