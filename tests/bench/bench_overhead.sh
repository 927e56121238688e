#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# emberd's sampling overhead side by side with `perf record -F 99 -a -g` (+ perf script +
# stackcollapse) and BCC's `profile-bpfcc -F 99 -f`, all three sampling the same host at the
# same time, on a 2-thread burn workload. Per tool: CPU of the process (user+sys from
# /proc/PID/task/*/schedstat, ns precision) plus the BPF program's run time
# (kernel.bpf_stats_enabled=1), per 1000 samples; in steady state (a window after start-up) and
# for the whole run (start-up, compilation, final output included). emberd's RSS (VmHWM).
#
# Whole-run CPU of each process from its rusage with microsecond precision (rusage.py: GNU time
# truncates user and sys to 10 ms each, which mattered for emberd's ~50 ms).
#
# usage: bench_overhead.sh [SECONDS]   (default 20; needs root, perf, bpfcc-tools)
# BCC needs kernel headers: BCC_KERNEL_SOURCE, or /usr/src/linux-headers-*-{common,amd64} joined.
set -u
: "${OUTPUT:?}" "${SRCDIR:?}"
DUR=${1:-20}
BENCH=bench_overhead
RUSAGE="python3 $(dirname "$0")/rusage.py"
. "$(dirname "$0")/bcc_setup.sh"
command -v perf >/dev/null || { echo "bench_overhead: perf missing (apt-get install linux-perf)" >&2; exit 1; }
if [ -n "${FLAMEGRAPH_DIR:-}" ] && [ -x "$FLAMEGRAPH_DIR/stackcollapse-perf.pl" ]; then
	COLLAPSE="$FLAMEGRAPH_DIR/stackcollapse-perf.pl --all"
elif [ -x /opt/FlameGraph/stackcollapse-perf.pl ]; then
	COLLAPSE="/opt/FlameGraph/stackcollapse-perf.pl --all"
else
	COLLAPSE="$OUTPUT/ember collapse --all"
fi
# bpf ID: "run_time_ns run_cnt" of BPF program ID
bpf() {
	bpftool prog show id "$1" -j 2>/dev/null |
		python3 -c 'import json, sys; p = json.load(sys.stdin); print(p.get("run_time_ns", 0), p.get("run_cnt", 0))'
}
# prog_ids NAME: ids of the loaded programs called NAME
prog_ids() {
	bpftool prog show -j 2>/dev/null |
		python3 -c 'import json, sys; [print(p["id"]) for p in json.load(sys.stdin) if p.get("name") == sys.argv[1]]' "$1"
}

"$BURN" $((DUR + 60)) 2 >/dev/null &
PIDS+=($!)
# BCC compiles with clang first: start it, wait until its program runs, then the others
# (a duration, not SIGINT: background jobs of a script ignore SIGINT, and so would python)
$RUSAGE "$TMP/bcc.time" profile-bpfcc -F 99 -f $((DUR + 10)) \
	>"$TMP/bcc.folded" 2>"$TMP/bcc.err" &
PIDS+=($!)
BCC_TIME=$!
prog_ids do_perf_event >"$TMP/ids.before"
BCC_PROG=
for _ in $(seq 600); do
	BCC_PROG=$(prog_ids do_perf_event | grep -vxF -f "$TMP/ids.before" | head -1)
	[ -n "$BCC_PROG" ] && break
	kill -0 "$BCC_TIME" 2>/dev/null || break
	sleep 0.1
done
BCC=$(pgrep -n -f '^/usr/bin/python3 .*profile-bpfcc -F 99 -f ')
[ -n "$BCC_PROG" ] && [ -n "$BCC" ] || { echo "bench_overhead: BCC profile did not start" >&2; cat "$TMP/bcc.err" >&2; exit 1; }
$RUSAGE "$TMP/emberd.time" "$EMBERD" --listen 127.0.0.1:0 \
	--dump-file "$TMP/emberd.folded" >"$TMP/emberd.log" 2>&1 &
EPID=$!
PIDS+=($EPID)
$RUSAGE "$TMP/perf.time" perf record -F 99 -a -g -o "$TMP/perf.data" \
	-- sleep $((DUR + 4)) >"$TMP/perf.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do grep -q 'program id' "$TMP/emberd.log" && break; sleep 0.1; done
