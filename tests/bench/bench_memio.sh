#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The cost of the memory and I/O events ([pagefault], [vmgrow], [blockio], [malloc]).
#
# Targeted stress, per kind, tests/workloads/memio for SECONDS, REPS times, alternating:
#   off   emberd with every section off (its 99 Hz on-CPU sampling only)
#   on    emberd with that kind's section on, its defaults (max_rate included; malloc by comm)
#   perf  (page faults, the reference) emberd off, the stress under
#         `perf record -e page-faults -c 16 -a -g` (the same period, every CPU, kernel and
#         frame-pointer user stacks, to a file), when perf is installed
# the stress being: pagefault "storm" (faults as fast as it can), vmgrow "vmstorm" (mmap and
# munmap of 64 KiB as fast as it can), blockio "direct" (O_DIRECT writes of 64 KiB), malloc
# "malloc" (800 + 200 byte allocations as fast as it can). Per run: the workload's operations a
# second (pages, mmaps, bytes, bytes), emberd's CPU (utime + stime), the kind's BPF programs'
# run time per run and per event (kernel.bpf_stats, which emberd holds on), events seen,
# records sent and throttled (the stats' deltas over the run, published once a tick: +-1 s),
# and the on-CPU samples a second per CPU (99 Hz unaffected: the store's samples, idle
# included, in the run's window / CPUs / seconds).
#
# Host mix (hostmix_lib.sh: xz, gzip, python, perl, node, short-lived ls/sed), SECONDS, REPS
# times: emberd with every section off, then all four on ([malloc] comm = memio: the uprobe on
# every process of libc, which is the host-wide cost of opting in by comm); per run emberd's
# CPU, each kind's BPF run time per event and its share of the host's CPU time, the on-CPU
# samples a second per CPU. Medians per mode.
#
# usage: [KINDS="pagefault ..."] [HOSTMIX=0] bench_memio.sh [SECONDS] [REPS]   (default 5 3; root)
set -u
: "${OUTPUT:=build}"
SECS=${1:-5}
REPS=${2:-3}
EMBERD=${EMBERD:-$OUTPUT/emberd}
W=$OUTPUT/workloads/memio
[ "$(id -u)" -eq 0 ] || { echo "bench_memio: needs root" >&2; exit 1; }
[ -x "$EMBERD" ] && [ -x "$W" ] || { echo "bench_memio: build emberd and workloads first" >&2; exit 1; }
TMP=$(mktemp -d /tmp/ember-bench-memio.XXXXXX)
EPID=
MIX=()
cleanup() {
	[ -n "$EPID" ] && kill "$EPID" 2>/dev/null
	for p in "${MIX[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
. "$(dirname "$0")/hostmix_lib.sh"
NCPU=$(nproc)
TICK=$(getconf CLK_TCK)

start_emberd() { # CONF
	local port
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	URL=http://127.0.0.1:$port
	"$EMBERD" --listen "127.0.0.1:$port" --config "$1" >"$TMP/emberd.log" 2>&1 &
	EPID=$!
	for _ in $(seq 100); do curl -sf -o /dev/null "$URL/healthz" && return 0; sleep 0.1; done
	echo "bench_memio: emberd did not start" >&2
	cat "$TMP/emberd.log" >&2
	exit 1
}
stop_emberd() { kill "$EPID"; wait "$EPID" 2>/dev/null; EPID=; }
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# snap: "samples run_ns[kind...] run_cnt[kind...] events[kind...] recorded[...] throttled[...]"
snap() {
	curl -sf "$URL/api/v1/stats" | python3 -c 'import json, sys
d = json.load(sys.stdin); m = d.get("memio", {}); k = ("pagefault", "vmgrow", "blockio", "blockio_latency", "malloc")
v = [d["sampler"]["samples"]]
for f in ("run_ns", "run_cnt", "events", "recorded", "throttled"):
    v += [m.get(f, {}).get(x, 0) for x in k]
print(" ".join(str(x) for x in v))'
}
# delta A B: B - A element-wise
delta() { paste -d' ' <(tr ' ' '\n' <<<"$1") <(tr ' ' '\n' <<<"$2") | awk '{ printf "%s ", $2 - $1 }'; }
# hz T0 T1: on-CPU samples a second per CPU in [T0, T1), idle included, by the samples' own
# times in the store (the stats are published once a tick: a 5 s delta of them is off by 20 %)
hz() {
	sleep 2.2 # the tick that stores them
	curl -sf "$URL/api/v1/folded?idle=1&from=$1&to=$2" |
		awk -v n="$NCPU" -v s="$(awk -v a="$1" -v b="$2" 'BEGIN { print b - a }')" \
			'{ c += $NF } END { printf "%.1f", c / n / s }'
}
host_cpu() { awk '/^cpu / { print $2 + $3 + $4 + $6 + $7 + $8 }' /proc/stat; } # ticks, all CPUs
kidx() { case $1 in pagefault) echo 0 ;; vmgrow) echo 1 ;; blockio) echo 2 ;; malloc) echo 4 ;; esac; }

printf '' >"$TMP/off.conf"
for k in pagefault vmgrow blockio malloc; do
	{ echo "[$k]"; echo "enabled = yes"; [ "$k" = malloc ] && echo "comm = memio"; } >"$TMP/$k.conf"
