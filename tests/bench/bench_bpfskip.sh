#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Samples the timer fired for but emberd's BPF program did not see: the kernel skips a
# perf_event's BPF program while a BPF map system call runs on that CPU (bpf_prog_active), and
# emberd's own drain makes such calls. emberd at 999 Hz for SECONDS beside two CPU-bound loops
# (no map calls), then beside two loops of `bpftool map dump` of emberd's largest hash map (map
# calls on both CPUs): samples taken / (999 x CPUs x the daemon's uptime between two counter
# reads) for each. docs/benchmarks.md (emberd soak) has the figures.
#
# usage: bench_bpfskip.sh [SECONDS]   (default 15; root, bpftool)
set -u
: "${OUTPUT:?}"
SECS=${1:-15}
EMBERD=${EMBERD:-$OUTPUT/emberd}
command -v bpftool >/dev/null || { echo "bench_bpfskip: bpftool not installed" >&2; exit 1; }
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
URL=http://127.0.0.1:$port
LOG=$(mktemp)
trap 'rm -f "$LOG"' EXIT

one() { # MODE: "MODE taken expected ratio"
	local mode=$1 E s0 s1 mid c
	local L=()
	"$EMBERD" --listen "127.0.0.1:$port" -F 999 >"$LOG" 2>&1 &
	E=$!
	for _ in $(seq 100); do curl -sf "$URL/healthz" >/dev/null && break; sleep 0.1; done
	sleep 2
	case $mode in
	burners)
		for c in 0 1; do taskset -c $c sh -c 'while :; do :; done' & L+=($!); done ;;
	map-calls)
		mid=$(bpftool map list -j | python3 -c 'import json, sys
m = [x for x in json.load(sys.stdin) if x["type"] == "hash"]
print(max(m, key=lambda x: x.get("max_entries", 0))["id"])')
		for c in 0 1; do
			taskset -c $c sh -c "while :; do bpftool map dump id $mid >/dev/null 2>&1; done" &
			L+=($!)
		done ;;
	esac
	sleep 1
	s0=$(curl -sf "$URL/api/v1/stats")
	sleep "$SECS"
	s1=$(curl -sf "$URL/api/v1/stats")
	kill "${L[@]}" 2>/dev/null
	kill "$E"
	wait "$E" 2>/dev/null
	S0="$s0" S1="$s1" python3 -c '
import json, os, sys
a, b = json.loads(os.environ["S0"]), json.loads(os.environ["S1"])
el = (b["uptime_s"] - b["sampler"]["age_s"]) - (a["uptime_s"] - a["sampler"]["age_s"])
t = b["sampler"]["samples"] - a["sampler"]["samples"]
e = 999 * b["sampler"]["cpus_attached"] * el
print("| %s | %d / %.0f = %.2f%% |" % (sys.argv[1], t, e, 100 * t / e))' "$mode"
}
echo "| emberd -F 999, $SECS s, beside | samples taken / expected |"
echo "|---|---|"
one burners
one map-calls
