#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What reading a runtime's frames costs the BPF program: emberd with the runtime's reader
# enabled = yes and = no in turns (ROUNDS x) while that runtime's workload runs, its main thread
# at real-time priority, the same process and the same frames each time:
#   v8        tests/workloads/nodeburn/app.js on node ([v8]): with it off, the same frame-pointer
#             walk through the JavaScript frames without the checks
#   hotspot   tests/workloads/javaburn (App) on java -XX:+PreserveFramePointer ([hotspot]): with
#             it off, the frame-pointer walk through the same Java frames (compiled code keeps
#             rbp frames under that flag) instead of the HotSpot step
# Per mode, over SECONDS: samples, BPF run time of the sampling program per run
# (prog_run_ns / prog_run_cnt: every CPU's samples, the workload's the most), and with the
# reader on its walks' own mean (<rt>.walk_mean_us: the whole user walk of the process, timed
# in BPF) and frames the runtime's step looked at per walk. Medians over the rounds, and each
# round's on/off ratio.
#
# usage: bench_rtwalk.sh [v8|hotspot] [SECONDS] [ROUNDS]   (default both, 15 s, 5 rounds; root)
set -u
: "${OUTPUT:?}" "${SRCDIR:?}"
RT=${1:-}
DUR=${2:-15}
ROUNDS=${3:-5}
EMBERD=${EMBERD:-$OUTPUT/emberd}
case $RT in
'') # both, one after the other (what tests/bench/run.sh runs)
	rc=0
	for r in v8 hotspot; do bash "$0" "$r" "$DUR" "$ROUNDS" || rc=1; done
	exit $rc
	;;
v8)
	NODE=${EMBER_NODE:-/usr/bin/node}
	[ -x "$NODE" ] || { echo "bench_rtwalk: no node" >&2; exit 1; }
	START=("$NODE" "$SRCDIR/tests/workloads/nodeburn/app.js")
	;;
hotspot)
	JAVA=${EMBER_JAVA:-$(command -v java)}
	[ -n "$JAVA" ] && [ -f "$OUTPUT/workloads/javaburn/App.class" ] ||
		{ echo "bench_rtwalk: no java, or no $OUTPUT/workloads/javaburn (make workloads)" >&2; exit 1; }
	START=("$JAVA" -XX:+PreserveFramePointer -cp "$OUTPUT/workloads/javaburn" App)
	;;
*) echo "usage: bench_rtwalk.sh v8|hotspot [SECONDS] [ROUNDS]" >&2; exit 2 ;;
esac
TMP=$(mktemp -d /tmp/ember-bench_rtwalk.XXXXXX)
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
[ "$(id -u)" -eq 0 ] || { echo "bench_rtwalk: needs root" >&2; exit 1; }
[ -x "$EMBERD" ] || { echo "bench_rtwalk: build first" >&2; exit 1; }
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
stats() { # URL: "walks walk_ms frames" of the runtime's section
	curl -sf "$1/api/v1/stats" | python3 -c 'import json, sys
s = json.load(sys.stdin).get(sys.argv[1], {})
f = s.get("checks", 0) if sys.argv[1] == "v8" else sum(s.get(k, 0) for k in
    ("walk_interpreted", "walk_compiled", "walk_stubs"))
print(s.get("walks", 0), s.get("walk_ms", 0), f)' "$RT"
}
metric() { # URL NAME: the profiler program's value (seconds as ns)
	curl -sf "$1/metrics" | awk -v m="$2" '$1 ~ "^" m "\\{" && $1 ~ /prog="profiler"/ {
		v = $2; if (m ~ /seconds/) v *= 1e9; printf "%.0f\n", v; exit }'
}
one() { # MODE(yes|no): prints "ns_per_run runs walk_us frames_per_walk"
	local p u e w r0 n0 r1 n1 t0 w0 c0 t1 w1 c1 tid
	p=$(port)
	u=http://127.0.0.1:$p
	"$EMBERD" --listen "127.0.0.1:$p" -F 999 -o "$RT.enabled=$1" >"$TMP/e.log" 2>&1 &
	e=$!
	for _ in $(seq 100); do curl -sf -o /dev/null "$u/healthz" && break; sleep 0.1; done
	"${START[@]}" $((DUR + 5)) >"$TMP/w.out" 2>&1 &
	w=$!
	PIDS+=($w)
	# the main thread alone at real-time priority (javaburn prints its tid; node runs
	# JavaScript on its main thread, whose tid is its pid)
	for _ in $(seq 100); do grep -q '^ready' "$TMP/w.out" && break; sleep 0.1; done
	tid=$(awk '/^ready/ { print ($4 != "" ? $4 : $2); exit }' "$TMP/w.out")
	chrt -f -p 1 "${tid:-$w}" >/dev/null 2>&1
	sleep 3
	r0=$(metric "$u" ember_bpf_run_time_seconds_total) n0=$(metric "$u" ember_bpf_runs_total)
	read -r t0 w0 c0 < <(stats "$u")
	sleep "$DUR"
	r1=$(metric "$u" ember_bpf_run_time_seconds_total) n1=$(metric "$u" ember_bpf_runs_total)
	read -r t1 w1 c1 < <(stats "$u")
	kill "$e" "$w" 2>/dev/null
	wait "$e" "$w" 2>/dev/null
	awk -v r=$((r1 - r0)) -v n=$((n1 - n0)) -v w0="$w0" -v w1="$w1" -v t=$((t1 - t0)) \
		-v c=$((c1 - c0)) 'BEGIN { printf "%.0f %d %.2f %.1f\n", n ? r / n : 0, n,
		t ? (w1 - w0) * 1000 / t : 0, t ? c / t : 0 }'
}
med() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
echo "bench_rtwalk $RT: ${DUR} s x $ROUNDS rounds at 999 Hz, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$ROUNDS"); do
	for m in yes no; do
		read -r ns n w c < <(one $m)
		echo "round $i $RT=$m: BPF $ns ns/run over $n runs; walk ${w} us, $c frames of the runtime/walk"
		echo "$ns" >>"$TMP/$m.ns"
		[ $m = yes ] && echo "$w" >>"$TMP/w.us" && on=$ns
	done
	awk -v a="$on" -v b="$ns" 'BEGIN { printf "%.3f\n", b ? a / b : 0 }' >>"$TMP/ratio"
	echo "round $i: on/off $(tail -1 "$TMP/ratio")"
done
echo "median BPF ns/run: $RT on $(med <"$TMP/yes.ns"), off $(med <"$TMP/no.ns"); on/off per round $(sort -n "$TMP/ratio" | tr '\n' ' ')(median $(med <"$TMP/ratio")); walk $(med <"$TMP/w.us") us"
