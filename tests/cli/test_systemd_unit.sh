#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The unit verifies, and its offline security exposure stays "OK" or better (<= 4.0).
. "$(dirname "$0")/../lib.sh"
command -v systemd-analyze >/dev/null || skip_all "no systemd-analyze"
unit=$TMP/emberd.service
# point ExecStart at the built binary so verify can check it exists
bin=$EMBERD; [ -x "$bin" ] || bin=/bin/true
sed "s|^ExecStart=[^ ]*|ExecStart=$bin|" "$SRCDIR/systemd/emberd.service" >"$unit"
if out=$(systemd-analyze verify --man=no "$unit" 2>&1) && ! grep -qiE 'unknown|invalid|failed' <<<"$out"; then
	ok "systemd-analyze verify"
else
	not_ok "systemd-analyze verify"; sed 's/^/# /' <<<"$out"
fi
score=$(systemd-analyze security --offline=yes "$unit" 2>/dev/null | sed -n 's/.*Overall exposure level for .*: \([0-9.]*\) .*/\1/p')
echo "# exposure $score"
check "security exposure ${score:-?} <= 4.0" awk -v s="${score:-99}" 'BEGIN { exit !(s <= 4.0) }'
for opt in Type=notify Restart=on-failure WatchdogSec= MemoryMax= CPUQuota= NoNewPrivileges=yes \
	ProtectSystem=strict CapabilityBoundingSet= SystemCallFilter= RestrictAddressFamilies=; do
	check "unit sets $opt" grep -q "^$opt" "$SRCDIR/systemd/emberd.service"
done
# emberd keeps these after start-up (src/daemon/service/privs.c): the bounding set must allow them
for cap in CAP_BPF CAP_PERFMON CAP_SYS_PTRACE CAP_DAC_READ_SEARCH CAP_SYSLOG CAP_CHECKPOINT_RESTORE; do
	check "bounding set has $cap" grep -qE "^CapabilityBoundingSet=.*\b$cap\b" "$SRCDIR/systemd/emberd.service"
done
check "no CAP_SYS_ADMIN in the bounding set" bash -c "! grep -q '^CapabilityBoundingSet=.*CAP_SYS_ADMIN' '$SRCDIR/systemd/emberd.service'"
check "reload is SIGHUP" grep -q '^ExecReload=.*-HUP \$MAINPID' "$SRCDIR/systemd/emberd.service"
check "AF_UNIX allowed (sd_notify)" grep -qE '^RestrictAddressFamilies=.*AF_UNIX' "$SRCDIR/systemd/emberd.service"
check "NotifyAccess=main" grep -q '^NotifyAccess=main' "$SRCDIR/systemd/emberd.service"
done_testing
