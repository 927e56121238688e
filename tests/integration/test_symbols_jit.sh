#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# lane: beside (light: checks names and walks as shares of a few hundred samples, no time bound)
# emberd names JIT code from perf maps: the jit workload generates machine code at run time and
# describes it in /tmp/perf-PID.map; its functions appear by name with _[j] under jit_run, the
# function added to the map while sampling (--grow) appears too, and so does the 0x-prefixed
# variant of the format with malformed lines in the file.
. "$(dirname "$0")/../lib.sh"
require_root "BPF and perf_event"
[ -x "$EMBERD" ] || skip_all "no $EMBERD"
[ -r /sys/kernel/btf/vmlinux ] || skip_all "no kernel BTF"
W=$OUTPUT/workloads
[ -x "$W/jit" ] || skip_all "workloads not built (make workloads)"

trap 'stop_all; [ -n "${KEEP:-}" ] && cp -r "$TMP" "$KEEP"; cleanup_tmp' EXIT

"$EMBERD" --listen 127.0.0.1:0 --dump-after 7 --dump-root pid --dump-file "$TMP/jit.folded" \
	>"$TMP/emberd.log" 2>&1 &
EPID=$!
PIDS+=($EPID)
wait_log "$TMP/emberd.log" "started" || { sed 's/^/# /' "$TMP/emberd.log"; not_ok "emberd starts"; done_testing; }
ok "emberd starts"
"$W/jit" --seconds 5 --grow 2 >"$TMP/jit.out" &
PIDS+=($!)
"$W/jit" --seconds 5 --0x --junk >"$TMP/jit0x.out" &
PIDS+=($!)
wait_log "$TMP/jit.out" ready
wait_log "$TMP/jit0x.out" ready
J1=$(cat /proc/${PIDS[1]}/stat 2>/dev/null | awk '{print $1}')
J2=$(cat /proc/${PIDS[2]}/stat 2>/dev/null | awk '{print $1}')
wait "$EPID"
check "emberd exits 0 after --dump-after" test $? -eq 0
grep -E 'warning|error' "$TMP/emberd.log" | sed 's/^/# /'

# samples of one pid: total, with a _[j] frame, per function
jit_counts() {
	awk -v p="jit-$1" '
		{ n = $NF; s = substr($0, 1, length($0) - length($NF) - 1); split(s, f, ";")
		  if (f[1] != p) next
		  tot += n; j += (s ~ /_\[j\]/) * n; u += (s ~ /;jit_run;jit_[a-z]+_\[j\]$/) * n
		  a += (s ~ /;jit_alpha_\[j\]$/) * n; b += (s ~ /;jit_beta_\[j\]$/) * n
		  g += (s ~ /;jit_gamma_\[j\]$/) * n }
		END { printf "%d %d %d %d %d %d\n", tot, j, u, a, b, g }' "$TMP/jit.folded"
}
read -r TOT J UNDER A B G < <(jit_counts "$J1")
echo "# jit: $TOT samples, $J with _[j], $UNDER under jit_run; alpha $A beta $B gamma $G"
check "jit sampled" test "$TOT" -ge 20
check "jit: >= 90% of samples in named JIT functions" test $((J * 10)) -ge $((TOT * 9))
check "jit: JIT frames sit under jit_run (frame pointers through JIT code)" \
	test $((UNDER * 10)) -ge $((J * 9))
check "jit: jit_alpha_[j] and jit_beta_[j] named" test "$A" -gt 0 -a "$B" -gt 0
check "jit: jit_alpha (3x the work) outweighs jit_beta" test "$A" -gt "$B"
check "jit: jit_gamma_[j], added to the map while running, named" test "$G" -gt 0

read -r TOT J UNDER A B G < <(jit_counts "$J2")
echo "# jit --0x --junk: $TOT samples, $J with _[j]; alpha $A beta $B"
check "jit --0x sampled" test "$TOT" -ge 20
check "jit --0x: >= 90% of samples in named JIT functions" test $((J * 10)) -ge $((TOT * 9))
check "jit --0x: no [unknown] leaf" bash -c "! grep -q '^jit-$J2;.*\[unknown\] [0-9]' '$TMP/jit.folded'"
done_testing
