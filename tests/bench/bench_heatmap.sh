#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Flame scope benchmarks. Prints a Markdown table.
#  1. Scale, in memory (tests/bench/bench_heatmap.c against libember-core.a): one hour of samples
#     of a 128-CPU host at 99 Hz (45.6 M samples) in a struct samples: the heat map of the hour
#     (goal < 100 ms), a 10 s range profile (goal < 50 ms), memory per stored sample.
#     FRACTION=0.1 runs a tenth of the hour.
#  2. Side by side with the reference tools, from a `perf script` file (synthetic, 60 s of 16 CPUs
#     at 99 Hz): `ember heatmap --range` against FlameGraph's range-perf.pl | stackcollapse-perf.pl
#     (medians of hyperfine runs), after checking that both print the same folded profile
#     (range-perf.pl keeps the end instant: [20, 30], so ember is given [+20, +30.000000001)).
#   FLAMEGRAPH_DIR=/opt/FlameGraph FRACTION=1 RUNS=5 tests/bench/bench_heatmap.sh
set -u
: "${OUTPUT:?}" "${SRCDIR:?}"
EMBER=${EMBER:-$OUTPUT/ember}
FG=${FLAMEGRAPH_DIR:-/opt/FlameGraph}
FRACTION=${FRACTION:-1}
RUNS=${RUNS:-5}
CC=${CC:-cc}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$SRCDIR" || exit 1
[ -f "$OUTPUT/obj/libember-core.a" ] || { echo "bench_heatmap: build first (make O=...)" >&2; exit 1; }
$CC -O2 -std=gnu11 -D_GNU_SOURCE -Iinclude tests/bench/bench_heatmap.c \
	"$OUTPUT/obj/libember-core.a" -lm -o "$TMP/bench" || exit 1

echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"
/usr/bin/time -v "$TMP/bench" "$FRACTION" >"$TMP/scale.txt" 2>"$TMP/time.txt" || { cat "$TMP/scale.txt" "$TMP/time.txt"; exit 1; }
sed 's/^/# /' "$TMP/scale.txt"
maxrss=$(awk -F': ' '/Maximum resident/ {print $2}' "$TMP/time.txt")
echo "# max RSS ${maxrss} kB; load after: $(cut -d' ' -f1-3 /proc/loadavg)"

# --- side by side: range extraction from perf script text -------------------------------------
python3 - "$TMP/perf.txt" <<'PY'
import random, sys
rnd = random.Random(5)
funcs = ["func_%d" % i for i in range(400)]
stacks = []
for i in range(300):
    d = rnd.randrange(4, 14)
    stacks.append([("%x" % rnd.randrange(1 << 40), rnd.choice(funcs)) for _ in range(d)])