E_PROG=$(sed -n 's/.*BPF program id \([0-9]*\).*/\1/p' "$TMP/emberd.log")
# emberd's other program, the exec hook: its run time counts too (its runs are not samples)
X_PROG=$(prog_ids on_exec | sort -n | tail -1)
EMBERD_PID=$(pgrep -P "$EPID" -x emberd)
PERF=$(pgrep -n -x perf)
[ -n "$E_PROG" ] && [ -n "$EMBERD_PID" ] || { echo "bench_overhead: emberd did not start" >&2; cat "$TMP/emberd.log" >&2; exit 1; }
sleep 2 # start-up done: the steady-state window begins
e0=$(cpu_ns "$EMBERD_PID"); b0=$(cpu_ns "$BCC"); p0=$(cpu_ns "$PERF")
read -r eb0 ec0 <<<"$(bpf "$E_PROG")"; read -r bb0 bc0 <<<"$(bpf "$BCC_PROG")"
[ -n "$X_PROG" ] && read -r xb0 _ <<<"$(bpf "$X_PROG")"; eb0=$((eb0 + ${xb0:-0}))
sleep "$DUR"
e1=$(cpu_ns "$EMBERD_PID"); b1=$(cpu_ns "$BCC"); p1=$(cpu_ns "$PERF")
read -r eb1 ec1 <<<"$(bpf "$E_PROG")"; read -r bb1 bc1 <<<"$(bpf "$BCC_PROG")"
[ -n "$X_PROG" ] && read -r xb1 _ <<<"$(bpf "$X_PROG")"; eb1=$((eb1 + ${xb1:-0}))
rss_kb=$(awk '/VmHWM/ {print $2}' /proc/"$EMBERD_PID"/status)
kill -USR1 "$EMBERD_PID"; sleep 1
kill -TERM "$EMBERD_PID"
wait "$EPID" 2>/dev/null
wait "$BCC_TIME" 2>/dev/null # BCC symbolizes everything at exit
while kill -0 "$PERF" 2>/dev/null; do sleep 0.2; done
sleep 0.5
$RUSAGE "$TMP/script.time" perf script -i "$TMP/perf.data" >"$TMP/perf.txt" 2>/dev/null
$RUSAGE "$TMP/collapse.time" $COLLAPSE "$TMP/perf.txt" >"$TMP/perf.folded"

perf_samples=$(grep -c -E '^\S.*[0-9]+\.[0-9]+: +[0-9]+ ' "$TMP/perf.txt")
tsum() { awk '{printf "%.0f\n", ($2 + $3) * 1e9}' "$1"; }
python3 - "$DUR" "$e0" "$e1" "$eb0" "$eb1" "$ec0" "$ec1" "$b0" "$b1" "$bb0" "$bb1" "$bc0" "$bc1" \
	"$p0" "$p1" "$(tsum "$TMP/emberd.time")" "$(tsum "$TMP/bcc.time")" "$(tsum "$TMP/perf.time")" \
	"$(tsum "$TMP/script.time")" "$(tsum "$TMP/collapse.time")" "$perf_samples" "$rss_kb" \
	"$(awk '{print $4}' "$TMP/emberd.time")" "$(awk '{s += $NF} END {print s}' "$TMP/emberd.folded")" <<'PY'
import sys
a = [float(x) for x in sys.argv[1:]]
(dur, e0, e1, eb0, eb1, ec0, ec1, b0, b1, bb0, bb1, bc0, bc1, p0, p1, e_all, b_all, p_all,
 script, collapse, psamples, rss_kb, e_maxrss, e_dumped) = a
ms = lambda ns: ns / 1e6
es, bs = ec1 - ec0, bc1 - bc0
e_steady = ms((e1 - e0) + (eb1 - eb0)) / es * 1000
b_steady = ms((b1 - b0) + (bb1 - bb0)) / bs * 1000
# perf's steady window: its samples in the window ~ the BPF tools' (same frequency, same CPUs)
p_steady = ms(p1 - p0) / es * 1000
p_whole = ms(p_all + script + collapse) / psamples * 1000
e_whole = ms(e_all + eb1) / ec1 * 1000
b_whole = ms(b_all + bb1) / bc1 * 1000
print(f"window {dur:.0f} s: emberd {es:.0f} samples, BCC {bs:.0f}, perf {psamples:.0f} (whole run)")
print()
print("| tool | steady CPU+BPF ms / 1000 samples | whole run ms / 1000 samples | ratio to emberd (steady / whole) |")
print("| --- | ---: | ---: | ---: |")
print(f"| emberd | {e_steady:.2f} (BPF {ms(eb1 - eb0) / es * 1000:.2f}) | {e_whole:.2f} | 1 / 1 |")
print(f"| BCC profile -F 99 -f | {b_steady:.2f} (BPF {ms(bb1 - bb0) / bs * 1000:.2f}) | {b_whole:.2f} | {b_steady / e_steady:.2f} / {b_whole / e_whole:.2f} |")
print(f"| perf record -F 99 -a -g (+ script + collapse) | {p_steady:.2f} (record only) | {p_whole:.2f} | {p_steady / e_steady:.2f} / {p_whole / e_whole:.2f} |")
print()
print(f"perf whole run: record {ms(p_all):.0f} ms, script {ms(script):.0f} ms, collapse {ms(collapse):.0f} ms")
print(f"emberd RSS (VmHWM): {rss_kb / 1024:.1f} MiB; samples in its dump: {e_dumped:.0f}")
print(f"emberd process CPU: first 2 s {ms(e0):.1f} ms, window {ms(e1 - e0):.1f} ms, "
      f"dump and exit {ms(e_all - e1):.1f} ms; BPF over the run {ms(eb1):.1f} ms")
PY
echo
sed -n 's/^emberd: info: sampled /emberd at exit: sampled /p' "$TMP/emberd.log"
sed -n 's/^emberd: info: emberd .* started: .*; start-up took /emberd start-up (to READY): /p' "$TMP/emberd.log"
