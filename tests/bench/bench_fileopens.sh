#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Files opened, stat'ed and parsed per new process on bench_hostmix.sh's host mix (the
# question was "each new ELF file opened two or three times and elf_begin'd about five times"; one
# identity check per mapping): emberd at 99 Hz over the mix for DUR s after a 4 s start; over
# that window, emberd's openat() and stat-family calls (newfstatat, statx, newfstat, newstat,
# newlstat: the syscalls tracepoints), its elf_begin() calls (a uprobe on libelf), the mapped
# files it opened through proc/mapfile.h (/api/v1/stats mapped_files.opened), and the execs it
# saw (processes.execs), each per exec and per maps read (the host's execs swing with what else
# runs; the reads are emberd's own work); then who made the stat-family calls (emberd's first
# two functions above libc on each call's frame-pointer chain: the caller of the function that
# made the call, and its caller) and the file cache's counters at the end.
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
EVENTS=(syscalls:sys_enter_openat syscalls:sys_enter_newfstatat syscalls:sys_enter_statx
	syscalls:sys_enter_newfstat syscalls:sys_enter_newstat syscalls:sys_enter_newlstat
	probe_libelf:elf_begin)
mix_setup
mix_start $((DUR + 8))
mix_emberd "$EMBERD" "$TMP/emberd.log"
port=$E_PORT E=$E_PID
sleep 4
snap() { curl -s "127.0.0.1:$port/api/v1/stats" >"$1"; }
snap "$TMP/a.json"
# every event recorded (a tracepoint's period is 1), with its user call chain (frame pointers)
perf record -q -g ${EVENTS[@]/#/-e } -p "$E" -o "$TMP/perf.data" -- sleep "$DUR" >/dev/null 2>&1
snap "$TMP/b.json"
perf script -i "$TMP/perf.data" -F event,ip,sym,dso 2>/dev/null >"$TMP/perf.txt"
python3 - "$TMP/a.json" "$TMP/b.json" "$TMP/perf.txt" "$DUR" <<'PY'
import collections, json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
a, b = a.get("stats", a), b.get("stats", b)
ev = collections.Counter()
who = collections.Counter()
STATS = ("newfstatat", "statx", "newfstat", "newstat", "newlstat")
cur, chain = None, []
def done():
    if cur is None:
        return
    ev[cur] += 1
    if cur.endswith(STATS):
        # the first two of emberd's own frames above libc: the helper and the reader
        own = [s for s, d in chain if "emberd" in d][:2]
        who[(cur.split("_enter_")[-1], " <- ".join(own) or "?")] += 1
for line in open(sys.argv[3]):
    s = line.strip()
    if not s:
        continue
    if ":" in s.split()[0] and not s[0].isdigit() and "(" not in s.split()[0]:
        done()
        cur, chain = s.split()[0].rstrip(":"), []
    else:
        p = s.split(None, 2)
        if len(p) >= 2:
            sym = p[1].split("+")[0]
            chain.append((sym, p[-1]))
done()
execs = b["processes"]["execs"] - a["processes"]["execs"]
reads = b["processes"]["reads"] - a["processes"]["reads"]
pd = lambda k: b["processes"].get(k, 0) - a["processes"].get(k, 0)
opened = b["mapped_files"]["opened"] - a["mapped_files"]["opened"]
oa = ev["syscalls:sys_enter_openat"]
eb = ev["probe_libelf:elf_begin"]
st = {k: ev["syscalls:sys_enter_" + k] for k in STATS}
nst = sum(st.values())
print(f"# {sys.argv[4]} s: {execs} execs; openat {oa}, stat-family {nst} "
      f"({', '.join(f'{k} {v}' for k, v in st.items() if v)}), mapped files opened {opened}, "
      f"elf_begin {eb}")
if execs:
    print(f"per exec: openat {oa / execs:.2f}, stat-family {nst / execs:.2f}, mapped files "
          f"opened {opened / execs:.2f}, elf_begin {eb / execs:.2f}")
# the host's execs (other work) swing by 10x from run to run: per maps read (per snapshot) too
if reads:
    print(f"per maps read ({reads} reads): stat-family {nst / reads:.2f}, openat {oa / reads:.2f}")
if "ident_checks" in b["processes"]:
    print(f"identities asked of the tracker: {pd('ident_checks')} checked, {pd('ident_reused')} "
          f"reused, {pd('ident_failed')} failed")
print("stat-family calls by caller (emberd's first two frames above libc):")
for (call, c), n in who.most_common(8):
    print(f"  {n:6d} {n / execs if execs else 0:6.2f}/exec {n / reads if reads else 0:6.2f}/read "
          f"{call:10s} {c}")
print("file_cache at the end:", json.dumps(b.get("file_cache")))
print("processes over the window:", json.dumps({k: pd(k) for k in
      ("reads", "reused", "events", "execs", "execs_gone", "forks", "fork_copies")}))
PY
