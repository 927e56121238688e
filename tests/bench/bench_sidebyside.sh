#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Two emberds side by side over the same host-like mix for DUR s: per emberd, samples,
# BPF time per run, process CPU per sample, bpf() calls (its own count and strace -c).
# usage: bench_sidebyside.sh EMBERD_A EMBERD_B [DUR]   (root; strace)
set -u
OUT=${OUTPUT:-$(cd "$(dirname "$0")/../.." && pwd)/build}
A=${1:-${EMBERD:-$OUT/emberd}} B=${2:-$A} DUR=${3:-20} W=$OUT/workloads
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
PA=$(port); PB=$(port)
$A --listen 127.0.0.1:$PA >/dev/null 2>&1 & EA=$!
$B --listen 127.0.0.1:$PB >/dev/null 2>&1 & EB=$!
sleep 4
L=()
$W/burn $((DUR + 10)) >/dev/null & L+=($!)
python3 -c 'import time
end = time.time() + '$((DUR + 10))'
while time.time() < end: sum(i * i for i in range(10000))' & L+=($!)
( end=$((SECONDS + DUR + 10)); while [ $SECONDS -lt $end ]; do head -c 4000000 /dev/urandom | gzip -c >/dev/null; done ) & L+=($!)
( end=$((SECONDS + DUR + 10)); while [ $SECONDS -lt $end ]; do ls /usr/bin >/dev/null; sed -n 1p /etc/passwd >/dev/null; sleep 0.05; done ) & L+=($!)
sleep 3
snap() { # port pid
	local cpu; cpu=$(awk '{print $14 + $15}' /proc/$2/stat)
	curl -s 127.0.0.1:$1/metrics | awk -v cpu="$cpu" '$1=="ember_samples_total"{s=$2} $1=="ember_bpf_runs_total{prog=\"profiler\"}"{r=$2} $1=="ember_bpf_run_time_seconds_total{prog=\"profiler\"}"{t=$2} $1=="ember_bpf_calls_total"{c=$2} END{print s+0, r+0, t+0, c+0, cpu}'
}
a0=$(snap $PA $EA); b0=$(snap $PB $EB)
timeout -s INT $DUR strace -c -f -e trace=bpf -p $EA -o ${TMPDIR:-/tmp}/sbs-strace-a.txt 2>/dev/null &
timeout -s INT $DUR strace -c -f -e trace=bpf -p $EB -o ${TMPDIR:-/tmp}/sbs-strace-b.txt 2>/dev/null &
sleep $DUR
a1=$(snap $PA $EA); b1=$(snap $PB $EB)
sleep 1
echo "strace bpf() calls in $DUR s: A $(awk '$NF=="bpf"{print $4}' ${TMPDIR:-/tmp}/sbs-strace-a.txt) B $(awk '$NF=="bpf"{print $4}' ${TMPDIR:-/tmp}/sbs-strace-b.txt)"
kill "${L[@]}" 2>/dev/null
kill $EA $EB; wait $EA $EB 2>/dev/null
HZ=$(getconf CLK_TCK)
for x in "A $A $a0 $a1" "B $B $b0 $b1"; do
	set -- $x
	python3 -c '
import sys
n, path = sys.argv[1], sys.argv[2]
s0, r0, t0, c0, u0, s1, r1, t1, c1, u1 = map(float, sys.argv[3:13]); hz = float(sys.argv[13]); dur = float(sys.argv[14])
ds, dr = s1 - s0, r1 - r0
print("%s %s: %d samples in %d s; BPF %.1f us per run (%d runs); process CPU %.1f us per sample; bpf() calls %.1f/s (counted by emberd)" % (
    n, path, ds, dur, 1e6 * (t1 - t0) / dr if dr else 0, dr, 1e6 * (u1 - u0) / hz / ds if ds else 0, (c1 - c0) / dur))' "$1" "$2" $3 $4 $5 $6 $7 $8 $9 ${10} ${11} ${12} $HZ $DUR
done
