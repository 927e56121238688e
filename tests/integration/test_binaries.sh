#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Binaries as toolchains and layouts make them, built here from tests/workloads and
# sampled together by a live emberd at 999 Hz (2500-7000 samples each on 2 CPUs, for the shares'
# precision: the standard error of a 50 % share is then 0.6-1 point, less as samples come at a
# fixed rate), with
# `perf record -F 499 -p PIDS --call-graph dwarf` on the same programs for 30 s:
#   rustwork   rustc -O, loops aligned to 64 bytes (lld; its executable segment's p_vaddr - p_offset is 0x1000); its std
#              HashMap's reserve_rehash carries a ".llvm.<digits>" suffix
#   rustv0     the same with -C symbol-mangling-version=v0
#   lldwork    clang -O2 -fomit-frame-pointer -fuse-ld=lld
#   staticwk   gcc -static            spiework  gcc -static-pie       muslwork  musl-gcc
#   stripwork  built without unwind tables (-fno-asynchronous-unwind-tables: its CFI is only in
#              .debug_frame), then its symbols and CFI moved to a debug file under a debug dir
#              this test configures (symbols.debug_dirs), found by build-id; the binary stripped
#   dlwork     a program that dlopen()s libdlwork.so 2 s after it started and runs it
# each -O2 without frame pointers, three leaf functions at 50/30/20 % of the work. Per program:
#   - >= 95 % of emberd's samples reach main, and the three leaves' shares are within 3 points
#     of 50/30/20;
#   - where perf's own unwinding completes >= 95 % of that program's stacks (reaches main): the
#     profiles from main up are >= 0.90 similar (`ember stat similarity`, names of one address
#     made one by aliases.py; emberd's names cut at '(' as the collapse cuts perf's), and every
#     frame emberd shows in >= 1 % of the program's samples from main up is a name perf prints
#     (`perf script`, uncut) for that program: Rust's hash dropped, v0, .llvm. suffixes. Where
#     perf's unwinding stops at the leaf (static, musl, the debug-file one), the leaves' names.
# perf finds the stripped program's debug file through a build-id cache in this test's HOME.
. "$(dirname "$0")/../lib.sh"
require_live_emberd
for t in perf rustc clang ld.lld musl-gcc gcc objcopy strip readelf; do
	command -v $t >/dev/null || skip_all "no $t (scripts/packages.txt, rustc: the machine's toolchain)"
done
[ -x "$EMBER" ] || skip_all "no $EMBER"
trap 'stop_all; [ -n "${KEEP:-}" ] && cp -r "$TMP" "$KEEP"; cleanup_tmp' EXIT
W=$SRCDIR/tests/workloads
B=$TMP/bin
DBG=$TMP/debug
mkdir -p "$B" "$DBG"
D=30
CF="-std=gnu11 -O2 -fomit-frame-pointer -g"
PROGS="rustwork rustv0 lldwork staticwk spiework muslwork stripwork dlwork"

build() {
	local name=$1
	shift
	"$@" >>"$TMP/build.log" 2>&1 && return 0
	not_ok "$name builds: $*"
	tail -5 "$TMP/build.log" | sed 's/^/#   /'
	return 1
}
# loops aligned to 64 bytes: the three leaves' loops are the same 5 instructions, but where one
# straddles a 64-byte line it costs more per iteration (rustwork's Mixer::run did, at 0x18830:
# 32-34 % of the CPU in every CI run instead of 30, rustv0's same code 30.0)
RUSTALIGN="-C llvm-args=-align-loops=64"
build rustwork rustc -O $RUSTALIGN -o "$B/rustwork" "$W/rustwork.rs"
build rustv0 rustc -O $RUSTALIGN -C symbol-mangling-version=v0 -o "$B/rustv0" "$W/rustwork.rs"
build lldwork clang $CF -fuse-ld=lld -o "$B/lldwork" "$W/binwork.c" -ldl
build staticwk gcc $CF -static -o "$B/staticwk" "$W/binwork.c"
build spiework gcc $CF -static-pie -o "$B/spiework" "$W/binwork.c"
build muslwork musl-gcc $CF -o "$B/muslwork" "$W/binwork.c"
build dlwork gcc $CF -o "$B/dlwork" "$W/binwork.c" -ldl
build libdlwork gcc $CF -fPIC -shared -DBINWORK_LIB -o "$B/libdlwork.so" "$W/binwork.c"
build stripwork gcc $CF -fno-asynchronous-unwind-tables -fno-unwind-tables -o "$B/stripwork" \
	"$W/binwork.c" -ldl
