#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The cost of whole user stacks on a host-like mix: Debian's xz and a gzip loop, its
# python3.11, perl and node, and `ls`/`sed` started 20 times a second, for SECONDS at 99 Hz on
# every CPU, three times over the same mix:
#   A. emberd as shipped (user stacks walked with the unwind tables);
#   B. emberd with [unwind] enabled = no (frame pointers only: what the unwinder costs);
#   C. `perf record -F 99 -a --call-graph dwarf` then `perf script` (the other way to get these
#      stacks here), with emberd (A's settings) alongside for the per-program table.
# Cost per sample: the process CPU (user + sys, from rusage, us precision) plus, for emberd, its
# BPF programs' run time (kernel.bpf_stats, which emberd holds on), over the samples taken.
# The per-program table (run C): samples, share reaching the program's entry (main or
# __libc_start_call_main), similarity of emberd's folded stacks with perf's (aliases made one).
#
# usage: bench_hostmix.sh [SECONDS]   (default 20; root, perf, node, xz, perl)
set -u
: "${OUTPUT:?}" "${SRCDIR:?}"
DUR=${1:-20}
EMBER=${EMBER:-$OUTPUT/ember}
EMBERD=${EMBERD:-$OUTPUT/emberd}
RUSAGE="python3 $SRCDIR/tests/bench/rusage.py"
for c in perf node xz perl gzip; do
	command -v $c >/dev/null || { echo "bench_hostmix: $c missing" >&2; exit 1; }
done
[ -x /usr/bin/python3.11 ] || { echo "bench_hostmix: no /usr/bin/python3.11" >&2; exit 1; }
TMP=$(mktemp -d /tmp/ember-hostmix.XXXXXX)
MIX=()
trap 'mix_stop; rm -rf "$TMP"' EXIT

. "$(dirname "$0")/hostmix_lib.sh"
mix_setup

# emberd_run NAME [ARG...]: emberd for DUR seconds over the running mix; writes
# NAME.{time,log,folded}, and NAME.window: the middle half of the run, DUR/4 to 3 DUR/4 (after
# the first tables and symbols): "seconds samples cpu_s bpf_s" from /proc and /metrics
emberd_run() {
	local n=$1 port pid a b rpid
	shift
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	$RUSAGE "$TMP/$n.time" "$EMBERD" --listen "127.0.0.1:$port" --dump-after "$DUR" \
		--dump-root comm --dump-file "$TMP/$n.folded" "$@" >"$TMP/$n.log" 2>&1 &
	rpid=$!
	sleep $((DUR / 4))
	# rusage.py's child: not the newest emberd of the host (other emberds, other names)
	pid=$(pgrep -P "$rpid" | head -1)
	a=$(snapshot "$pid" "$port")
	sleep $((DUR / 2))
	b=$(snapshot "$pid" "$port")
	wait $rpid
	python3 -c 'import sys; a = list(map(float, sys.argv[1].split())); b = list(map(float, sys.argv[2].split())); print(" ".join("%.6f" % (y - x) for x, y in zip(a, b)))' "$a" "$b" >"$TMP/$n.window"
}
# snapshot PID PORT: "monotonic_s samples cpu_s bpf_s"
snapshot() {
	local ticks
	ticks=$(getconf CLK_TCK)
	python3 - "$1" "$2" "$ticks" <<'PY'
import re, sys, time, urllib.request
pid, port, hz = sys.argv[1], sys.argv[2], float(sys.argv[3])
f = open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()
cpu = (int(f[11]) + int(f[12])) / hz
m = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % port).read().decode()
def metric(name):
    x = re.search(r"^%s(\{[^}]*\})? ([0-9.e+]+)$" % name, m, re.M)
    return float(x.group(2)) if x else 0.0
print(time.monotonic(), metric("ember_samples_total"), cpu, metric("ember_bpf_run_time_seconds_total"))
PY
}
# cost NAME: "samples us_per_sample cpu_s bpf_s" of an emberd run
emberd_cost() {
	python3 - "$TMP/$1.time" "$TMP/$1.log" <<'PY'
import re, sys
wall, user, sys_, rss = map(float, open(sys.argv[1]).read().split())
log = open(sys.argv[2]).read()
m = re.search(r"sampled (\d+) .*BPF (\d+) ns/sample", log)
n, bpf_ns = int(m.group(1)), float(m.group(2))
cpu = user + sys_
print(n, "%.2f" % ((cpu + n * bpf_ns / 1e9) / n * 1e6), "%.3f" % cpu, "%.3f" % (n * bpf_ns / 1e9), int(rss))
PY
}

echo "# host mix for $DUR s per run at 99 Hz on $(nproc) CPUs"
# what the figures depend on besides emberd (docs/design/process-cost.md): how long the machine
# has run, what else runs on it (emberd profiles the whole host and builds tables for what it
# samples), and how much of the files is cached; a note quotes these with its figures
machine() {
	python3 - <<'PY'
import os
up = float(open("/proc/uptime").read().split()[0])
load = open("/proc/loadavg").read().split()[:3]
exes, n = set(), 0
for p in os.listdir("/proc"):
    if p.isdigit():
        try:
            exes.add(os.readlink("/proc/%s/exe" % p)); n += 1
        except OSError:
            pass
mem = dict(l.split(":", 1) for l in open("/proc/meminfo"))
print("# machine: up %.0f min, load %s, %d user processes (%d distinct executables), page cache %s" %
      (up / 60, " ".join(load), n, len(exes), mem["Cached"].strip()))
PY
}
machine
cpu_line
machine_line "$TMP"
STEAL0=$(steal_mark)
mix_start $((DUR + 6)); sleep 2
emberd_run unwind
mix_stop
mix_start $((DUR + 6)); sleep 2
emberd_run fp -o unwind.enabled=no
mix_stop
mix_start $((DUR + 12)); sleep 2
emberd_run both -o python.enabled=no & # native frames, as perf's (Python frames: bench_python.sh)
BOTH=$!
$RUSAGE "$TMP/perf-record.time" perf record -F 99 -a --call-graph dwarf -o "$TMP/perf.data" \
	-- sleep "$DUR" >"$TMP/perf.log" 2>&1
