#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Cgroup churn: a subtree of the cgroup2 mount is delegated to nobody (the directory and its
# cgroup.procs, cgroup.threads and cgroup.subtree_control chowned, as systemd delegates to a
# user), who makes 65,536 cgroups in it and removes them, twice, while a root burner runs and
# API queries by container make emberd walk the mount. Then a new container (a root-owned
# docker-<id>.scope with a burner in it) is named: its samples carry its container id
# (`container=`). Its cgroups take at most a quarter of the identity table while they exist
# (export.identity.cgroups_refused), and are dropped once gone (cgroups_dropped). Before: the
# table stayed full until restart, a new container's samples got no container.
. "$(dirname "$0")/../lib.sh"
require_live_emberd
W=$OUTPUT/workloads
[ -x "$W/burn" ] || skip_all "workloads not built"
for t in setpriv python3; do command -v $t >/dev/null || skip_all "no $t"; done
CG=$(cgroup2_mount)
[ -n "$CG" ] && [ -w "$CG" ] || skip_all "no writable cgroup2 mount"
. "$(dirname "$0")/faults.sh"
. "$(dirname "$0")/hostile2.sh"
att_dir
SUB=$CG/ember-hostile-$$
CID=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
CTR=$CG/ember-ctr-$$/docker-$CID.scope
cleanup_cg() {
	local d
	for d in "$CTR" "$CG/ember-ctr-$$"; do
		[ -d "$d" ] && { cat "$d/cgroup.procs" 2>/dev/null | while read -r p; do echo "$p" >"$CG/cgroup.procs"; done; rmdir "$d"; }
	done
	[ -d "$SUB" ] && { find "$SUB" -mindepth 1 -depth -type d -exec rmdir {} + 2>/dev/null; rmdir "$SUB"; }
}
trap 'stop_all; cleanup_cg; rm -rf "$ATT"; cleanup_tmp' EXIT

mkdir "$SUB"
chown 65534:65534 "$SUB" "$SUB/cgroup.procs" "$SUB/cgroup.threads" "$SUB/cgroup.subtree_control"
cat >"$ATT/churn.py" <<'PY'
import os, sys
root, n, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for r in range(rounds):
    for i in range(n):
        os.mkdir("%s/c%d" % (root, i))
    print("made", n, flush=True)
    sys.stdin.readline()  # the test walks meanwhile
    for i in range(n):
        os.rmdir("%s/c%d" % (root, i))
    print("removed", n, flush=True)
PY
chown -R 65534:65534 "$ATT"

# the identity's counters are shown with an exporter: one, to a receiver that takes all
mkdir "$TMP/rx"
RPORT=$(free_port)
python3 "$(dirname "$0")/export_receiver.py" "$RPORT" "$TMP/rx" &
PIDS+=($!)
burn_start 240
emberd_serve --frequency 99 -o sampling.tick_ms=250 \
	-o "export.otlp_endpoint=http://127.0.0.1:$RPORT" -o export.otlp_interval=2s ||
	{ not_ok "emberd starts"; done_testing; }
ok "emberd starts"
idstat() { stat_json "d['export']['identity']['$1']"; }
walk() { curl -sf -m 30 -o /dev/null -w "# a walk by group_by=container: %{time_total} s\n" "$URL/api/v1/folded?from=-2s&group_by=container"; }
sleep 3
walk
# the cgroups root's own (the table's before the churn), as published with the exporter's round
for _ in $(seq 20); do
	c0=$(idstat cgroups)
	[ "${c0:-0}" -gt 0 ] && break
	sleep 0.5
done
mem_base
watch_start
coproc CHURN { "${AS_NOBODY[@]}" "$PY_NOBODY" "$ATT/churn.py" "$SUB" 65536 2; }
for round in 1 2; do
	read -r what n <&"${CHURN[0]}"
	echo "# round $round: nobody $what $n cgroups ($(date +%T.%N))"
	sleep 1.1
	walk # a walk while they exist
	# the identity's counters are published with the exporter's rounds (2 s), and a walk a
	# sample started while the cgroups were being made (one naming an unknown cgroup: at most
	# one a second) may be the last merged, having seen only part of them (ZL1: 16386 known +
	# 48539 refused): read, walking again each time, until a whole walk's refusals show (each
	# walk counts its refusals again), while the cgroups still exist
	if [ $round = 1 ]; then
		for _ in $(seq 20); do
			# both from one answer: two asks may straddle a publication (ZL3: 2 known, from
			# before the walk, beside 49153 refused, from after it)
			read -r c1 r1 < <(stat_json "'%d %d' % (d['export']['identity']['cgroups'], d['export']['identity']['cgroups_refused'])")
			[ "${r1:-0}" -ge $((65536 - 16384)) ] && break
			sleep 0.5
			walk
		done
	fi
	echo >&"${CHURN[1]}"
	read -r what n <&"${CHURN[0]}"
	echo "# round $round: nobody $what $n cgroups"
done
check "nobody made and removed 65,536 cgroups twice in its delegated subtree" test "$what $n" = "removed 65536"
check "its cgroups took at most a quarter of the table ($c1 known), the rest refused, counted ($r1)" \
	test "$c1" -le $((16384 + 1000)) -a "$r1" -ge $((65536 - 16384))

# a new container, root's
mkdir -p "$CTR"
sh -c "echo \$\$ >'$CTR/cgroup.procs'; exec '$W/burn' 8" >/dev/null &
CB=$!
PIDS+=($CB)
sleep 4
n=0
for _ in $(seq 10); do
	n=$(curl -sf "$URL/api/v1/folded?from=-4s&container=${CID:0:12}" | awk '{ s += $NF } END { print s + 0 }')
	[ "$n" -gt 0 ] && break
	sleep 1
done
check "a new container after the churn: its samples carry its container id ($n samples)" test "$n" -gt 0
# every cgroup it kept, in both rounds, dropped: at the first whole walk after their removal,
# published with the exporter's next round (ZF1 read it before round 2's: 16383 of 32766); what
# it kept of nobody's is what it knew beyond root's own
want=$((2 * (${c1:-0} - ${c0:-0})))
for _ in $(seq 15); do
	d=$(idstat cgroups_dropped)
	[ "${d:-0}" -ge "$want" ] && break
	walk
	sleep 1
done
check "the gone cgroups were dropped, counted ($d of the $want it kept in the two rounds)" \
	test "$want" -gt 16000 -a "${d:-0}" -ge "$want"
wait "$CB" 2>/dev/null
watch_stop
[ -n "${DEBUG_WATCH:-}" ] && sed 's/^/# watch /' "$TMP/watch"
bounds_check "65,536 cgroups made and removed"
mem_back_report "the churn over"
emberd_stop_check "after the churn"
done_testing
