#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The cost of off-CPU events: tests/workloads/pingpong (two threads passing a byte
# over two pipes) at two rates, ~10k and ~100k context switches a second (SPIN_NS of busy work
# per side and round: 90000 and 7000 here), for SECONDS each, REPS times, alternating:
#   off     emberd with [offcpu] enabled = no (its on-CPU sampling only)
#   on      emberd with [offcpu] enabled = yes, the defaults (kernel_stacks = yes)
#   nokst   emberd with [offcpu] enabled = yes, kernel_stacks = no
#   bcc     no emberd, BCC's offcputime-bpfcc -f (when installed)
# Per run: the ping-pong's rounds a second, the host's context switches a second (/proc/stat),
# emberd's CPU (utime + stime over the run), and for "on" the BPF programs' run time per run
# (kernel.bpf_stats, which emberd holds on) and their share of the host's CPU time over the
# run (bpf_cpu_pct; includes every other process's switches and system calls), periods ended,
# records sent, kernel stacks taken (kstacks) and S/D records sent without one (kstack_miss:
# the prediction of offcpu_kstack_wanted() missed), the blocked time
# recorded vs counted and not recorded. perf record --off-cpu is tried and reported when perf
# was built without BPF skeletons (Debian's is). Medians are printed per mode and rate.
#
# usage: bench_offcpu.sh [SECONDS] [REPS]   (default 5 3; root)
set -u
: "${OUTPUT:=build}"
SECS=${1:-5}
REPS=${2:-3}
EMBERD=${EMBERD:-$OUTPUT/emberd}
PP=$OUTPUT/workloads/pingpong
[ "$(id -u)" -eq 0 ] || { echo "bench_offcpu: needs root" >&2; exit 1; }
[ -x "$EMBERD" ] && [ -x "$PP" ] || { echo "bench_offcpu: build emberd and workloads first" >&2; exit 1; }
TMP=$(mktemp -d /tmp/ember-bench-offcpu.XXXXXX)
EPID=
OLD_STATS=$(sysctl -n kernel.bpf_stats_enabled)
cleanup() {
	[ -n "$EPID" ] && kill "$EPID" 2>/dev/null
	wait 2>/dev/null
	sysctl -qw kernel.bpf_stats_enabled="$OLD_STATS"
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
# BCC compiles its program against kernel headers: Debian's are split in two folders
if command -v offcputime-bpfcc >/dev/null && [ -z "${BCC_KERNEL_SOURCE:-}" ]; then
	common=$(ls -d /usr/src/linux-headers-*-common 2>/dev/null | tail -1)
	arch=$(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | tail -1)
	if [ -n "$common" ] && [ -n "$arch" ]; then
		export BCC_KERNEL_SOURCE=$TMP/kheaders
		mkdir -p "$BCC_KERNEL_SOURCE"
		cp -rs "$common/." "$BCC_KERNEL_SOURCE/" && cp -rsf "$arch/." "$BCC_KERNEL_SOURCE/"
	fi
fi
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
URL=http://127.0.0.1:$port
printf '[offcpu]\nenabled = yes\n' >"$TMP/on.conf"
printf '[offcpu]\nenabled = no\n' >"$TMP/off.conf"
printf '[offcpu]\nenabled = yes\nkernel_stacks = no\n' >"$TMP/nokst.conf"

ctxt() { awk '/^ctxt/ {print $2}' /proc/stat; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
stat_off() { curl -sf "$URL/api/v1/stats" | python3 -c 'import json, sys
o = json.load(sys.stdin).get("offcpu", {})
print(" ".join(str(o.get(k, 0)) for k in ("switch_run_ns", "switch_runs", "resume_run_ns", "resume_runs",
      "periods", "recorded", "recorded_ms", "blocked_ms", "held_ms", "over_max_ms", "lost_ms",
      "wakeup_run_ns", "wakeup_runs", "wakeup_records", "kstacks", "kstack_miss")))'; }

# run MODE SPIN: one line "MODE SPIN rounds_per_s ctxt_per_s emberd_cpu_pct [bpf fields]"
run() {
	local mode=$1 spin=$2 c0 c1 t0 t1 r s0 s1 e0 e1 hz out
	hz=$(getconf CLK_TCK)
	case $mode in
	on | off | nokst)
		"$EMBERD" --config "$TMP/$mode.conf" --listen "127.0.0.1:$port" >"$TMP/emberd.log" 2>&1 &
		EPID=$!
		for _ in $(seq 100); do curl -sf "$URL/healthz" >/dev/null && break; sleep 0.1; done
		sleep 2 ;;
	bcc)
		sysctl -qw kernel.bpf_stats_enabled=1
		offcputime-bpfcc -f "$((SECS + 30))" >"$TMP/bcc.out" 2>"$TMP/bcc.err" &
		EPID=$!
		# compiled at start: wait for its program (BCC names it after the C function)
		for _ in $(seq 300); do
			bpftool prog show name oncpu >/dev/null 2>&1 && break
			kill -0 "$EPID" 2>/dev/null || { echo "# bcc failed: $(head -c 300 "$TMP/bcc.err")"; return; }
			sleep 0.1
		done
		s0=$(bpftool prog show name oncpu -j | python3 -c 'import json, sys; p = json.load(sys.stdin); print(p.get("run_time_ns", 0), p.get("run_cnt", 0))')
		sleep 1 ;;
	esac
	[ "$mode" != off ] && [ "$mode" != bcc ] && s0=$(stat_off)
	e0=$(cpu_ticks "$EPID" 2>/dev/null || echo 0)
	c0=$(ctxt); t0=$(date +%s%N)
	r=$("$PP" "$SECS" "$spin" | awk '{print $4}')
	c1=$(ctxt); t1=$(date +%s%N)
	e1=$(cpu_ticks "$EPID" 2>/dev/null || echo 0)
	[ "$mode" != off ] && [ "$mode" != bcc ] && { sleep 1.2; s1=$(stat_off); }
	[ "$mode" = bcc ] && s1=$(bpftool prog show name oncpu -j | python3 -c 'import json, sys; p = json.load(sys.stdin); print(p.get("run_time_ns", 0), p.get("run_cnt", 0))')
	kill "$EPID" 2>/dev/null; wait "$EPID" 2>/dev/null; EPID=
	out="$mode $spin $r $(( (c1 - c0) * 1000000000 / (t1 - t0) )) $(awk -v a="$e0" -v b="$e1" -v hz="$hz" -v t=$(( t1 - t0 )) 'BEGIN { printf "%.1f", 100 * (b - a) / hz / (t / 1e9) }')"
	if [ "$mode" = bcc ]; then
		out="$out $(python3 -c 'import sys
a = [float(x) for x in sys.argv[1].split()]; b = [float(x) for x in sys.argv[2].split()]
print("switch_ns %.0f switches %.0f" % ((b[0] - a[0]) / max(b[1] - a[1], 1), b[1] - a[1]))' "$s0" "$s1")"
	fi
	if [ "$mode" = on ] || [ "$mode" = nokst ]; then
		out="$out $(python3 -c 'import sys
a = [float(x) for x in sys.argv[1].split()]; b = [float(x) for x in sys.argv[2].split()]
d = [y - x for x, y in zip(a, b)]
el = float(sys.argv[3]) * int(sys.argv[4])
print("switch_ns %.0f resume_ns %.0f wakeup_ns %.0f bpf_cpu_pct %.2f switches %.0f resumes %.0f wakeups %.0f periods %.0f records %.0f wakers %.0f rec_ms %.0f blocked_ms %.0f held_ms %.1f over_ms %.0f lost_ms %.1f kstacks %.0f kstack_miss %.0f" % (
    d[0] / max(d[1], 1), d[2] / max(d[3], 1), d[11] / max(d[12], 1), 100 * (d[0] + d[2] + d[11]) / el,
    d[1], d[3], d[12], d[4], d[5], d[13], d[6], d[7], b[8], d[9], d[10], d[14], d[15]))' "$s0" "$s1" "$((t1 - t0))" "$(nproc)")"
	fi
	echo "$out"
}

modes="off on nokst"
if command -v offcputime-bpfcc >/dev/null; then
	if offcputime-bpfcc -f 1 >/dev/null 2>"$TMP/bcc.err"; then
		modes="$modes bcc"
	else
		echo "# offcputime-bpfcc: does not run here: $(grep -v '^ ' "$TMP/bcc.err" | tail -1 | head -c 200)"
	fi
fi
if command -v perf >/dev/null; then
	perf record --off-cpu -o "$TMP/perf.data" -- true 2>&1 | grep -q 'ignored because no BUILD_BPF_SKEL' &&
		echo "# perf record --off-cpu: not available here (perf built without BUILD_BPF_SKEL)"
fi
echo "# mode spin_ns rounds_per_s ctxt_per_s emberd_cpu_pct [on: BPF ns per run, counts over the run]"
for spin in 90000 7000; do
	for _ in $(seq "$REPS"); do
		for m in $modes; do run "$m" "$spin" | tee -a "$TMP/all"; done
	done
done
echo "# medians: mode spin rounds_per_s ctxt_per_s emberd_cpu_pct"
python3 - "$TMP/all" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    f = line.split()
    if not f or f[0].startswith("#"):
        continue
    rows.setdefault((f[0], f[1]), []).append((float(f[2]), float(f[3]), float(f[4])))
for (m, s), v in sorted(rows.items(), key=lambda kv: (-int(kv[0][1]), kv[0][0])):
    med = [statistics.median(x[i] for x in v) for i in range(3)]
    print("%s %s %.0f %.0f %.1f" % (m, s, *med))
for s in sorted({k[1] for k in rows}, key=lambda x: -int(x)):
    for m in ("on", "nokst"):
        if ("off", s) in rows and (m, s) in rows:
            a = statistics.median(x[0] for x in rows[("off", s)]); b = statistics.median(x[0] for x in rows[(m, s)])
            print("spin %s: throughput with off-CPU %s vs off: %+.1f %%" % (s, m, 100 * (b - a) / a))
    if ("off", s) in rows and ("bcc", s) in rows:
        a = statistics.median(x[0] for x in rows[("off", s)]); b = statistics.median(x[0] for x in rows[("bcc", s)])
        print("spin %s: offcputime-bpfcc vs emberd off: %+.1f %%" % (s, 100 * (b - a) / a))
PY
