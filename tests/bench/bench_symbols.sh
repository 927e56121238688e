#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Symbolizer benchmark, side by side with elfutils' eu-addr2line (libdwfl) on the same live
# process and the same addresses: N random addresses inside the executable file mappings of the
# symbols workload (its binary, libc, ld.so), resolved to function names.
#  - ember: tests/bench/bench_symbols.c against the build's archives: a cold pass (maps read,
#    images opened) and warm passes (what the daemon pays per frame on every drain), without and
#    with inline frames;
#  - eu-addr2line -p PID -f (which names inlined functions too): one process resolving all the
#    addresses; hyperfine medians of it and of one ember cold pass with inline frames (a whole
#    process too), so the two wall times compare;
#  - agreement: the share of addresses where both name the same innermost function.
#   N=20000 PASSES=50 RUNS=5 tests/bench/bench_symbols.sh
set -u
: "${OUTPUT:?}" "${SRCDIR:?}"
N=${N:-20000}
PASSES=${PASSES:-50}
RUNS=${RUNS:-5}
CC=${CC:-cc}
TMP=$(mktemp -d)
WPID=
trap '[ -n "$WPID" ] && kill "$WPID" 2>/dev/null; rm -rf "$TMP"' EXIT
cd "$SRCDIR" || exit 1
command -v eu-addr2line >/dev/null || { echo "bench_symbols: needs eu-addr2line (elfutils)" >&2; exit 1; }
command -v hyperfine >/dev/null || { echo "bench_symbols: needs hyperfine" >&2; exit 1; }
[ -f "$OUTPUT/obj/libember-daemon.a" ] && [ -x "$OUTPUT/workloads/symbols" ] ||
	{ echo "bench_symbols: build first (make O=... all)" >&2; exit 1; }
$CC -O2 -std=gnu11 -D_GNU_SOURCE -Iinclude tests/bench/bench_symbols.c \
	"$OUTPUT/obj/libember-daemon.a" "$OUTPUT/obj/libember-core.a" \
	$(pkg-config --libs libelf libdw) -lstdc++ -o "$TMP/bench" || exit 1

"$OUTPUT/workloads/symbols" >"$TMP/w.out" &
WPID=$!
for _ in $(seq 100); do grep -q ready "$TMP/w.out" 2>/dev/null && break; sleep 0.05; done
# random addresses in the file-backed executable mappings, weighted by size
python3 - "$WPID" "$N" >"$TMP/addrs" <<'PY'
import random, sys
pid, n = sys.argv[1], int(sys.argv[2])
maps = []
for l in open("/proc/%s/maps" % pid):
    f = l.split()
    if len(f) >= 6 and "x" in f[1] and f[5].startswith("/"):
        a, b = (int(x, 16) for x in f[0].split("-"))
        maps.append((a, b))
rnd = random.Random(7)
tot = sum(b - a for a, b in maps)
for _ in range(n):
    r = rnd.randrange(tot)
    for a, b in maps:
        if r < b - a:
            print("%x" % (a + r)); break
        r -= b - a
PY

echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"
"$TMP/bench" "$WPID" "$TMP/addrs" "$PASSES" "$TMP/ember.names" >"$TMP/ember.txt" || exit 1
"$TMP/bench" "$WPID" "$TMP/addrs" "$PASSES" "$TMP/ember-inl.names" inline >"$TMP/ember-inl.txt" ||
	exit 1
sed 's/^/# /' "$TMP/ember.txt"
echo "# with inline frames:"
sed 's/^/#   /' "$TMP/ember-inl.txt"
eu-addr2line -p "$WPID" -f <"$TMP/addrs" 2>/dev/null | awk 'NR % 2 == 1' >"$TMP/eu.names"
# eu-addr2line -f prints "f" or "g inlined at FILE:LINE in f"; compare the innermost function
# (ours: the last frame, _[i] dropped) exactly, and also modulo glibc's alias spellings
# (__GI_x, __x, x@@GLIBC_2.3 name one function under several symbols)
paste -d'|' "$TMP/ember-inl.names" "$TMP/eu.names" | awk -F'|' '
	function norm(x) { sub(/@.*/, "", x); gsub(/^_+/, "", x); sub(/^GI_+/, "", x)
			   sub(/^(IO_new_|new_)/, "", x); return x }
	{ n++; k = split($1, f, ";"); e = f[k]; sub(/_\[i\]$/, "", e); split($2, u, " ")
	  if (e == u[1] || (e ~ /^\[/ && u[1] == "??")) { a++; b++ }
	  else if (norm(e) == norm(u[1])) b++ }
	END { printf "%.4f %.4f\n", a / n, b / n }' >"$TMP/agree"
read -r AGREE AGREE_ALIAS <"$TMP/agree"
hyperfine -N -w 1 -r "$RUNS" --export-json "$TMP/h.json" \
	"$TMP/bench $WPID $TMP/addrs 0 $TMP/x.names inline" \
	"sh -c 'eu-addr2line -p $WPID -f <$TMP/addrs >/dev/null 2>&1'" >/dev/null 2>&1 || exit 1
read -r TE TU < <(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["results"]
print(r[0]["median"], r[1]["median"])' "$TMP/h.json")
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
WARM=$(awk '/warm_ns_per_frame/ {print $2}' "$TMP/ember.txt")
WARM_INL=$(awk '/warm_ns_per_frame/ {print $2}' "$TMP/ember-inl.txt")
COLD_INL=$(awk '/cold_us_per_frame/ {print $2}' "$TMP/ember-inl.txt")
python3 - "$N" "$TE" "$TU" "$WARM" "$WARM_INL" "$COLD_INL" "$AGREE" "$AGREE_ALIAS" <<'PY'
import sys
n = int(sys.argv[1])
te, tu, warm, winl, cinl, agree, alias = (float(x) for x in sys.argv[2:9])
print("| %d addresses, live process | ember | eu-addr2line -p PID -f | ratio |" % n)
print("| --- | --- | --- | --- |")
print("| wall time of one process resolving all, median | %.1f ms | %.1f ms | %.0fx less |" % (te * 1e3, tu * 1e3, tu / te))
print("| per frame, cold (maps read, images opened) | %.2f us | %.2f us | |" % (te * 1e6 / n, tu * 1e6 / n))
print("| per frame, caches warm (the daemon's steady state) | %.0f ns | | |" % warm)
print("| per frame with inline frames: cold / warm | %.1f us / %.0f ns | | |" % (cinl, winl))
print("| innermost function named as eu-addr2line names it | %.2f %% | | |" % (agree * 100))
print("| ... counting glibc alias spellings (__GI_x, x@@GLIBC) as equal | %.2f %% | | |" % (alias * 100))
PY
