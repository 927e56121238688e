#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What a new process costs emberd, counted by emberd itself: a shell loop starting /bin/true
# about 40 times a second (as bench_newproc.sh) beside a one-thread burner, SECONDS long, after
# 5 s of the burner alone; /metrics before and after the loop, the differences divided by the
# loop's processes: the drain's wake-ups (a record asked; process events due), the batches
# handed to the worker, bpf() calls on process lists, mappings read, /proc reads that failed
# (the process gone), /proc/PID/exe stats, questions answered "gone" without /proc. One emberd,
# RUNS times (root; EMBERD= another build).
#
# usage: bench_newproc_counts.sh [RUNS] [SECONDS]   (defaults 2, 10)
set -u
: "${OUTPUT:?}"
RUNS=${1:-2}
DUR=${2:-10}
EMBERD=${EMBERD:-$OUTPUT/emberd}
[ -x "$OUTPUT/workloads/burn" ] || { echo "bench_newproc_counts: $OUTPUT/workloads/burn missing (make workloads)" >&2; exit 1; }
TMP=$(mktemp -d /tmp/ember-newproc-counts.XXXXXX)
BG=()
trap 'for p in "${BG[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$TMP"' EXIT
echo "# machine: $(uptime -p), load$(cut -d' ' -f1-3 /proc/loadavg | sed 's/^/ /'), $(nproc) CPUs; $EMBERD"
for i in $(seq "$RUNS"); do
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	"$EMBERD" --listen "127.0.0.1:$port" >"$TMP/emberd.log" 2>&1 &
	E=$!
	"$OUTPUT/workloads/burn" $((DUR + 30)) >/dev/null &
	B=$!
	BG=("$E" "$B")
	for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$port/healthz" && break; sleep 0.1; done
	sleep 5
	curl -sf "http://127.0.0.1:$port/metrics" >"$TMP/m0"
	bash "$(dirname "$0")/newproc_loop.sh" "$DUR" "$TMP/n"
	sleep 0.5 # the last exits drained
	curl -sf "http://127.0.0.1:$port/metrics" >"$TMP/m1"
	kill "$B" "$E" 2>/dev/null
	wait 2>/dev/null
	python3 - "$TMP/m0" "$TMP/m1" "$(cat "$TMP/n")" "$i" <<'PY'
import sys
def rd(f):
    d = {}
    for l in open(f):
        if l.startswith("#"):
            continue
        p = l.rsplit(" ", 1)
        try:
            d[p[0]] = float(p[1])
        except (IndexError, ValueError):
            pass
    return d
a, b, n = rd(sys.argv[1]), rd(sys.argv[2]), int(sys.argv[3])
rows = [("drain wake-ups, ring", 'ember_drain_wakeups_total{reason="ring"}'),
        ("drain wake-ups, events due", 'ember_drain_wakeups_total{reason="events"}'),
        ("event batches", "ember_event_batches_total"),
        ("bpf() on process lists", 'ember_bpf_calls_by_kind_total{kind="process_lists"}'),
        ("mappings read", 'ember_process_tracker_reads_total{way="procmap_query"}'),
        ("mappings read (text)", 'ember_process_tracker_reads_total{way="maps_text"}'),
        ("/proc reads failed", 'ember_process_tracker_events_total{kind="read_error"}'),
        ("exe stats", 'ember_process_tracker_events_total{kind="exe_read"}'),
        ("answered gone", 'ember_process_tracker_events_total{kind="gone_known"}')]
print("run %s: %d /bin/true; per process: %s" % (sys.argv[4], n, ", ".join(
    "%s %.2f" % (k, (b.get(m, 0) - a.get(m, 0)) / n) for k, m in rows if m in b)))
PY
done