BID=$(readelf -n "$B/stripwork" | awk '/Build ID:/ { print $3 }')
mkdir -p "$DBG/.build-id/${BID:0:2}"
DBGFILE=$DBG/.build-id/${BID:0:2}/${BID:2}.debug
objcopy --only-keep-debug "$B/stripwork" "$DBGFILE"
strip --strip-all "$B/stripwork"
check "stripwork: stripped (no symbols, no .debug_frame); the debug file has both" sh -c "
	! readelf -SW '$B/stripwork' | grep -qE '\.symtab|\.debug_frame' &&
	readelf -SW '$DBGFILE' | grep -q '\.debug_frame' && readelf -sW '$DBGFILE' | grep -q ' bw_a\$'"
check "stripwork: its .eh_frame covers no function of its own (crt's only)" sh -c "
	! readelf --debug-dump=frames '$B/stripwork' 2>/dev/null | grep -q 'pc=0*$(readelf -sW "$DBGFILE" | awk '$8 == "bw_a" { print $2 }' | sed 's/^0*//')'"
check "rustwork: its executable segment's address is not its file offset" python3 -c '
import subprocess, sys
out = subprocess.run(["readelf", "-lW", sys.argv[1]], capture_output=True, text=True).stdout
x = [l.split() for l in out.splitlines() if l.split()[:1] == ["LOAD"] and " E " in l]
print("#   executable LOAD: offset %s, address %s" % (x[0][1], x[0][2]))
sys.exit(int(x[0][1], 16) == int(x[0][2], 16))' "$B/rustwork"

# room for every table on a busy host: emberd lists every process, and the default 16 MiB of rows
# fills up beside builds and browsers (tables then evicted or refused: frame pointers, cut short)
emberd_serve -F 999 -o "symbols.debug_dirs=$DBG:/usr/lib/debug" -o python.enabled=no -o unwind.memory=128M ||
	{ not_ok "emberd serves HTTP"; done_testing; }
now() { python3 -c 'import time, sys; print("%.3f" % (time.time() - float(sys.argv[1])))' "${1:-0}"; }
# perf's build-id cache in a HOME of ours: where its symbols and unwinding find stripwork's debug file
export HOME=$TMP
perf buildid-cache -a "$DBGFILE" >/dev/null 2>&1
# they run until killed, after perf stopped (perf's start takes seconds on a loaded host)
WPIDS=()
for p in $PROGS; do
	case $p in
	dlwork) "$B/dlwork" --dlopen "$B/libdlwork.so" 600 >"$TMP/$p.out" 2>&1 & ;;
	*) "$B/$p" 600 >"$TMP/$p.out" 2>&1 & ;;
	esac
	PIDS+=($!)
	WPIDS+=($!)
done
for p in $PROGS; do
	wait_log "$TMP/$p.out" ready || not_ok "$p starts ($(head -c 200 "$TMP/$p.out"))"
done
echo "# $SECONDS s: the programs run"
# until each one's stacks of the last 2 s reach main (its tables built; libdlwork.so's after the
# walk cut short there read the maps again), at most 40 s on a loaded host
warm() {
	curl -sf -m 5 "$URL/api/v1/folded?from=$(now 2)" >"$TMP/warm.folded" || return 1
	for p in $PROGS; do
		awk -v p="$p;" 'index($0, p) == 1 { t += $NF; if ($0 ~ /;main;/) m += $NF }
			END { exit !(t >= 20 && m >= 0.98 * t) }' "$TMP/warm.folded" || return 1
	done
}
end=$((SECONDS + 40))
while [ $SECONDS -lt $end ] && ! warm; do
	sleep 1
done
echo "# $SECONDS s: every program's stacks reach main"
T0=$(now)
echo "# $SECONDS s: perf starts"
perf record -F 499 -p "$(IFS=,; echo "${WPIDS[*]}")" --call-graph dwarf,4096 -o "$TMP/perf.data" \
	-- sleep $D >"$TMP/perf.log" 2>&1
