#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# emberd's CPU per new process, as a user sees it: a shell loop starting /bin/true about 60 times
# a second beside a one-thread burner, against the burner alone. One emberd at 99 Hz (or two side
# by side: EMBERD_B=), after a settling of 5 s, RUNS pairs of SECONDS without the loop, then
# SECONDS with it. Per pair and daemon:
#
#   ((emberd CPU + BPF) per second with the loop - without) x the loop phase's length
#   / the /bin/true processes the loop started
#
# emberd CPU: the run time of its threads (/proc/PID/task/*/schedstat, nanoseconds: the 10 ms
# ticks of /proc/PID/stat are too coarse for 40 us x 900 processes); BPF: its programs' run time
# (/metrics ember_bpf_run_time_seconds_total). Also per pair: emberd's bpf() calls, drain
# wake-ups and process-event batches handed to the worker per second in each phase (/metrics),
# the share of the BPF programs on exec, fork and exit (ember_bpf_run_time_seconds_total{prog=
# "process_events"}),
# emberd's page faults and context switches per new process (their price: machine_line), the
# samples of the loop's /bin/true per new process (a process sampled is named, one never sampled
# costs BPF and a counter: a machine whose fork and exec are slow has more of them sampled),
# and the host's forks (other users' processes count in both phases alike). Prints min / median
# / max over the pairs, the load average and the time since boot: on a shared machine the
# figures are indicative; two daemons side by side see the same noise.
#
# usage: bench_newproc.sh [RUNS] [SECONDS]   (defaults 5, 15; root; EMBERD= another build,
#        EMBERD_B= a second one beside it, EMBERD_ARGS= extra options for both)
set -u
: "${OUTPUT:?}"
RUNS=${1:-5}
DUR=${2:-15}
EMBERD=${EMBERD:-$OUTPUT/emberd}
[ -x "$OUTPUT/workloads/burn" ] || { echo "bench_newproc: $OUTPUT/workloads/burn missing (make workloads)" >&2; exit 1; }
TMP=$(mktemp -d /tmp/ember-newproc.XXXXXX)
BG=()
trap 'for p in "${BG[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$TMP"' EXIT
# the daemons: EMBERD, and EMBERD_B beside it when set (the same host, the same noise: an A/B
# comparison that a shared machine's other work does not skew one way)
DAEMONS=("$EMBERD")
[ -n "${EMBERD_B:-}" ] && DAEMONS+=("$EMBERD_B")
EPIDS=()
PORTS=()
for k in "${!DAEMONS[@]}"; do
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	# shellcheck disable=SC2086
	"${DAEMONS[$k]}" --listen "127.0.0.1:$port" ${EMBERD_ARGS:-} >"$TMP/emberd$k.log" 2>&1 &
	EPIDS+=($!)
	PORTS+=("$port")
	BG+=($!)
	for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$port/healthz" && break; sleep 0.1; done
done
"$OUTPUT/workloads/burn" $((RUNS * DUR * 2 + 60)) >/dev/null &
BG+=($!)
sleep 5

# per daemon, " | "-separated: "monotonic_s cpu_s bpf_s forks bpf_calls drain_wakeups event_batches"
snap() {
	local k out=
	for k in "${!EPIDS[@]}"; do
		out+="$(snap1 "${EPIDS[$k]}" "${PORTS[$k]}") ; "
	done
	echo "$out"
}
snap1() {
	python3 - "$1" "$2" <<'PY'
import glob, re, sys, time, urllib.request
pid, port = sys.argv[1], sys.argv[2]
cpu = 0
for f in glob.glob("/proc/%s/task/*/schedstat" % pid):
    try:
        cpu += int(open(f).read().split()[0])
    except (OSError, IndexError, ValueError):
        pass  # a thread gone meanwhile
m = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % port).read().decode()
def metric(name, labels=r"(?:\{[^}]*\})?"):
    return sum(float(v) for v in re.findall(r"^%s%s ([0-9.e+-]+)$" % (name, labels), m, re.M))
forks = int(re.search(r"^processes (\d+)", open("/proc/stat").read(), re.M).group(1))
# its page faults (minor + major) and its threads' context switches: what a new process costs
# it in kernel entries, whose price differs from machine to machine (machine_line)
st = open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()
faults = int(st[7]) + int(st[9])
switches = 0
for f in glob.glob("/proc/%s/task/*/status" % pid):
    try:
        switches += sum(int(l.split()[1]) for l in open(f) if "ctxt_switches" in l)
    except (OSError, IndexError, ValueError):
        pass
print(time.monotonic(), cpu / 1e9, metric("ember_bpf_run_time_seconds_total"), forks,
      metric("ember_bpf_calls_total"), metric("ember_drain_wakeups_total"),
      metric("ember_event_batches_total"),
      metric("ember_bpf_run_time_seconds_total", r'\{prog="process_events"\}'), faults,
      switches)
PY
}

