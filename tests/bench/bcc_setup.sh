# SPDX-License-Identifier: MIT
# Sourced by bench_overhead.sh and bench_overhead_solo.sh (root BPF benchmarks run beside BCC's
# profile-bpfcc), after setting BENCH (the script's name, for messages). Makes TMP; sets PIDS and
# an EXIT trap that kills them, restores kernel.bpf_stats_enabled and removes TMP; checks root,
# emberd and the workloads; exports BCC_KERNEL_SOURCE when unset (BCC needs kernel headers: the
# -common and -amd64 folders of linux-headers-amd64 joined under TMP); enables BPF run-time
# stats. Defines cpu_ns PID.
EMBERD=${EMBERD:-$OUTPUT/emberd}
BURN=$OUTPUT/workloads/burn
TMP=$(mktemp -d "/tmp/ember-$BENCH.XXXXXX")
PIDS=()
OLD_STATS=$(sysctl -n kernel.bpf_stats_enabled)
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	sysctl -qw kernel.bpf_stats_enabled="$OLD_STATS"
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM # runs the EXIT trap: restores kernel.bpf_stats_enabled
[ "$(id -u)" -eq 0 ] || { echo "$BENCH: needs root" >&2; exit 1; }
for t in profile-bpfcc bpftool python3; do
	command -v $t >/dev/null || { echo "$BENCH: $t missing (apt-get install bpfcc-tools bpftool)" >&2; exit 1; }
done
[ -x "$EMBERD" ] && [ -x "$BURN" ] || { echo "$BENCH: build emberd and workloads first" >&2; exit 1; }
if [ -z "${BCC_KERNEL_SOURCE:-}" ]; then
	common=$(ls -d /usr/src/linux-headers-*-common 2>/dev/null | tail -1)
	arch=$(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | tail -1)
	[ -n "$common" ] && [ -n "$arch" ] || { echo "$BENCH: apt-get install linux-headers-amd64" >&2; exit 1; }
	export BCC_KERNEL_SOURCE=$TMP/kheaders
	mkdir -p "$BCC_KERNEL_SOURCE"
	cp -rs "$common/." "$BCC_KERNEL_SOURCE/" && cp -rsf "$arch/." "$BCC_KERNEL_SOURCE/"
fi
sysctl -qw kernel.bpf_stats_enabled=1

# cpu_ns PID: on-CPU time of all threads (schedstat field 1)
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%.0f\n", s}'; }
