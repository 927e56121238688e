#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What Python frames cost emberd on a host mix with Python: emberd with
# [python] enabled = yes and = no in turns (ROUNDS x), on the same mix running throughout:
#   Python: Debian's python3.11 (pyburn shares), pyenv's python3.12 (a 3-thread pool) and
#           python3.10 (C extensions), when present;
#   others: burn (C), a gzip loop, an xz loop, a perl loop, and `ls`/`sed` started 20 times a
#           second (short-lived processes).
# Per mode, over a window of SECONDS that starts 3 s after emberd is up: samples per second, BPF
# run time per sample (do_sample and the exec/exit hooks), emberd's own CPU per sample
# (schedstat of all its threads), and their sum; with Python on, the Python walks' share of the
# samples and what a Python sample costs more: the difference of the totals over the Python
# samples. Also emberd's start-up CPU and its first CPython's examination (BTF included).
#
# MIX=python runs Debian's python3.11 pyburn alone instead (what one Python sample costs, with
# less noise from the rest). Medians over the rounds.
#
# usage: bench_python.sh [SECONDS] [ROUNDS] [host|python]   (default 20 3 host; root)
set -u
: "${OUTPUT:?}" "${SRCDIR:?}"
DUR=${1:-20}
ROUNDS=${2:-3}
MIX=${3:-host}
PY3=/usr/bin/python3 # not a pyenv shim: a bash script that starts a Python each time
EMBERD=${EMBERD:-$OUTPUT/emberd}
W=$SRCDIR/tests/workloads/pyburn.py
TMP=$(mktemp -d /tmp/ember-bench_python.XXXXXX)
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
[ "$(id -u)" -eq 0 ] || { echo "bench_python: needs root" >&2; exit 1; }
[ -x "$EMBERD" ] && [ -x "$OUTPUT/workloads/burn" ] || { echo "bench_python: build first" >&2; exit 1; }
PYENV_ROOT=$(pyenv root 2>/dev/null || echo /root/.pyenv)

# cpu_ns PID: on-CPU time of all threads (schedstat field 1)
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%.0f\n", s}'; }
# prog ID: "run_time_ns run_cnt"
prog() {
	bpftool prog show id "$1" -j 2>/dev/null |
		$PY3 -c 'import json, sys; p = json.load(sys.stdin); print(p.get("run_time_ns", 0), p.get("run_cnt", 0))'
}
# hooks_ns: run time of the newest on_exec and on_exit programs (emberd's)
hooks_ns() {
	bpftool prog show -j 2>/dev/null | $PY3 -c 'import json, sys
t = {}
for p in json.load(sys.stdin):
    if p.get("name") in ("on_exec", "on_exit"):
        t[p["name"]] = p.get("run_time_ns", 0)
print(sum(t.values()))'
}
py_stat() {
	curl -sf "$1/api/v1/stats" | $PY3 -c \
		'import json, sys; print(json.load(sys.stdin).get("python", {}).get(sys.argv[1], 0))' "$2"
}

# --- the mix ---------------------------------------------------------------------------------
host_mix() {
	"$OUTPUT/workloads/burn" "$TOTAL" >/dev/null &
	PIDS+=($!)
	head -c 20000000 /dev/urandom | base64 >"$TMP/data"
	(while :; do gzip -c "$TMP/data" >/dev/null; done) &
	PIDS+=($!)
	(while :; do xz -6 -c "$TMP/data" >/dev/null; done) &
	PIDS+=($!)
	perl -e 'my $x = 0; while (1) { $x = ($x * 1103515245 + 12345) % 4294967296 }' &
	PIDS+=($!)
	(while :; do ls /usr/lib >/dev/null; sed -n 1p /etc/passwd >/dev/null; sleep 0.1; done) &
	PIDS+=($!)
}
TOTAL=$(((DUR + 8) * 2 * ROUNDS + 30))
/usr/bin/python3.11 "$W" "$TOTAL" shares >/dev/null 2>&1 &
PIDS+=($!)
for p in "$PYENV_ROOT"/versions/3.12.*/bin/python3.12; do
	[ "$MIX" = host ] && [ -x "$p" ] && { "$p" "$W" "$TOTAL" threads >/dev/null 2>&1 & PIDS+=($!); break; }
done
for p in "$PYENV_ROOT"/versions/3.10.*/bin/python3.10; do
	[ "$MIX" = host ] && [ -x "$p" ] && { "$p" "$W" "$TOTAL" cext >/dev/null 2>&1 & PIDS+=($!); break; }
done
[ "$MIX" = host ] && host_mix
sleep 2

