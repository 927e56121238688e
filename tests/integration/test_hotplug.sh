#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# CPU hotplug: a CPU taken offline while emberd samples is detached, and sampled again once it is
# back online, without a restart (the online mask is re-read once a second); the page-fault
# events ([pagefault], one perf event per CPU) follow it: a program pinned to the CPU once it is
# back has its page faults recorded.
. "$(dirname "$0")/../lib.sh"
require_root "CPU hotplug, BPF and perf_event"
[ -x "$EMBERD" ] || skip_all "no $EMBERD"
CPU=/sys/devices/system/cpu/cpu1/online
[ -w "$CPU" ] || skip_all "CPU 1 cannot be taken offline here ($CPU)"
[ -x "$OUTPUT/workloads/memio" ] || skip_all "no $OUTPUT/workloads/memio (make workloads)"
command -v taskset >/dev/null || skip_all "no taskset"
trap 'echo 1 >"$CPU" 2>/dev/null; cleanup_tmp' EXIT

PORT=$(free_port)
"$EMBERD" --listen 127.0.0.1:$PORT -v --dump-after 8 --dump-idle --dump-file "$TMP/d.folded" \
	-o pagefault.enabled=yes >"$TMP/emberd.log" 2>&1 &
EPID=$!
wait_log "$TMP/emberd.log" started || { sed 's/^/# /' "$TMP/emberd.log"; not_ok "emberd starts"; done_testing; }
check "starts on 2 or more CPUs" grep -qE "sampling ([2-9]|[1-9][0-9]+) CPUs" "$TMP/emberd.log"
sleep 1
echo 0 >"$CPU"
# the worker's next check of the online mask (once a second, later on a busy machine) detaches
# it, and says so; the workload below starts once the re-attach is said (a fixed 1.5 s was short
# on a loaded machine: 0 page faults recorded)
wait_log "$TMP/emberd.log" "CPU hotplug: .* [1-9][0-9]* detached"
echo 1 >"$CPU"
wait_log "$TMP/emberd.log" "CPU hotplug: [1-9][0-9]* attached"
T0=$(date +%s.%N)
taskset -c 1 "$OUTPUT/workloads/memio" pagefault 1 >"$TMP/memio.out" 2>&1 &
MP=$!
wait $MP
sleep 1.2 # a tick: its samples stored
curl -sf "http://127.0.0.1:$PORT/api/v1/folded?event=pagefault&pid=$MP&from=$T0" >"$TMP/pf.folded"
# its work's faults (fault_a, fault_b: ~10,000 pages a second), not the few of taskset's exec,
# made before the move to CPU 1
PF=$(awk '/;fault_[ab][; ]/ { n += $NF } END { print n + 0 }' "$TMP/pf.folded")
wait "$EPID"
check "emberd exits 0" test $? -eq 0
grep -E 'hotplug|sampled' "$TMP/emberd.log" | sed 's/^/# /'
# each change is logged at the worker's next tick after it (a detach and its re-attach may be
# one line or two); the start's own attaches are not hotplug
read -r ATT DET < <(awk '/CPU hotplug: / { for (i = 1; i < NF; i++) { if ($(i + 1) ~ /^attached/) a += $i
		if ($(i + 1) ~ /^detached/) d += $i } } END { print a + 0, d + 0 }' "$TMP/emberd.log")
check "offline CPU detached ($DET detaches)" test "$DET" -ge 1
check "re-attached when back, and only then ($ATT attaches for $DET detaches)" test "$ATT" -eq "$DET"
check "2 CPUs sampled again at the end" bash -c "grep 'CPU hotplug: ' '$TMP/emberd.log' | tail -1 | grep -q ' 2 CPUs sampled'"
check "the page-fault events re-attached to the CPU back online: its page faults recorded ($PF samples in memio's fault_a/fault_b, pinned to CPU 1; $(cat "$TMP/memio.out"))" \
	test "$PF" -ge 50
check "nothing lost" grep -qE "sampled ([0-9]+) .*delivered \1, untimed 0, lost 0" "$TMP/emberd.log"
done_testing
