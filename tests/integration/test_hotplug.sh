#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# CPU hotplug: a CPU taken offline while emberd samples is detached, and sampled again once it is
# back online, without a restart (the online mask is re-read once a second).
. "$(dirname "$0")/../lib.sh"
require_root "CPU hotplug, BPF and perf_event"
[ -x "$EMBERD" ] || skip_all "no $EMBERD"
CPU=/sys/devices/system/cpu/cpu1/online
[ -w "$CPU" ] || skip_all "CPU 1 cannot be taken offline here ($CPU)"
trap 'echo 1 >"$CPU" 2>/dev/null; cleanup_tmp' EXIT

"$EMBERD" --listen 127.0.0.1:0 -v --dump-after 6 --dump-idle --dump-file "$TMP/d.folded" \
	>"$TMP/emberd.log" 2>&1 &
EPID=$!
wait_log "$TMP/emberd.log" started || { sed 's/^/# /' "$TMP/emberd.log"; not_ok "emberd starts"; done_testing; }
check "starts on 2 or more CPUs" grep -qE "sampling ([2-9]|[1-9][0-9]+) CPUs" "$TMP/emberd.log"
sleep 1
echo 0 >"$CPU"
sleep 1.5
echo 1 >"$CPU"
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
check "nothing lost" grep -qE "sampled ([0-9]+) .*delivered \1, untimed 0, lost 0" "$TMP/emberd.log"
done_testing
