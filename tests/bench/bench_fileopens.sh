#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Files opened and ELF files parsed per new process on bench_hostmix.sh's host mix (issue 26
# item 1: "each new ELF file opened two or three times and elf_begin'd about five times"):
# emberd at 99 Hz over the mix for DUR s after a 4 s start; over that window, emberd's openat()
# calls (the syscalls:sys_enter_openat tracepoint), its elf_begin() calls (a uprobe on libelf),
# the mapped files it opened through proc/mapfile.h (/api/v1/stats mapped_files.opened), and the
# execs it saw (processes.execs), each per exec; and the file cache's counters at the end.
# usage: bench_fileopens.sh [DUR]   (root, perf with uprobes, node, xz, perl; EMBERD=... to pick
# a build)
set -u
OUT=${OUTPUT:-$(cd "$(dirname "$0")/../.." && pwd)/build}
EMBERD=${EMBERD:-$OUT/emberd} DUR=${1:-20}
LIBELF=$(readlink -f /usr/lib/x86_64-linux-gnu/libelf.so.1)
TMP=$(mktemp -d /tmp/ember-fileopens.XXXXXX)
MIX=()
trap 'mix_stop; perf probe -q -d probe_libelf:elf_begin 2>/dev/null; rm -rf "$TMP"' EXIT
. "$(dirname "$0")/hostmix_lib.sh"
perf probe -q -x "$LIBELF" elf_begin 2>/dev/null || perf probe -q -l | grep -q elf_begin ||
	{ echo "cannot place a uprobe on $LIBELF:elf_begin" >&2; exit 1; }
mix_setup
mix_start $((DUR + 8))
mix_emberd "$EMBERD" "$TMP/emberd.log"
port=$E_PORT E=$E_PID
sleep 4
snap() { curl -s "127.0.0.1:$port/api/v1/stats" >"$1"; }
snap "$TMP/a.json"
perf stat -x, -e syscalls:sys_enter_openat -e probe_libelf:elf_begin -p "$E" -o "$TMP/perf.csv" \
	-- sleep "$DUR" >/dev/null 2>&1
snap "$TMP/b.json"
python3 - "$TMP/a.json" "$TMP/b.json" "$TMP/perf.csv" "$DUR" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
a, b = a.get("stats", a), b.get("stats", b)
ev = {}
for line in open(sys.argv[3]):
    p = line.strip().split(",")
    if len(p) > 2 and p[0].replace(".", "").isdigit():
        ev[p[2]] = float(p[0])
execs = b["processes"]["execs"] - a["processes"]["execs"]
opened = b["mapped_files"]["opened"] - a["mapped_files"]["opened"]
oa = ev.get("syscalls:sys_enter_openat", 0)
eb = ev.get("probe_libelf:elf_begin", 0)
print(f"# {sys.argv[4]} s: {execs} execs; openat {oa:.0f}, mapped files opened {opened}, "
      f"elf_begin {eb:.0f}")
if execs:
    print(f"per exec: openat {oa / execs:.2f}, mapped files opened {opened / execs:.2f}, "
          f"elf_begin {eb / execs:.2f}")
print("file_cache at the end:", json.dumps(b.get("file_cache")))
PY