done
{ for k in pagefault vmgrow blockio; do printf '[%s]\nenabled = yes\n' "$k"; done
  printf '[malloc]\nenabled = yes\ncomm = memio\n'; } >"$TMP/all.conf"

stress() { # KIND -> the workload's mode
	case $1 in pagefault) echo storm ;; vmgrow) echo vmstorm ;; blockio) echo direct ;; malloc) echo malloc ;; esac
}

echo "# bench_memio: $SECS s x $REPS, $NCPU CPUs, kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# targeted stress: kind mode ops/s emberd_cpu_pct hz_per_cpu events recorded throttled run_ns_per_event bpf_cpu_pct"
KINDS=${KINDS:-pagefault vmgrow blockio malloc}
for k in $KINDS; do
	i=$(kidx "$k")
	modes="off on"
	[ "$k" = pagefault ] && command -v perf >/dev/null && modes="off on perf"
	for r in $(seq "$REPS"); do
		for mode in $modes; do
			conf=$TMP/off.conf
			[ $mode = on ] && conf=$TMP/$k.conf
			start_emberd "$conf"
			sleep 1
			s0=$(snap); c0=$(ticks "$EPID"); h0=$(host_cpu); t0=$(date +%s.%N)
			if [ $mode = perf ]; then
				perf record -q -e page-faults -c 16 -a -g -o "$TMP/perf.data" -- \
					"$W" "$(stress "$k")" "$SECS" "$TMP/direct.dat" >"$TMP/w.out" 2>/dev/null
			else
				"$W" "$(stress "$k")" "$SECS" "$TMP/direct.dat" >"$TMP/w.out"
			fi
			t1=$(date +%s.%N); h1=$(host_cpu); c1=$(ticks "$EPID"); s1=$(snap)
			HZ=$(hz "$t0" "$t1")
			stop_emberd
			read -r _ _ A B <"$TMP/w.out"
			d=($(delta "$s0" "$s1"))
			awk -v k="$k" -v m="$mode" -v a="$A" -v b="$B" -v t0="$t0" -v t1="$t1" -v c="$((c1 - c0))" \
				-v tk="$TICK" -v hz="$HZ" -v rns="${d[$((1 + i))]}" \
				-v ev="${d[$((11 + i))]}" -v rec="${d[$((16 + i))]}" -v thr="${d[$((21 + i))]}" \
				-v h="$((h1 - h0))" 'BEGIN { s = t1 - t0
				printf "%s %s %.0f %.2f %.1f %d %d %d %.0f %.3f\n", k, m, (a + b) / s,
					100 * c / tk / s, hz, ev, rec, thr, ev ? rns / ev : 0,
					h ? 100 * rns / 1e9 / (h / tk) : 0 }'
		done
	done
done | tee "$TMP/stress.txt"
echo "# medians: kind mode ops/s emberd_cpu_pct hz_per_cpu run_ns_per_event bpf_cpu_pct"
for k in $KINDS; do
	for mode in off on perf; do
		awk -v k="$k" -v m="$mode" '$1 == k && $2 == m' "$TMP/stress.txt" >"$TMP/sel"
		[ -s "$TMP/sel" ] || continue
		med() { cut -d' ' -f"$1" "$TMP/sel" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
		echo "$k $mode $(med 3) $(med 4) $(med 5) $(med 9) $(med 10)"
	done
done

[ "${HOSTMIX:-1}" = 0 ] && exit 0
echo "# host mix: mode emberd_cpu_pct hz_per_cpu then per kind events/s run_ns_per_event bpf_cpu_pct"
mix_setup
for r in $(seq "$REPS"); do
	for mode in off all; do
		start_emberd "$TMP/$mode.conf"
		sleep 1
		mix_start "$SECS"
		s0=$(snap); c0=$(ticks "$EPID"); h0=$(host_cpu); t0=$(date +%s.%N)
		sleep "$SECS"
		t1=$(date +%s.%N); h1=$(host_cpu); c1=$(ticks "$EPID"); s1=$(snap)
		HZ=$(hz "$t0" "$t1")
		for p in "${MIX[@]}"; do wait "$p" 2>/dev/null; done
		MIX=()
		stop_emberd
		d=($(delta "$s0" "$s1"))
		line=$(awk -v t0="$t0" -v t1="$t1" -v c="$((c1 - c0))" -v tk="$TICK" -v hz="$HZ" \
			'BEGIN { s = t1 - t0; printf "%.2f %s", 100 * c / tk / s, hz }')
		for k in pagefault vmgrow blockio malloc; do
			i=$(kidx "$k")
			line+=" $(awk -v ev="${d[$((11 + i))]}" -v rns="${d[$((1 + i))]}" -v cnt="${d[$((6 + i))]}" \
				-v h="$((h1 - h0))" -v tk="$TICK" -v t0="$t0" -v t1="$t1" \
				'BEGIN { printf "%s:%.0f/s,%.0fns/run,%.3f%%", "'"$k"'", ev / (t1 - t0),
					cnt ? rns / cnt : 0, h ? 100 * rns / 1e9 / (h / tk) : 0 }')"
		done
		echo "$mode $line"
	done
done
