#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What reading V8's JavaScript frames costs the BPF program: emberd with [v8] enabled = yes and
# = no in turns (ROUNDS x) while tests/workloads/nodeburn/app.js runs at real-time priority (the
# same process, the same frames: with it off, the same frame-pointer walk without the checks).
# Per mode, over SECONDS: samples, BPF run time of the sampling program per run
# (prog_run_ns / prog_run_cnt: every CPU's samples, node's the most), and with it on the V8 walks'
# own mean (v8.walk_mean_us: the whole user walk of the node process, timed in BPF) and frames
# checked per walk. Medians over the rounds.
#
# usage: bench_v8.sh [SECONDS] [ROUNDS]   (default 15 3; root)
set -u
: "${OUTPUT:?}" "${SRCDIR:?}"
DUR=${1:-15}
ROUNDS=${2:-3}
EMBERD=${EMBERD:-$OUTPUT/emberd}
NODE=${EMBER_NODE:-/usr/bin/node}
W=$SRCDIR/tests/workloads/nodeburn/app.js
TMP=$(mktemp -d /tmp/ember-bench_v8.XXXXXX)
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
[ "$(id -u)" -eq 0 ] || { echo "bench_v8: needs root" >&2; exit 1; }
[ -x "$EMBERD" ] && [ -x "$NODE" ] || { echo "bench_v8: build first, and a node" >&2; exit 1; }
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
stat() { # URL SECTION KEY
	curl -sf "$1/api/v1/stats" | python3 -c 'import json, sys
d = json.load(sys.stdin); s = d.get(sys.argv[1], {}) if sys.argv[1] != "-" else d
print(s.get(sys.argv[2], 0))' "$2" "$3"
}
metric() { # URL NAME: the profiler program's value (seconds as ns)
	curl -sf "$1/metrics" | awk -v m="$2" '$1 ~ "^" m "\\{" && $1 ~ /prog="profiler"/ {
		v = $2; if (m ~ /seconds/) v *= 1e9; printf "%.0f\n", v; exit }'
}
one() { # MODE(yes|no): prints "ns_per_run runs v8_walk_us checks_per_walk"
	local p u e r0 n0 r1 n1 w0 w1 c0 c1 t0 t1
	p=$(port)
	u=http://127.0.0.1:$p
	"$EMBERD" --listen "127.0.0.1:$p" -F 999 -o v8.enabled="$1" >"$TMP/e.log" 2>&1 &
	e=$!
	for _ in $(seq 100); do curl -sf -o /dev/null "$u/healthz" && break; sleep 0.1; done
	chrt -f 1 "$NODE" "$W" $((DUR + 5)) >"$TMP/n.out" 2>&1 &
	PIDS+=($!)
	sleep 3
	r0=$(metric "$u" ember_bpf_run_time_seconds_total) n0=$(metric "$u" ember_bpf_runs_total)
	w0=$(stat "$u" v8 walk_ms) t0=$(stat "$u" v8 walks) c0=$(stat "$u" v8 checks)
	sleep "$DUR"
	r1=$(metric "$u" ember_bpf_run_time_seconds_total) n1=$(metric "$u" ember_bpf_runs_total)
	w1=$(stat "$u" v8 walk_ms) t1=$(stat "$u" v8 walks) c1=$(stat "$u" v8 checks)
	kill "$e"
	wait "$e" 2>/dev/null
	wait 2>/dev/null
	awk -v r=$((r1 - r0)) -v n=$((n1 - n0)) -v w0="$w0" -v w1="$w1" -v t=$((t1 - t0)) \
		-v c=$((c1 - c0)) 'BEGIN { printf "%.0f %d %.2f %.1f\n", n ? r / n : 0, n,
		t ? (w1 - w0) * 1000 / t : 0, t ? c / t : 0 }'
}
med() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
for i in $(seq "$ROUNDS"); do
	for m in yes no; do
		read -r ns n w c < <(one $m)
		echo "round $i v8=$m: BPF $ns ns/run over $n runs; V8 walk ${w} us, $c frames checked/walk"
		echo "$ns" >>"$TMP/$m.ns"
		[ $m = yes ] && echo "$w" >>"$TMP/w.us"
	done
done
echo "median BPF ns/run: v8 on $(med <"$TMP/yes.ns"), off $(med <"$TMP/no.ns"); V8 walk $(med <"$TMP/w.us") us"