check "perf record ran" test $? -eq 0
T1=$(now)
echo "# $SECONDS s: perf stopped"
sleep 2.5 # samples reach the store a tick or two later
kill "${WPIDS[@]}"
curl -sf -m 30 "$URL/api/v1/folded?from=$T0&to=$T1" >"$TMP/emberd.folded"
curl -sf -m 30 "$URL/api/v1/stats" >"$TMP/stats.json"
kill "$EPID"
wait "$EPID"
check "emberd exits 0" test $? -eq 0
grep 'user stacks' "$TMP/emberd.log" | sed 's/^/# /'
perf script --no-inline -i "$TMP/perf.data" 2>/dev/null >"$TMP/perf.script"
"$EMBER" collapse --all "$TMP/perf.script" >"$TMP/perf.folded"
check "perf script collapsed" test -s "$TMP/perf.folded"
# perf's names as it prints them (collapsing cuts a name at its first '(', as stackcollapse-perf.pl
# does: "std::rt::lang_start::<()>::{closure#0}" becomes "std::rt::lang_start::<"), one
# "comm;name 1" line each, for aliases.py
python3 - "$TMP/perf.script" "$TMP" $PROGS <<'PY'
import re, sys
names, comm = {}, None
for line in open(sys.argv[1], errors="replace"):
    if not line.strip():
        continue
    if not line[0].isspace():
        comm = line.split()[0]
        continue
    m = re.match(r"\s*[0-9a-f]+ (.*) \((.*)\)$", line.rstrip("\n"))
    if m and comm in sys.argv[3:]:
        names.setdefault(comm, set()).add(re.sub(r"\+0x[0-9a-f]+$", "", m.group(1)))
for c in sys.argv[3:]:
    with open("%s/perfnames.%s" % (sys.argv[2], c), "w") as f:
        for n in sorted(names.get(c, ())):
            f.write("%s;%s 1\n" % (c, n.replace(";", ":")))
PY

# Per program, user frames only: kernel frames (_[k]) dropped from the leaf end
for p in $PROGS; do
	for s in emberd perf; do
		grep "^$p;" "$TMP/$s.folded" | sed -E 's/(;[^; ]+_\[k\])+ ([0-9]+)$/ \2/' >"$TMP/$s.$p"
	done
done
MUSL=$(ls /usr/lib/musl/lib/libc.so 2>/dev/null)
python3 "$SRCDIR/tests/integration/aliases.py" "$B/rustwork" "$B/rustv0" "$B/lldwork" "$B/staticwk" "$B/spiework" \
	"$B/muslwork" "$B/dlwork" "$B/libdlwork.so" "$DBGFILE" $MUSL /lib/x86_64-linux-gnu/libc.so.6 \
	/lib64/ld-linux-x86-64.so.2 -- $(for p in $PROGS; do echo "$TMP/emberd.$p" "$TMP/perf.$p" "$TMP/perfnames.$p"; done)

# share of a profile's samples whose stack matches ERE (awk)
share() { awk -v re="$2" '{ n = $NF; t += n; if ($0 ~ re) m += n } END { printf "%.4f %.0f\n", t ? m / t : 0, t }' "$1"; }
# stacks from main up, the comm kept (perf's unwinding may stop below main)
from_main() { sed -E 's/^([^;]*);(.*;)?(main;)/\1;\3/' "$1" >"$2"; }
leaves() {
	case $1 in
	rustwork | rustv0) echo "rustwork::engine::checksum|<rustwork::engine::Mixer<u64> as rustwork::engine::Stage>::run|rustwork::engine::scramble" ;;
	dlwork) echo "dl_a|dl_b|dl_c" ;;
	*) echo "bw_a|bw_b|bw_c" ;;
	esac
}
for p in $PROGS; do
	read -r es et < <(share "$TMP/emberd.$p" ';main;')
	read -r ps pt < <(share "$TMP/perf.$p" ';main;')
	echo "# $p: emberd $et samples, $es reach main; perf $pt, $ps"
	check "$p: >= 95 % of emberd's samples reach main ($es of $et)" \
		awk -v s="$es" -v t="$et" 'BEGIN { exit !(t >= 500 && s >= 0.95) }'
	check "$p: the leaves at 50/30/20 % within 3 points" python3 - "$TMP/emberd.$p" "$(leaves $p)" <<'PY'
