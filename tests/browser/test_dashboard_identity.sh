#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# workload identity in the dashboard (root, BPF; test_dashboard_identity.mjs in
# headless Chromium). Two burners: one in a cgroup shaped like docker's (DIR/docker/ID under the
# cgroup2 mount), one outside named bz<pid> (a copy of burn). The page's container field (a
# 12-digit prefix) keeps the container's samples in the heat map's and the flame graph's
# requests and graph; its service field keeps bz<pid>'s; "group by container" puts the id above
# the root; the graph's totals equal the API's folded output for the same parameters. ~30 s.
. "$(dirname "$0")/../lib.sh"
require_browser
require_live_emberd
BURN=$OUTPUT/workloads/burn
[ -x "$BURN" ] || { not_ok "no $BURN (make workloads)"; done_testing; }
CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ -n "$CG2" ] || skip_all "no cgroup2 mount"
BASE=$CG2/ember-dash-$$
ID=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
cleanup_cg() {
	local d
	[ -d "$BASE" ] || return 0
	for d in $(find "$BASE" -depth -type d); do
		cat "$d/cgroup.procs" 2>/dev/null | while read -r p; do echo "$p" >"$CG2/cgroup.procs"; done
		rmdir "$d" 2>/dev/null
	done
}
trap 'stop_all; cleanup_cg; cleanup_tmp' EXIT
mkdir -p "$BASE/docker/$ID" || skip_all "cannot make cgroups under $CG2"

emberd_serve --frequency 99 || { not_ok "emberd starts"; done_testing; }
sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$BASE/docker/$ID" "$BURN" 60 >/dev/null &
PIDS+=($!)
cp "$BURN" "$TMP/bz$$"
"$TMP/bz$$" 60 >/dev/null &
PIDS+=($!)
sleep 5
mkdir -p "$SCREENSHOT_DIR"
URL=$URL ID=$ID SVC="bz$$" node "$SRCDIR/tests/browser/test_dashboard_identity.mjs"
[ $? -eq 0 ] || T_FAILS=$((T_FAILS + 1))
done_testing