out = []
t0 = 7000 * 10**6                       # microseconds; the first sample on a whole second
for tick in range(60 * 99):
    for cpu in range(16):
        t = t0 + tick * 10**6 // 99 + cpu * 500
        comm, pid = ("swapper", 0) if rnd.random() < 0.2 else ("app%d" % (cpu % 4), 1000 + cpu % 4)
        out.append("%s %d [%03d] %d.%06d: cpu-clock: " % (comm, pid, cpu, t // 10**6, t % 10**6))
        st = [("ffffffff81051586", "native_safe_halt"), ("ffffffff8101db4f", "default_idle")] if pid == 0 else rnd.choice(stacks)
        for addr, fn in st:
            out.append("\t%s %s (/usr/lib/libapp.so)" % (addr, fn))
        out.append("")
open(sys.argv[1], "w").write("\n".join(out) + "\n")
PY
records=$(grep -c 'cpu-clock:' "$TMP/perf.txt")
"$EMBER" heatmap "$TMP/perf.txt" --range +20 +30.000000001 --include-idle >"$TMP/ember.folded" 2>/dev/null
perl "$FG/range-perf.pl" 20 30 <"$TMP/perf.txt" 2>/dev/null | perl "$FG/stackcollapse-perf.pl" >"$TMP/ref.folded" 2>/dev/null
same=no
cmp -s "$TMP/ember.folded" "$TMP/ref.folded" && same=yes
hyperfine -N --warmup 1 --runs "$RUNS" --export-json "$TMP/h.json" \
	-n ember "$EMBER heatmap $TMP/perf.txt --range +20 +30.000000001 --include-idle --strict" \
	-n reference "bash -c 'perl $FG/range-perf.pl 20 30 < $TMP/perf.txt | perl $FG/stackcollapse-perf.pl'" \
	>/dev/null 2>&1 || hyperfine --warmup 1 --runs "$RUNS" --export-json "$TMP/h.json" \
	-n ember "$EMBER heatmap $TMP/perf.txt --range +20 +30.000000001 --include-idle --strict > /dev/null" \
	-n reference "perl $FG/range-perf.pl 20 30 < $TMP/perf.txt | perl $FG/stackcollapse-perf.pl > /dev/null" >/dev/null 2>&1
hyperfine -N --warmup 1 --runs "$RUNS" --export-json "$TMP/hm.json" \
	-n heatmap "$EMBER heatmap $TMP/perf.txt --json" >/dev/null 2>&1 ||
	hyperfine --warmup 1 --runs "$RUNS" --export-json "$TMP/hm.json" \
	-n heatmap "$EMBER heatmap $TMP/perf.txt --json > /dev/null" >/dev/null 2>&1

python3 - "$TMP/scale.txt" "$TMP/h.json" "$TMP/hm.json" "$maxrss" "$records" "$same" "$(stat -c %s "$TMP/perf.txt")" <<'PY'
import json, sys
scale = {}
for line in open(sys.argv[1]):
    parts = line.split()
    for i in range(0, len(parts) - 1, 2):
        scale[parts[i]] = parts[i + 1]
h = {r["command"]: r for r in json.load(open(sys.argv[2]))["results"]}
hm = json.load(open(sys.argv[3]))["results"][0]
maxrss, records, same, size = sys.argv[4:]
med = lambda r: r["median"] * 1000
print()
print("| measure | value |")
print("| --- | --- |")
print("| samples in memory (1 h x 128 CPUs x 99 Hz) | %s (%s distinct stacks) |" % (scale["samples"], scale["stacks"]))
print("| heat map of the hour, 1 s x 50 rows, idle excluded (goal < 100 ms) | %s ms CPU (median; wall %s ms) |" % (scale["heatmap_ms"], scale["heatmap_wall_ms"]))
print("| the same, no filter | %s ms CPU |" % scale["heatmap_all_ms"])
print("| heat map of the hour as 60 rows of 1 min | %s ms CPU |" % scale["heatmap_hour_rows_ms"])
print("| 10 s range profile (goal < 50 ms; %s samples, %s stacks) | %s ms CPU (median; wall %s ms) |" % (scale["range_samples"], scale["range_stacks"], scale["range10s_ms"], scale["range10s_wall_ms"]))
print("| memory per stored sample (samples__mem_bytes; RSS growth) | %s B; %s B |" % (scale["mem_bytes_per_sample"], scale["rss_bytes_per_sample"]))
print("| loading the hour (samples__add, in order) | %s ms CPU (wall %s ms) |" % (scale["build_ms"], scale["build_wall_ms"]))
print("| max RSS of the benchmark process | %.0f MiB |" % (int(maxrss) / 1024))
print()
print("| perf script file (%d records, %.0f MB): 10 s range to folded | median | ratio |" % (int(records), int(size) / 1e6))
print("| --- | --- | --- |")
print("| range-perf.pl \\| stackcollapse-perf.pl (reference) | %.0f ms | 1 |" % med(h["reference"]))
print("| ember heatmap --range (identical output: %s) | %.0f ms | %.3f |" % (same, med(h["ember"]), med(h["ember"]) / med(h["reference"])))
print("| ember heatmap --json of the same file (parse + map) | %.0f ms | |" % med(hm))
PY
