#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# emberd's CPU per new process, measured so that a busy shared host's own churn cancels out
#: PAIRS alternations of PHASE seconds without and with `spawn RATE /bin/true`, no
# burners; per pair, (emberd CPU with - without) / (forks with - without), forks from the kernel's
# counter (/proc/stat "processes", so other users' processes count in both halves alike); the
# median and the quartiles of the pairs. emberd CPU is its process user + sys time plus its BPF
# programs' run time (/metrics, kernel.bpf_stats_enabled=1).
#
# usage: bench_exec.sh [PAIRS] [PHASE] [RATE]   (defaults 8, 3, 300; root; EMBERD= another build)
set -u
: "${OUTPUT:?}"
PAIRS=${1:-8}
PHASE=${2:-3}
RATE=${3:-300}
EMBERD=${EMBERD:-$OUTPUT/emberd}
[ -x "$OUTPUT/workloads/spawn" ] || { echo "bench_exec: $OUTPUT/workloads/spawn missing (make workloads)" >&2; exit 1; }
TMP=$(mktemp -d /tmp/ember-exec.XXXXXX)
EPID=
trap '[ -n "$EPID" ] && kill "$EPID" 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$EMBERD" --listen "127.0.0.1:$PORT" "${@:4}" >"$TMP/emberd.log" 2>&1 &
EPID=$!
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$PORT/healthz" && break; sleep 0.1; done
sleep 3
snap() { # "forks cpu_s bpf_s monotonic_s"
	python3 - "$EPID" "$PORT" "$(getconf CLK_TCK)" <<'PY'
import re, sys, time, urllib.request
pid, port, hz = sys.argv[1], sys.argv[2], float(sys.argv[3])
f = open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()
m = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % port).read().decode()
bpf = sum(float(v) for v in re.findall(r"^ember_bpf_run_time_seconds_total(?:\{[^}]*\})? ([0-9.e+-]+)$", m, re.M))
forks = int(re.search(r"^processes (\d+)", open("/proc/stat").read(), re.M).group(1))
print(forks, (int(f[11]) + int(f[12])) / hz, bpf, time.monotonic())
PY
}
for i in $(seq "$PAIRS"); do
	a=$(snap); sleep "$PHASE"; b=$(snap)
	"$OUTPUT/workloads/spawn" "$RATE" "$PHASE" /bin/true >/dev/null
	sleep 0.3 # the last exits drained
	c=$(snap)
	echo "$a | $b | $c" >>"$TMP/pairs"
done
python3 - "$TMP/pairs" <<'PY'
import statistics, sys
per = []
for line in open(sys.argv[1]):
    a, b, c = ([float(x) for x in p.split()] for p in line.split("|"))
    dq, dc = [y - x for x, y in zip(a, b)], [y - x for x, y in zip(b, c)]
    # per second in each half (their lengths differ a little), times the churn half's length
    tq, tc = dq[3], dc[3]
    forks = (dc[0] / tc - dq[0] / tq) * tc
    cpu = ((dc[1] + dc[2]) / tc - (dq[1] + dq[2]) / tq) * tc
    if forks > 0:
        per.append(cpu / forks * 1e6)
per.sort()
q = statistics.quantiles(per, n=4) if len(per) >= 2 else per * 3
print("emberd CPU per new process: median %.1f us (quartiles %.1f .. %.1f; %d pairs: %s)" % (
    statistics.median(per), q[0], q[2], len(per), " ".join("%.0f" % x for x in per)))
PY