one() { # one yes|no: "mode samples_per_s bpf_ns process_us total_us py_share py_samples samples"
	local mode=$1 port url pid prog t0 c0 h0 u0 t1 c1 h1 u1 pw
	port=$($PY3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	url=http://127.0.0.1:$port
	"$EMBERD" --listen "127.0.0.1:$port" -o python.enabled="$mode" >"$TMP/emberd.$mode.log" 2>&1 &
	pid=$!
	PIDS+=($pid)
	for _ in $(seq 100); do grep -q 'program id' "$TMP/emberd.$mode.log" && break; sleep 0.1; done
	prog=$(sed -n 's/.*BPF program id \([0-9]*\).*/\1/p' "$TMP/emberd.$mode.log")
	sleep 3
	read -r t0 c0 <<<"$(prog "$prog")"; h0=$(hooks_ns); u0=$(cpu_ns "$pid")
	pw0=$(py_stat "$url" walks)
	sleep "$DUR"
	read -r t1 c1 <<<"$(prog "$prog")"; h1=$(hooks_ns); u1=$(cpu_ns "$pid")
	pw=$(($(py_stat "$url" walks) - pw0))
	if [ "$mode" = yes ]; then
		curl -sf "$url/api/v1/stats" >"$TMP/stats.json"
		# measured inside: the BPF walks (bpf_ktime_get_ns around them) and emberd's
		# naming and merging, per Python sample, over this emberd's whole run
		$PY3 - "$TMP/stats.json" >>"$TMP/direct" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))["python"]
w, s = max(p["walks"], 1), max(p["samples"], 1)
print("%.2f %.2f %.2f %.1f %d %d" % (1e3 * p["walk_ms"] / w, 1e3 * p["merge_ms"] / s,
      1e3 * p["names_ms"] / s, p["walk_frames"] / w, p["walks"], p["samples"]))
EOF
	fi
	kill "$pid"
	wait "$pid" 2>/dev/null
	awk -v m="$mode" -v n=$((c1 - c0)) -v b=$((t1 - t0 + h1 - h0)) -v u=$((u1 - u0)) \
		-v d="$DUR" -v pw="$pw" 'BEGIN { if (!n) n = 1
		printf "%s %.1f %.0f %.2f %.2f %.1f %d %d\n", m, n / d, b / n, u / n / 1e3,
		       (b + u) / n / 1e3, 100 * pw / n, pw, n }'
	sed -n 's/.*start-up took \([0-9.]*\) ms.*/# start-up (python.enabled='"$mode"'): \1 ms of CPU/p' \
		"$TMP/emberd.$mode.log" >&2
}

echo "# bench_python: $DUR s windows, $ROUNDS rounds, $MIX mix; load average $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$ROUNDS"); do
	one yes >>"$TMP/res"
	one no >>"$TMP/res"
done
$PY3 - "$TMP/stats.json" <<'EOF' >&2
import json, sys
p = json.load(open(sys.argv[1]))["python"]
print("# python (last round): %d processes read, detect %.1f ms over %d examinations (BTF %.1f ms of it), "
      "%d name records, %d code objects, %d frames named, %d unknown" %
      (p["procs"], p["detect_ms"], p["detections"], p["fsbase_ms"], p["name_records"], p["codes"],
       p["frames"], p["frames_unknown"]))
EOF
echo "| python | samples/s | BPF ns/sample | emberd us/sample | total us/sample | Python samples |"
echo "| --- | --- | --- | --- | --- | --- |"
awk '{ printf "| %s | %s | %s | %s | %s | %s%% |\n", $1, $2, $3, $4, $5, $6 }' "$TMP/res"
awk '{ n++; w += $1; m += $2; na += $3; f += $4 }
	END { printf "measured inside (mean of the rounds): BPF walk %.2f us per Python sample (%.1f frames), naming and merging %.2f us, name records %.2f us\n", w / n, f / n, m / n, na / n }' "$TMP/direct"
# med MODE COLUMN: the median of a column over the rounds of a mode
med() { awk -v m="$1" -v c="$2" '$1 == m {print $c}' "$TMP/res" | sort -g |
	awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
TY=$(med yes 5) TN=$(med no 5) BY=$(med yes 3) BN=$(med no 3) UY=$(med yes 4) UN=$(med no 4)
PS=$(med yes 6)
awk -v ty="$TY" -v tn="$TN" -v by="$BY" -v bn="$BN" -v uy="$UY" -v un="$UN" -v ps="$PS" 'BEGIN {
	printf "median total: %.2f us/sample with Python frames, %.2f without (BPF %.0f vs %.0f ns, emberd %.2f vs %.2f us)\n", ty, tn, by, bn, uy, un
	if (ps > 0) printf "per Python sample: +%.1f us (BPF +%.1f, emberd +%.1f; %.0f%% of the samples were Python)\n",
		(ty - tn) * 100 / ps, (by - bn) / 1e3 * 100 / ps, (uy - un) * 100 / ps, ps }'
