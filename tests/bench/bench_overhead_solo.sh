#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# emberd vs BCC's profile-bpfcc, each ALONE on the host in turn (ROUNDS x: emberd, BCC), on the
# same 2-thread burn workload: steady-state BPF run time per sample and the process's own CPU per
# 1000 samples, over a window of SECONDS that starts 3 s after the tool's program is running.
#
# Why besides bench_overhead.sh (all tools at once): on these VMs a BPF program's run time
# depends on whether its sample comes first in a timer interrupt (cold caches, ~2x) or right
# after another tool's (warm), i.e. on the phases of the tools' timers. Side by side that order
# is fixed for a whole run; alone, every tool pays the cold case.
#
# usage: bench_overhead_solo.sh [SECONDS] [ROUNDS]   (default 15 3; root, bpfcc-tools)
set -u
: "${OUTPUT:?}"
DUR=${1:-15}
ROUNDS=${2:-3}
BENCH=bench_overhead_solo
. "$(dirname "$0")/bcc_setup.sh"

# prog NAME: "run_time_ns run_cnt" of the perf_event program called NAME
prog() {
	bpftool prog show -j 2>/dev/null | python3 -c 'import json, sys
for p in json.load(sys.stdin):
    if p.get("type") == "perf_event" and p.get("name") == sys.argv[1]:
        print(p.get("run_time_ns", 0), p.get("run_cnt", 0))' "$1"
}
# emberd's exec hook (a raw tracepoint program): its run time counts too
xprog() {
	bpftool prog show -j 2>/dev/null | python3 -c 'import json, sys
for p in json.load(sys.stdin):
    if p.get("name") == "on_exec":
        print(p.get("run_time_ns", 0), p.get("run_cnt", 0))' | tail -1
}

one() { # one TOOL: prints "TOOL bpf_ns_per_sample process_ms_per_1000"
	local tool=$1 name pid t0 c0 t1 c1 u0 u1
	"$BURN" $((DUR + 60)) 2 >/dev/null &
	local burn=$!
	PIDS+=($burn)
	if [ "$tool" = emberd ]; then
		"$EMBERD" --listen 127.0.0.1:0 >"$TMP/emberd.log" 2>&1 &
		pid=$!
		name=do_sample
	else
		profile-bpfcc -F 99 -f $((DUR + 40)) >/dev/null 2>"$TMP/bcc.err" &
		pid=$!
		name=do_perf_event
	fi
	PIDS+=($pid)
	for _ in $(seq 600); do [ -n "$(prog $name)" ] && break; sleep 0.1; done
	[ "$tool" = bcc ] && pid=$(pgrep -n -f '^/usr/bin/python3 .*profile-bpfcc -F 99 -f ')
	sleep 3
	read -r t0 c0 <<<"$(prog $name)"; u0=$(cpu_ns "$pid")
	[ "$tool" = emberd ] && { read -r x0 _ <<<"$(xprog)"; t0=$((t0 + ${x0:-0})); }
	sleep "$DUR"
	read -r t1 c1 <<<"$(prog $name)"; u1=$(cpu_ns "$pid")
	[ "$tool" = emberd ] && { read -r x1 _ <<<"$(xprog)"; t1=$((t1 + ${x1:-0})); }
	kill "$pid" "$burn" 2>/dev/null
	[ "$tool" = bcc ] && pkill -f 'profile-bpfcc -F 99 -f ' 2>/dev/null
	wait 2>/dev/null
	awk -v tool="$tool" -v t0="$t0" -v c0="$c0" -v t1="$t1" -v c1="$c1" -v u0="$u0" -v u1="$u1" \
		'BEGIN { n = c1 - c0; if (n <= 0) { print tool, "failed"; exit 1 }
		         printf "%s %.0f %.2f %d\n", tool, (t1 - t0) / n, (u1 - u0) / n / 1e3, n }'
}

echo "| round | tool | samples | BPF ns / sample | process ms / 1000 | total ms / 1000 |"
echo "| ---: | --- | ---: | ---: | ---: | ---: |"
for r in $(seq "$ROUNDS"); do
	for tool in emberd bcc; do
		one "$tool" | awk -v r="$r" '$2 != "failed" {
			printf "| %d | %s | %d | %d | %.2f | %.2f |\n", r, $1, $4, $2, $3, $2 / 1e3 + $3 }' |
			tee -a "$TMP/rows"
	done
done
awk -F'|' '{ t = $3; gsub(/ /, "", t); s[t] += $7; n[t]++ }
	END { for (t in s) printf "mean total %s: %.2f ms / 1000 samples over %d rounds\n", t, s[t] / n[t], n[t] }' \
	"$TMP/rows"
