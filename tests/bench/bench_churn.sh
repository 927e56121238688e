#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What process churn costs emberd: two CPU burners, then the same burners with ~200
# short processes a second beside them (tests/workloads/spawn at a fixed rate: /bin/true, a small
# C program of ours that spins 2 ms in main, and a shell pipeline), each phase for SECONDS at 99 Hz:
#   - emberd's CPU (process user + sys from /proc, plus its BPF programs' run time from /metrics)
#     per second in each phase, and the difference over the processes started in the churn phase
#     (the kernel's fork counter): emberd CPU per new process;
#   - samples lost (sampler and store counters) and the share of expected samples taken;
#   - emberd's RSS every 5 s through the churn: a host that runs many short processes must hold
#     what its live processes need, not grow with the processes it has seen.
#
# usage: bench_churn.sh [SECONDS]   (default 30; root)
set -u
: "${OUTPUT:?}" "${SRCDIR:?}"
DUR=${1:-30}
EMBERD=${EMBERD:-$OUTPUT/emberd}
W=$OUTPUT/workloads
for b in spawn burn shortlived; do
	[ -x "$W/$b" ] || { echo "bench_churn: $W/$b missing (make workloads)" >&2; exit 1; }
done
TMP=$(mktemp -d /tmp/ember-churn.XXXXXX)
BG=()
trap 'for p in "${BG[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$TMP"' EXIT

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$EMBERD" --listen "127.0.0.1:$PORT" >"$TMP/emberd.log" 2>&1 &
EPID=$!
BG+=($EPID)
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$PORT/healthz" && break; sleep 0.1; done

# snapshot: "monotonic_s forks cpu_s bpf_s samples lost rss_kb"
snapshot() {
	python3 - "$EPID" "$PORT" "$(getconf CLK_TCK)" <<'PY'
import json, re, sys, time, urllib.request
pid, port, hz = sys.argv[1], sys.argv[2], float(sys.argv[3])
f = open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()
cpu = (int(f[11]) + int(f[12])) / hz
rss = int(re.search(r"^VmRSS:\s+(\d+)", open("/proc/%s/status" % pid).read(), re.M).group(1))
forks = int(re.search(r"^processes (\d+)", open("/proc/stat").read(), re.M).group(1))
m = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % port).read().decode()
def metric(name, labels=""):  # summed over every label set that matches
    return sum(float(v) for v in re.findall(r"^%s(?:\{[^}]*%s[^}]*\})? ([0-9.e+-]+)$" % (
        name, re.escape(labels)), m, re.M))
lost = (metric("ember_lost_samples_total") + metric("ember_store_dropped_samples_total") +
        metric("ember_sampler_events_total", 'kind="lost_in_bpf"'))
print(time.monotonic(), forks, cpu, metric("ember_bpf_run_time_seconds_total"),
      metric("ember_samples_total"), lost, rss)
PY
}
# phase NAME: SECONDS of whatever runs; writes NAME: "seconds forks cpu_s bpf_s samples lost"
phase() {
	local a b
	a=$(snapshot)
	: >"$TMP/$1.rss"
	# (the snapshots take a moment: the phase's length is measured, not assumed)
	for _ in $(seq $((DUR / 5))); do
		sleep 5
		snapshot | awk '{ print $7 }' >>"$TMP/$1.rss"
	done
	b=$(snapshot)
	python3 -c 'import sys; a = list(map(float, sys.argv[1].split())); b = list(map(float, sys.argv[2].split())); print(" ".join("%.6f" % (y - x) for x, y in zip(a[:6], b[:6])))' "$a" "$b" >"$TMP/$1"
}

sleep 3 # start-up: kallsyms, the first tables
"$W/burn" $((DUR * 2 + 30)) >/dev/null &
BG+=($!)
"$W/burn" $((DUR * 2 + 30)) >/dev/null &
BG+=($!)
sleep 2
phase quiet
cat >"$TMP/pipe.sh" <<'SH'
echo churn | sed s/c/C/ | wc -c >/dev/null
SH
"$W/spawn" 100 "$DUR" /bin/true >"$TMP/spawn1.out" &
BG+=($!)
"$W/spawn" 60 "$DUR" "$W/shortlived" 2 >"$TMP/spawn2.out" &
BG+=($!)
"$W/spawn" 40 "$DUR" /bin/sh "$TMP/pipe.sh" >"$TMP/spawn3.out" &
BG+=($!)
phase churn
sleep 1
RSS_END=$(awk '/^VmRSS/ { print $2 }' /proc/$EPID/status)
CPUS=$(nproc)

python3 - "$TMP/quiet" "$TMP/churn" "$TMP/churn.rss" "$CPUS" "$RSS_END" <<'PY'
import sys
q = list(map(float, open(sys.argv[1]).read().split()))
c = list(map(float, open(sys.argv[2]).read().split()))
rss = [int(x) for x in open(sys.argv[3]).read().split()]
cpus, rss_end = int(sys.argv[4]), int(sys.argv[5])
def row(name, v):
    s, forks, cpu, bpf, n, lost = v
    exp = s * 99 * cpus
    print("| %s | %.0f s | %.0f | %.0f /s | %.1f ms/s | %.1f ms/s | %.2f us | %d | %.2f%% |" % (
        name, s, n, forks / s, cpu / s * 1e3, bpf / s * 1e3, (cpu + bpf) / n * 1e6 if n else 0,
        lost, 100 * n / exp))
print("| phase | length | samples | new processes | emberd CPU | BPF | CPU + BPF per sample | lost | samples taken of CPUs x 99 Hz |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
row("two burners", q)
row("burners + churn", c)
extra = (c[2] + c[3]) / c[0] - (q[2] + q[3]) / q[0]
per = extra * c[0] / c[1] if c[1] else 0
print()
print("emberd CPU per new process (churn minus quiet, per fork): %.1f us" % (per * 1e6))
print("emberd RSS through the churn (every 5 s): %s MiB; after: %.1f MiB" % (
    " ".join("%.1f" % (r / 1024) for r in rss), rss_end / 1024))
PY
cat "$TMP"/spawn*.out | sed 's/^/# spawn: /'
