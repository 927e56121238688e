#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Off-CPU events (issue 30), with a live emberd and [offcpu] enabled:
#   - tests/workloads/offcpu for 6 s: its thread "blocker" blocks ~60 % in read() of a pipe and
#     ~40 % in nanosleep per cycle: in /api/v1/folded?event=offcpu the pipe's share is within
#     3 points of 60 % and the timer's of 40 %; the total blocked time (ms, one count = 1 ms) is
#     within 2 % of the blocker's wall time less its CPU time (both printed by the workload);
#     its blocked stacks reach main through the CFI walker;
#   - event=cpu (the default) has no off-CPU root frame, event=bogus is a 400.
. "$(dirname "$0")/../lib.sh"
require_live_emberd
W=$OUTPUT/workloads
[ -x "$W/offcpu" ] || skip_all "workloads not built (make workloads)"
trap 'stop_all; cleanup_tmp' EXIT

printf '[offcpu]\nenabled = yes\nstates = S,D\n' >"$TMP/offcpu.conf"
emberd_serve --config "$TMP/offcpu.conf" || { not_ok "emberd with [offcpu] starts"; done_testing; }
ok "emberd with [offcpu] starts"
sleep 1
"$W/offcpu" 6 >"$TMP/wl.out"
sleep 2.5 # a tick or two: the last records reach the store
read -r _ TID ELAPSED CPU < <(grep '^done' "$TMP/wl.out")
curl -sf "$URL/api/v1/folded?event=offcpu&tid=$TID&from=-60s" >"$TMP/off.folded"
awk -v el="$ELAPSED" -v cpu="$CPU" '
	{ n = $NF; tot += n; if ($0 ~ /;wait_pipe;/) pipe += n; else if ($0 ~ /;wait_timer;/) tim += n
	  if ($0 ~ /;main;/) mainn += n }
	END {
		exp_ms = (el - cpu) / 1e6
		printf "# blocked %d ms (expected %.0f ms: %.2f %%), pipe %.1f %%, timer %.1f %%, main %.1f %%\n",
			tot, exp_ms, 100 * tot / exp_ms, 100 * pipe / tot, 100 * tim / tot, 100 * mainn / tot
		print (tot > 0.98 * exp_ms && tot < 1.02 * exp_ms) ? "total" : "xtotal"
		print (pipe / tot > 0.57 && pipe / tot < 0.63) ? "pipe" : "xpipe"
		print (tim / tot > 0.37 && tim / tot < 0.43) ? "timer" : "xtimer"
		print (mainn / tot > 0.95) ? "main" : "xmain"
	}' "$TMP/off.folded" >"$TMP/res"
grep '^#' "$TMP/res"
check "blocked time within 2 % of wall less CPU" grep -qx total "$TMP/res"
check "read() of the pipe 60 +- 3 %" grep -qx pipe "$TMP/res"
check "nanosleep 40 +- 3 %" grep -qx timer "$TMP/res"
check "blocked stacks reach main (>= 95 %)" grep -qx main "$TMP/res"
check "the state as the root frame" grep -q '^offcpu;\[off-cpu S interruptible\];\|^blocker;\[off-cpu S interruptible\];' "$TMP/off.folded"
curl -sf "$URL/api/v1/folded?tid=$TID&from=-60s" >"$TMP/cpu.folded"
check "event=cpu has no off-CPU frames" bash -c "! grep -q 'off-cpu' '$TMP/cpu.folded'"
code=$(curl -s -o /dev/null -w '%{http_code}' "$URL/api/v1/folded?event=bogus")
check "event=bogus is a 400 ($code)" [ "$code" = 400 ]
done_testing
