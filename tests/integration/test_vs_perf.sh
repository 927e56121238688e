#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# lane: alone (perf and emberd side by side, compared sample for sample)
# emberd and `perf record -F 999 -a --call-graph dwarf` side by side on the same workloads for
# the same ~20 s: each workload's profiles agree, similarity >= 0.95 (1 - ||A/||A|| - B/||B|| ||_1
# / 2 over the folded stacks, computed by `ember stat similarity`). perf's stacks go through
# `perf script | ember collapse --all` (stackcollapse-perf.pl --all semantics: comm root, _[k]).
# perf unwinds with DWARF, not frame pointers: sysloop's write_loop calls libc's read and write,
# which keep no frame pointer, and a frame-pointer walk from there skips write_loop (perf -g
# shows main;read), where emberd's unwinder and perf's DWARF both show main;write_loop;read. Both
# workloads' stacks are shallow: 2 KiB of stack per sample covers them. Normalized on both sides
# only as test_unwind does: the names of one address made one (aliases.py: perf's DWARF path
# names libc's read __GI___libc_read, its symbol table read) and stacks from
# __libc_start_call_main up (from_entry, lib.sh), where perf's unwinding sometimes stops.
# Two independent samplings of the same shares differ by sampling noise alone: sysloop spreads
# its samples over ~80 stacks (12 hold 95%), and drawing two samples from its measured profile
# gives a mean similarity of 0.938 for 1000 samples each (what 10 s at
# 99 Hz gave: 80% of draws below 0.95), 0.965 for 3500 (2.5% below 0.95), 0.979 for 10000 (none
# below 0.96 in 2000 draws). So both sample at 999 Hz (F) for D seconds: sysloop, which shares
# a CPU with perf and emberd, gets 7000-19000 samples.
. "$(dirname "$0")/../lib.sh"
require_root "BPF and perf_event"
[ -x "$EMBERD" ] || skip_all "no $EMBERD"
[ -x "$EMBER" ] || skip_all "no $EMBER"
command -v perf >/dev/null || skip_all "perf not installed"
W=$OUTPUT/workloads
[ -x "$W/burn" ] && [ -x "$W/sysloop" ] || skip_all "workloads not built (make workloads)"

trap 'stop_all; cleanup_tmp' EXIT
F=999 D=20

"$EMBERD" --listen 127.0.0.1:0 -F $F --dump-after $((D + 3)) --dump-root comm --dump-file "$TMP/emberd.folded" \
	>"$TMP/emberd.log" 2>&1 &
EPID=$!
PIDS+=($EPID)
wait_log "$TMP/emberd.log" started || { sed 's/^/# /' "$TMP/emberd.log"; not_ok "emberd starts"; done_testing; }
# The workloads start before perf does: a process perf samples before its exec (the shell's fork
# of it) keeps the pre-exec image for perf's DWARF unwinding ("thread map already set": libunwind's
# view of the thread is set at its first sample and not renewed at exec), which then unwinds
# every sample of it by rbp; whether that first sample happens is a matter of timing.
# burn at real-time priority so that it gets its CPU on a busy host; sysloop alongside.
"$W/sysloop" $((D + 2)) >"$TMP/sysloop.out" &
PIDS+=($!)
chrt -f 1 "$W/burn" $((D + 2)) >"$TMP/burn.out" &
BPID=$!
PIDS+=($BPID)
wait_log "$TMP/sysloop.out" ready && wait_log "$TMP/burn.out" ready
perf record -F $F -a --call-graph dwarf,2048 -o "$TMP/perf.data" -- sleep $D >"$TMP/perf.log" 2>&1
check "perf record ran" test $? -eq 0
wait "$BPID"
wait "$EPID"
check "emberd dumped" test $? -eq 0
perf script -i "$TMP/perf.data" 2>/dev/null | "$EMBER" collapse --all >"$TMP/perf.folded"
check "perf script collapsed" test -s "$TMP/perf.folded"

for c in burn sysloop; do
	grep "^$c;" "$TMP/emberd.folded" >"$TMP/e.$c"
	grep "^$c;" "$TMP/perf.folded" >"$TMP/p.$c"
done
python3 "$SRCDIR/tests/integration/aliases.py" "$W/burn" "$W/sysloop" /lib/x86_64-linux-gnu/libc.so.6 \
	/lib64/ld-linux-x86-64.so.2 -- "$TMP/e.burn" "$TMP/p.burn" "$TMP/e.sysloop" "$TMP/p.sysloop"
for c in burn sysloop; do
	from_entry "$TMP/e.$c" "$TMP/e.$c.entry"
	from_entry "$TMP/p.$c" "$TMP/p.$c.entry"
	"$EMBER" stat similarity "$TMP/e.$c.entry" "$TMP/p.$c.entry" >"$TMP/sim.$c" 2>&1
	echo "# $c: emberd $(awk '{s += $NF} END {print s + 0}' "$TMP/e.$c") samples, perf $(wc -l <"$TMP/p.$c") stacks, $(head -1 "$TMP/sim.$c")"
done
for c in burn sysloop; do
	SIM=$(awk '/^similarity/ {print $2}' "$TMP/sim.$c")
	check "$c: similarity emberd vs perf >= 0.95 (${SIM:-none})" awk -v s="${SIM:-0}" 'BEGIN { exit !(s >= 0.95) }' ||
		python3 - "$TMP/e.$c.entry" "$TMP/p.$c.entry" <<'PY' # what differs, by share
import sys
def shares(path):
    d = {}
    for l in open(path):
        s, _, n = l.rstrip("\n").rpartition(" ")
        if s:
            d[s] = d.get(s, 0) + float(n)
    t = sum(d.values()) or 1
    return {k: v / t for k, v in d.items()}
e, p = shares(sys.argv[1]), shares(sys.argv[2])
diff = sorted(set(e) | set(p), key=lambda k: -abs(e.get(k, 0) - p.get(k, 0)))
print("#   emberd%  perf%  stack (the 8 largest differences)")
for k in diff[:8]:
    print("#   %6.2f %6.2f  %s" % (100 * e.get(k, 0), 100 * p.get(k, 0), k[:150]))
PY
done
grep -iE 'warn|error' "$TMP/emberd.log" | head -5 | sed 's/^/#   emberd: /'
grep -iE 'warn|error|lost' "$TMP/perf.log" | head -5 | sed 's/^/#   perf: /'
done_testing
