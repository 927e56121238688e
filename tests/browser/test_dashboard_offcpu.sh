#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The dashboard's event selector, in headless Chromium against a live emberd with
# [offcpu] enabled (test_dashboard_offcpu.mjs): tests/workloads/offcpu runs 4 s (its thread
# "blocker" blocks ~98 % of the time); with event "off-CPU (ms)" the heat map and the flame graph
# of its window count milliseconds, the graph has the blocker's "[off-cpu S interruptible]"
# frame and adds up to the window's blocked time as /api/v1/folded?event=offcpu gives it; back
# to "cpu", no off-CPU frame; a capture started with "off-CPU" selected records off-CPU events.
# With [pagefault] on (tests/workloads/memio pagefault, 4 s): the memory and I/O options are
# enabled, "page faults" shows the workload's page-fault flame graph (its quanta as
# /api/v1/folded?event=pagefault gives them, "[page fault]" and fault_a in it). Against a daemon
# without [offcpu] or the memory and I/O sections, their options are disabled.
. "$(dirname "$0")/../lib.sh"
require_browser
require_live_emberd
W=$OUTPUT/workloads
[ -x "$W/offcpu" ] || skip_all "workloads not built (make workloads)"
trap 'stop_all; cleanup_tmp' EXIT

printf '[offcpu]\nenabled = yes\n' >"$TMP/offcpu.conf"
emberd_serve --config "$TMP/offcpu.conf" || { not_ok "emberd with [offcpu] starts"; done_testing; }
sleep 1
FROM=$(date +%s)
# at nice 0 whatever the lane's (the browser's pages run at 10): a blocker woken at nice 10 beside
# the first lane's spinning processes (test_hostile_perfmap's 13) waited in the run queue for
# half its 4 s (1776 ms blocked, fresh-clone run ZL), time that is not blocked
nice -n $((0 - $(nice))) "$W/offcpu" 4 >"$TMP/wl.out"
TO=$(($(date +%s) + 1))
sleep 2.5 # the last records reach the store
read -r _ TID _ < <(grep '^done' "$TMP/wl.out")
WANT=$(curl -sf "$URL/api/v1/folded?event=offcpu&comm=^blocker\$&from=$FROM&to=$TO" | awk '{ s += $NF } END { print s + 0 }')
echo "# blocker's blocked time in [$FROM, $TO): $WANT ms (tid $TID)"
URL=$URL FROM=$FROM TO=$TO WANT=$WANT PART=on node "$SRCDIR/tests/browser/test_dashboard_offcpu.mjs"
[ $? -eq 0 ] || T_FAILS=$((T_FAILS + 1))
stop_all

# the memory and I/O kinds: [pagefault] on, tests/workloads/memio pagefault for 4 s
printf '[pagefault]\nenabled = yes\nmax_rate = 0\n' >"$TMP/pf.conf"
emberd_serve --config "$TMP/pf.conf" || { not_ok "emberd with [pagefault] starts"; done_testing; }
sleep 1
FROM=$(date +%s)
"$W/memio" pagefault 4 >/dev/null
TO=$(($(date +%s) + 1))
sleep 2.5
WANT=$(curl -sf "$URL/api/v1/folded?event=pagefault&comm=^memio\$&from=$FROM&to=$TO" | awk '{ s += $NF } END { print s + 0 }')
echo "# memio's page faults in [$FROM, $TO): $WANT quanta"
URL=$URL FROM=$FROM TO=$TO WANT=$WANT PART=memio node "$SRCDIR/tests/browser/test_dashboard_offcpu.mjs" | sed 's/^\(not \)\{0,1\}ok - /&with [pagefault]: /'
[ "${PIPESTATUS[0]}" -eq 0 ] || T_FAILS=$((T_FAILS + 1))
stop_all
PIDS=()
emberd_serve || { not_ok "emberd without [offcpu] starts"; done_testing; }
URL=$URL PART=off node "$SRCDIR/tests/browser/test_dashboard_offcpu.mjs" | sed 's/^\(not \)\{0,1\}ok - /&without [offcpu]: /'
[ "${PIPESTATUS[0]}" -eq 0 ] || T_FAILS=$((T_FAILS + 1))
done_testing