wait $BOTH
mix_stop
$RUSAGE "$TMP/perf-script.time" sh -c "perf script -i '$TMP/perf.data' 2>/dev/null >'$TMP/perf.txt'"
"$EMBER" collapse --all "$TMP/perf.txt" >"$TMP/perf.folded"
PSAMPLES=$(grep -c 'cpu-clock' "$TMP/perf.txt")

read -r un uus ucpu ubpf urss < <(emberd_cost unwind)
read -r fn fus fcpu fbpf frss < <(emberd_cost fp)
# steady state: us per sample in the window
steady() { awk '{ printf "%.2f", ($3 + $4) / $2 * 1e6 }' "$TMP/$1.window"; }
uss=$(steady unwind)
fss=$(steady fp)
PCPU=$(cat "$TMP/perf-record.time" "$TMP/perf-script.time" | awk '{ s += $2 + $3 } END { printf "%.3f", s }')
PUS=$(awk -v c="$PCPU" -v n="$PSAMPLES" 'BEGIN { printf "%.1f", c / n * 1e6 }')
echo
echo "| run | samples | whole run: CPU (process + BPF) per sample | middle half of the run, per sample | process CPU | BPF | RSS |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
echo "| A. emberd, unwind tables | $un | $uus us | $uss us | $ucpu s | $ubpf s | $((urss / 1024)) MiB |"
echo "| B. emberd, frame pointers only | $fn | $fus us | $fss us | $fcpu s | $fbpf s | $((frss / 1024)) MiB |"
echo "| C. perf record --call-graph dwarf + perf script | $PSAMPLES | $PUS us | - | $PCPU s | - | - |"
awk -v a="$uus" -v b="$fus" -v p="$PUS" 'BEGIN { printf "\nunwinder: %+.2f us per sample (A - B); perf / emberd: %.0fx\n", a - b, p / a }'
grep -h 'user stacks' "$TMP/unwind.log" "$TMP/fp.log" | sed 's/^emberd: info: /# /'
# the whole run holds emberd's start-up (the BPF programs verified, the maps made: a fixed cost
# that a 20 s run spreads over few samples): what it took, and the run without it
startup_ms() { grep -o 'start-up took [0-9.]* ms of CPU' "$TMP/$1.log" | awk '{ print $3 }'; }
su=$(startup_ms unwind)
sf=$(startup_ms fp)
awk -v su="${su:-0}" -v sf="${sf:-0}" -v ua="$ucpu" -v ub="$ubpf" -v un="$un" -v fa="$fcpu" \
	-v fb="$fbpf" -v fn="$fn" 'BEGIN { printf "# start-up (BPF load and verification, maps), CPU: A %.1f ms, B %.1f ms; the whole run without it, per sample: A %.2f us, B %.2f us\n", su, sf, (ua + ub - su / 1e3) / un * 1e6, (fa + fb - sf / 1e3) / fn * 1e6 }'

echo
echo "| program (run C) | emberd samples | reach the entry | perf samples | reach the entry | similarity |"
echo "| --- | --- | --- | --- | --- | --- |"
for c in xz gzip python3.11 perl node ls sed; do
	grep "^$c;" "$TMP/both.folded" >"$TMP/e.$c"
	grep "^$c;" "$TMP/perf.folded" >"$TMP/p.$c"
done
python3 "$SRCDIR/tests/integration/aliases.py" "$(command -v xz)" "$(command -v gzip)" \
	/usr/bin/python3.11 "$(command -v perl)" "$(readlink -f "$(command -v node)")" \
	"$(command -v ls)" "$(command -v sed)" /lib/x86_64-linux-gnu/libc.so.6 \
	/lib64/ld-linux-x86-64.so.2 -- "$TMP"/e.* "$TMP"/p.*
for c in xz gzip python3.11 perl node ls sed; do
	e=$(awk '{ n = $NF; t += n; if ($0 ~ /;main;|;__libc_start_call_main;/) m += n } END { printf "%d %.1f%%", t, t ? 100 * m / t : 0 }' "$TMP/e.$c")
	# perf's folded counts are periods: shares from them, the sample count from its headers
	p=$(awk '{ n = $NF; t += n; if ($0 ~ /;main;|;__libc_start_call_main;/) m += n } END { printf "%.1f%%", t ? 100 * m / t : 0 }' "$TMP/p.$c")
	p="$(grep -c "^ *$c " "$TMP/perf.txt") $p"
	s=$("$EMBER" stat similarity "$TMP/e.$c" "$TMP/p.$c" 2>/dev/null | awk '/^similarity/ { printf "%.3f", $2 }')
	echo "| $c | ${e% *} | ${e#* } | ${p% *} | ${p#* } | ${s:--} |"
done
echo "# stolen by the hypervisor during the runs: $(steal_pct "$STEAL0") of CPU time"