# the loop: tests/bench/newproc_loop.sh
. "$(dirname "$0")/hostmix_lib.sh" # cpu_line, machine_line, steal_mark, steal_pct
STEAL0=$(steal_mark)
for i in $(seq "$RUNS"); do
	a=$(snap)
	sleep "$DUR"
	b=$(snap)
	w0=$(date +%s.%N)
	bash "$(dirname "$0")/newproc_loop.sh" "$DUR" "$TMP/n$i"
	w1=$(date +%s.%N)
	sleep 1.5 # the last exits drained, the last samples stored (the tick)
	c=$(snap)
	# the loop's processes' own samples (the first daemon's store: its "true" stacks): how
	# many of them were sampled at all, which a slower machine's longer fork and exec make more
	sampled=$(curl -sf "http://127.0.0.1:${PORTS[0]}/api/v1/folded?from=$w0&to=$w1" |
		awk '/^true;/ { n += $NF } END { print n + 0 }')
	echo "$a | $b | $c | $(cat "$TMP/n$i") | $sampled" >>"$TMP/pairs"
done
echo "# machine: $(uptime -p), load$(cut -d' ' -f1-3 /proc/loadavg | sed 's/^/ /'), $(nproc) CPUs; ${EMBERD_ARGS:-}"
cpu_line
machine_line "$TMP"
echo "# stolen by the hypervisor during the pairs: $(steal_pct "$STEAL0") of CPU time"
for k in "${!DAEMONS[@]}"; do
echo
echo "## ${DAEMONS[$k]}"
python3 - "$TMP/pairs" "$k" <<'PY'
import statistics, sys
rows = []
k = int(sys.argv[2])
for line in open(sys.argv[1]):
    parts = line.split("|")
    a, b, c = ([float(x) for x in p.split(";")[k].split()] for p in parts[:3])
    n = int(parts[3])
    sampled = int(parts[4]) if len(parts) > 4 and parts[4].strip() else 0
    dq, dc = [y - x for x, y in zip(a, b)], [y - x for x, y in zip(b, c)]
    tq, tc = dq[0], dc[0]
    extra = ((dc[1] + dc[2]) / tc - (dq[1] + dq[2]) / tq) * tc
    rows.append(dict(n=n, rate=n / tc, per=extra / n * 1e6 if n else 0,
                     cpuq=(dq[1] + dq[2]) / tq * 1e3, cpuc=(dc[1] + dc[2]) / tc * 1e3,
                     forksq=dq[3] / tq, forksc=dc[3] / tc,
                     bpfq=dq[4] / tq, bpfc=dc[4] / tc, wq=dq[5] / tq, wc=dc[5] / tc,
                     jq=dq[6] / tq, jc=dc[6] / tc,
                     # per /bin/true: what the loop added (the host's own rate taken off)
                     bpfp=(dc[4] / tc - dq[4] / tq) * tc / n if n else 0,
                     wp=(dc[5] / tc - dq[5] / tq) * tc / n if n else 0,
                     jp=(dc[6] / tc - dq[6] / tq) * tc / n if n else 0,
                     # of which the BPF programs on exec, fork and exit
                     evp=(dc[7] / tc - dq[7] / tq) * tc / n * 1e6 if n and len(dc) > 7 else 0,
                     # emberd's page faults and context switches
                     fp=(dc[8] / tc - dq[8] / tq) * tc / n if n and len(dc) > 9 else 0,
                     sp=(dc[9] / tc - dq[9] / tq) * tc / n if n and len(dc) > 9 else 0,
                     # samples of the loop's /bin/true processes (the first daemon's)
                     tp=sampled / n if n else 0))
print("| pair | /bin/true started | emberd CPU+BPF, burner alone | with the loop | per new process | bpf() calls/s alone / loop | drain wake-ups/s alone / loop | event batches/s alone / loop | host forks/s alone / loop |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for i, r in enumerate(rows, 1):
    print("| %d | %d (%.0f/s) | %.2f ms/s | %.2f ms/s | %.1f us | %.1f / %.1f | %.1f / %.1f | %.1f / %.1f | %.0f / %.0f |" % (
        i, r["n"], r["rate"], r["cpuq"], r["cpuc"], r["per"], r["bpfq"], r["bpfc"], r["wq"],
        r["wc"], r["jq"], r["jc"], r["forksq"], r["forksc"]))
per = sorted(r["per"] for r in rows)
print()
print("emberd CPU per new process: min %.1f / median %.1f / max %.1f us (%d pairs)" % (
    per[0], statistics.median(per), per[-1], len(per)))
for k, name in (("bpfc", "bpf() calls/s with the loop"), ("wc", "drain wake-ups/s with the loop"),
                ("jc", "event batches/s with the loop")):
    v = sorted(r[k] for r in rows)
    print("%s: min %.1f / median %.1f / max %.1f" % (name, v[0], statistics.median(v), v[-1]))
ev = sorted(r["evp"] for r in rows)
print("of which the BPF programs on exec, fork and exit: min %.1f / median %.1f / max %.1f us" % (
    ev[0], statistics.median(ev), ev[-1]))
for k, name in (("wp", "drain wake-ups"), ("jp", "event batches"), ("bpfp", "bpf() calls"),
                ("fp", "emberd page faults"), ("sp", "emberd context switches"),
                ("tp", "samples of /bin/true (the first daemon's)")):
    v = sorted(r[k] for r in rows)
    print("%s per new process: min %.2f / median %.2f / max %.2f" % (
        name, v[0], statistics.median(v), v[-1]))
PY
done