import sys
names = sys.argv[2].split("|")
c = dict.fromkeys(names, 0)
for l in open(sys.argv[1]):
    s, n = l.rsplit(" ", 1)
    leaf = s.rsplit(";", 1)[-1]
    if leaf in c:
        c[leaf] += int(n)
t = sum(c.values())
sh = [100.0 * c[k] / t if t else 0 for k in names]
print("#   shares %", [round(x, 1) for x in sh], "of", t)
assert t and all(abs(a - b) <= 3 for a, b in zip(sh, (50, 30, 20))), sh
PY
	if ! awk -v s="$ps" -v t="$pt" 'BEGIN { exit !(t >= 100 && s >= 0.95) }'; then
		# perf's DWARF unwinding stops at the leaf here (static, musl, CFI in a debug file):
		# its leaves' names are still its names
		echo "# $p: perf completes $ps of its stacks: similarity not compared, leaf names only"
		check "$p: every leaf emberd shows is one perf shows, by name" \
			python3 - "$TMP/emberd.$p" "$TMP/perfnames.$p" <<'PY'
import sys
def leaves(path, min_share):
    w, t = {}, 0
    for l in open(path):
        s, n = l.rsplit(" ", 1)
        n = int(float(n))
        t += n
        leaf = s.rsplit(";", 1)[-1]
        w[leaf] = w.get(leaf, 0) + n
    return {f for f, n in w.items() if n >= min_share * t}
e = leaves(sys.argv[1], 0.01)
p = {l.rsplit(" ", 1)[0].split(";", 1)[1] for l in open(sys.argv[2])}
print("#   emberd's leaves:", sorted(e))
assert e and not (e - p), sorted(e - p)
PY
		continue
	fi
	from_main "$TMP/emberd.$p" "$TMP/emberd.$p.main"
	from_main "$TMP/perf.$p" "$TMP/perf.$p.main"
	# emberd's names cut as the collapse cut perf's (stackcollapse-perf.pl's tidy_generic)
	python3 -c '
import re, sys
for l in open(sys.argv[1]):
    s, n = l.rstrip("\n").rsplit(" ", 1)
    f = [x if re.search(r"\.\(.*\)\.", x) else re.sub(r"\((?!anonymous namespace\)).*", "", x)
         for x in s.split(";")]
    print(";".join(f), n)' "$TMP/emberd.$p.main" >"$TMP/emberd.$p.tidy"
	sim=$("$EMBER" stat similarity "$TMP/emberd.$p.tidy" "$TMP/perf.$p.main" 2>/dev/null | awk '/^similarity/ { print $2 }')
	check "$p: similarity with perf --call-graph dwarf from main >= 0.90 (${sim:-none})" \
		awk -v s="${sim:-0}" 'BEGIN { exit !(s >= 0.90) }'
	check "$p: every frame emberd shows from main up is one perf shows, by name" \
		python3 - "$TMP/emberd.$p.main" "$TMP/perfnames.$p" "$TMP/perf.$p.main" <<'PY'
import sys
def frames(path, min_share):
    w, t = {}, 0
    for l in open(path):
        s, n = l.rsplit(" ", 1)
        n = int(float(n))
        t += n
        for f in set(s.split(";")[1:]):
            w[f] = w.get(f, 0) + n
    return {f for f, n in w.items() if n >= min_share * t}
e = frames(sys.argv[1], 0.01)
p = {l.rsplit(" ", 1)[0].split(";", 1)[1] for l in open(sys.argv[2])}
p |= {"[unknown]"} | {f for f in frames(sys.argv[3], 0) if f.startswith("[")}  # markers, as collapsed
missing = sorted(e - p)
print("#   emberd's frames:", sorted(e)[:12])
if missing:
    print("#   not in perf:", missing)
assert not missing
PY
done
check "/api/v1/stats: unwind tables built, user stacks counted" python3 - "$TMP/stats.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
u, s = d["unwind"], d["sampler"]
print("# unwind:", {k: u[k] for k in ("rows_used", "tables", "procs", "builds", "evictions")},
      "fp walks", s["user_fp_walks"], "truncated", s["user_truncated"])
assert u["tables"] > 0 and u["procs"] > 0
PY
done_testing
