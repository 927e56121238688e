#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Where emberd's own CPU goes on bench_hostmix.sh's host mix (measure first): emberd
# at 99 Hz over the mix (xz, a gzip loop, python3.11, perl, node, ls/sed 20 times a second),
# `perf record --call-graph dwarf` of emberd alone for DUR s after a 4 s start, then the share of
# emberd's samples under each phase (a sample counts for every phase on its stack, so nested
# phases are listed indented and the shares do not add up). Also the process CPU per sample
# over the same window (perf's own sampling of emberd inflates it: compare runs, not to others).
# With MIX=newproc, the load is bench_newproc.sh's instead: a one-thread burner and a shell loop
# starting /bin/true (tests/bench/newproc_loop.sh), where emberd's CPU is what new processes cost.
# usage: bench_breakdown.sh [DUR]   (root, perf, node, xz, perl; EMBERD=... to pick a build)
set -u
OUT=${OUTPUT:-$(cd "$(dirname "$0")/../.." && pwd)/build}
EMBERD=${EMBERD:-$OUT/emberd} DUR=${1:-20}
TMP=$(mktemp -d /tmp/ember-breakdown.XXXXXX)
MIX=()
trap 'mix_stop; rm -rf "$TMP"' EXIT
. "$(dirname "$0")/hostmix_lib.sh"
if [ "${MIX:-}" = newproc ]; then
	mix_emberd "$EMBERD" "$TMP/emberd.log"
	"$OUT/workloads/burn" $((DUR + 8)) >/dev/null &
	MIX+=($!)
	bash "$(dirname "$0")/newproc_loop.sh" $((DUR + 8)) "$TMP/loop.n" &
	MIX+=($!)
else
	mix_setup
	mix_start $((DUR + 8))
	mix_emberd "$EMBERD" "$TMP/emberd.log"
fi
port=$E_PORT E=$E_PID
sleep 4
snap() { echo "$(awk '{print $14 + $15}' /proc/$E/stat) $(curl -s "127.0.0.1:$port/metrics" | awk '$1=="ember_samples_total"{print $2}')"; }
a=$(snap)
perf record -F 2999 --call-graph dwarf,16384 -p $E -o "$TMP/perf.data" -- sleep "$DUR" >/dev/null 2>&1
b=$(snap)
perf script -i "$TMP/perf.data" -F ip,sym 2>/dev/null >"$TMP/perf.txt"
python3 - "$TMP/perf.txt" "$a" "$b" "$(getconf CLK_TCK)" <<'PY'
import sys
samples, cur = [], []
for line in open(sys.argv[1]):
    p = line.split()
    if not p:
        if cur:
            samples.append(set(cur))
        cur = []
    elif len(p) >= 2:
        cur.append(p[1])
if cur:
    samples.append(set(cur))
c0, s0 = map(float, sys.argv[2].split()); c1, s1 = map(float, sys.argv[3].split())
hz = float(sys.argv[4])
print("emberd: %d samples taken, %.1f us process CPU per sample (perf attached); %d perf samples of emberd"
      % (s1 - s0, (c1 - c0) / hz / (s1 - s0) * 1e6, len(samples)))
phases = [
    ("drain thread (epoll, ring records copied)", "main", 0),
    ("worker: events and groups delivered", "sampler_batch__deliver", 0),
    ("process events: exec", "emberd_on_exec", 1),
    ("process events: fork", "emberd_on_fork", 1),
    ("process events: exit", "emberd_on_exit_pid", 1),
    ("a new process's first sample (all stages)", "emberd_on_new_pid", 1),
    ("new process: symbolizer (maps, stat, exe, files checked)", "symbolizer__note_pid", 1),
    ("  its maps read (the tracker's, shared)", "sym_read_maps", 2),
    ("  /proc/PID/stat", "read_start_time", 2),
    ("  files' identity checked (mapfile_stat)", "entry_stale", 2),
    ("naming: ingest__group", "ingest__group", 1),
    ("  symbolizer (user and kernel)", "symbolize", 2),
    ("  file keys", "symbolizer__user_keys", 2),
    ("  Python frames merged", "python__merge", 2),
    ("  store", "store_sink__put", 2),
    ("CPython detection", "detect_one", 0),
    ("  interpreter file read (libelf)", "scan_symbols", 1),
    ("unwinder: tables and process lists", "unwinder__work", 0),
    ("  maps read (the tracker's)", "proc_tracker__maps", 1),
    ("  files' identity checked", "file_stale", 1),
    ("  CFI compiled", "table_from_cfi", 1),
    ("  rows written to BPF", "sampler__unwind_write_rows", 1),
    ("  process lists written", "write_list", 1),
    ("symbolizer housekeeping (prune)", "symbolizer__prune", 0),
    ("HTTP (MHD threads, renders)", "MHD_run_from_select", 0),
]
print("| phase | share of emberd's CPU |\n| --- | --- |")
n = len(samples) or 1
for name, sym, _ in phases:
    print("| %s | %.1f%% |" % (name, 100.0 * sum(1 for s in samples if sym in s) / n))
PY
