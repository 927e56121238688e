#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ember heatmap: exact per-cell counts (samples on second and row boundaries) in JSON and SVG,
# computed independently here in python with integer nanoseconds; the FlameScope "5 s burst in
# 15 minutes" case; idle/comm/pid/tid filters; perf script input; xmllint; errors.
. "$(dirname "$0")/../lib.sh"
command -v python3 >/dev/null || skip_all "no python3"
command -v xmllint >/dev/null || skip_all "no xmllint"

# --- known counts -------------------------------------------------------------------------
# gen_known SEED COLUMN_NS ROWS: writes $TMP/known.txt and $TMP/known.want (the expected
# values[column][row] as JSON, computed from the same times with integer arithmetic)
gen_known() {
	python3 - "$@" "$TMP/known.txt" "$TMP/known.want" <<'EOF'
import json, random, sys
seed, col_ns, rows, out, want = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
rnd = random.Random(seed)
base = 1712345678 * 10**9 // col_ns * col_ns   # a column edge: the map starts here
ncols = 7
times = []
for c in range(ncols):
    col0 = base + c * col_ns
    # exactly on the column edge, on every 5th row edge, and just before edges
    times.append(col0)
    for r in range(0, rows, 5):
        edge = col0 + (r * col_ns + rows - 1) // rows
        times += [edge, edge, max(col0, edge - 1)]
    for _ in range(rnd.randrange(20, 200)):
        times.append(col0 + rnd.randrange(col_ns))
times.append(base + ncols * col_ns - 1)   # the last instant of the last column
stacks = ["app;main;work", "app;main;io", "db-42/43;query", "swapper;secondary_startup_64;cpu_startup_entry;do_idle;default_idle"]
vals = [[0] * rows for _ in range(ncols)]
lines = []
for t in sorted(times):
    st = rnd.choice(stacks)
    n = rnd.choice([1, 1, 1, 2, 3])
    lines.append("%d.%09d %s %d" % (t // 10**9, t % 10**9, st, n))
    if st.startswith("swapper"):
        continue                    # idle: excluded by default
    off = t - base
    c, w = off // col_ns, off % col_ns
    vals[c][w * rows // col_ns] += n
rnd.shuffle(lines)                  # readers accept any order
with open(out, "w") as f:
    f.write("# ember-samples v1\n" + "\n".join(lines) + "\n")
with open(want, "w") as f:
    json.dump({"values": vals, "max": max(max(v) for v in vals), "total": sum(map(sum, vals))}, f)
EOF
}

# compare_json JSON WANT: values, max and total equal
compare_json() {
	python3 - "$1" "$2" <<'EOF'
import json, sys
got, want = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
for k in ("values", "max", "total"):
    if got[k] != want[k]:
        print("# %s differs" % k); sys.exit(1)
EOF
}

# compare_svg SVG WANT: every drawn cell's data-n equals the expected count, and no other cell
compare_svg() {
	python3 - "$1" "$2" <<'EOF'
import json, re, sys
svg, want = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
cells = {(int(c), int(r)): float(n) for c, r, n in re.findall(r'<rect id="c(\d+)_(\d+)"[^>]*data-n="([0-9.]+)"', svg)}
exp = {(c, r): v for c, col in enumerate(want["values"]) for r, v in enumerate(col) if v}
if cells != exp:
    print("# cells differ: %d drawn, %d expected" % (len(cells), len(exp))); sys.exit(1)
EOF
}

for arr in "1000000000 50" "2000000000 7" "3600000000000 60"; do
	set -- $arr
	name="known counts, column ${1} ns x ${2} rows"
	gen_known 7 "$1" "$2"
	col_s=$(python3 -c "print(repr($1 / 1e9) if $1 % 10**9 else $1 // 10**9)")
	if "$EMBER" heatmap "$TMP/known.txt" --column-seconds "$col_s" --rows "$2" --json >"$TMP/k.json" 2>"$TMP/err"; then
		check "$name: JSON" compare_json "$TMP/k.json" "$TMP/known.want"
	else
		not_ok "$name: JSON exit"; sed 's/^/# /' "$TMP/err"
	fi
	if "$EMBER" heatmap "$TMP/known.txt" --column-seconds "$col_s" --rows "$2" --svg >"$TMP/k.svg" 2>"$TMP/err"; then
		check "$name: SVG" compare_svg "$TMP/k.svg" "$TMP/known.want"
	else
		not_ok "$name: SVG exit"; sed 's/^/# /' "$TMP/err"
	fi
	check "$name: xmllint" xmllint --noout "$TMP/k.svg"
done
check "known counts: json start and arrangement" grep -q '"start":1712343600,"start_ns":"1712343600000000000","column_s":3600,"rows":60,"row_s":60,"columns":7' "$TMP/k.json"

# --- the FlameScope origin case: a 5 s burst in 15 minutes ----------------------------------
python3 - "$TMP/burst.txt" <<'EOF'
import random, sys
rnd = random.Random(3)
t0 = 5000 * 10**9
lines = ["# ember-samples v1"]
for s in range(900):
    for _ in range(40):                       # background: 40 samples/s of mixed stacks
        t = t0 + s * 10**9 + rnd.randrange(10**9)
        lines.append((t, rnd.choice(["web;handle;parse", "web;handle;render", "db;scan", "gc;mark"])))
    if 600 <= s < 605:                        # the burst: 5 s of one stack, 400 samples/s
        for _ in range(400):
            lines.append((t0 + s * 10**9 + rnd.randrange(10**9), "web;handle;compress;deflate_slow"))
out = [lines[0]] + ["%d.%09d %s 1" % (t // 10**9, t % 10**9, st) for t, st in sorted(lines[1:])]
open(sys.argv[1], "w").write("\n".join(out) + "\n")
EOF
"$EMBER" heatmap "$TMP/burst.txt" --json >"$TMP/b.json"
check "burst: the 5 heaviest columns are the burst's, and the max cell is in them" python3 - "$TMP/b.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
sums = [sum(c) for c in d["values"]]
top = sorted(range(len(sums)), key=lambda c: -sums[c])[:5]
maxcols = [c for c, col in enumerate(d["values"]) if max(col) == d["max"]]
ok = d["columns"] == 900 and sorted(top) == list(range(600, 605)) and all(600 <= c < 605 for c in maxcols)
sys.exit(0 if ok else 1)
EOF
"$EMBER" heatmap "$TMP/burst.txt" --range +600 +605 >"$TMP/b.folded"
check "burst: --range over the burst is dominated by the burst stack" awk '
	{ n = $NF; total += n; if ($1 == "web;handle;compress;deflate_slow") b = n }
	END { exit !(b > 0.85 * total && b == 2000) }' "$TMP/b.folded"
"$EMBER" heatmap "$TMP/burst.txt" --range 5600 5605 >"$TMP/b2.folded"
check "burst: absolute and relative ranges agree" cmp -s "$TMP/b.folded" "$TMP/b2.folded"
"$EMBER" heatmap "$TMP/burst.txt" --range +0 +900 >"$TMP/all.folded"
check "burst: in the whole range it is a small share (< 6%)" awk '
	{ total += $NF; if ($1 == "web;handle;compress;deflate_slow") b = $NF }
	END { exit !(b == 2000 && b / total < 0.06) }' "$TMP/all.folded"
"$EMBER" heatmap "$TMP/burst.txt" --range +600 +605 --flamegraph --title "burst" >"$TMP/b.svg" 2>"$TMP/err"
check "burst: --range --flamegraph renders the burst" grep -q 'deflate_slow' "$TMP/b.svg"
check "burst: flame graph xmllint" xmllint --noout "$TMP/b.svg"
check "burst: --title reaches the flame graph" grep -q '>burst<' "$TMP/b.svg"
"$EMBER" heatmap "$TMP/burst.txt" --range +600 +605 --flamegraph --width 640 --colors blue >"$TMP/b640.svg"
check "burst: ember flamegraph options reach the flame graph (--width)" grep -q '<svg[^>]* width="640"' "$TMP/b640.svg"
check "error: bad flame graph option value" test "$("$EMBER" heatmap "$TMP/burst.txt" --range +600 +605 --flamegraph --colors nope >/dev/null 2>&1; echo $?)" = 2
"$EMBER" heatmap "$TMP/burst.txt" >"$TMP/bmap.svg"
check "burst: heat map xmllint" xmllint --noout "$TMP/bmap.svg"

# --- filters ----------------------------------------------------------------------------------
cat >"$TMP/f.txt" <<'EOF'
# ember-samples v1
10.0 swapper;secondary_startup_64;cpu_startup_entry;do_idle;default_idle 5
10.1 swapper;irq_exit;net_rx_action 2
10.2 java-100/101;main;run 3
10.3 java-100/102;main;gc 4
10.4 java-200/201;main;run 6
10.5 nginx-300/300;ngx_process 7
EOF
total() { python3 -c 'import json,sys; print(int(json.load(sys.stdin)["total"]))'; }
check "filter: idle excluded by default" test "$("$EMBER" heatmap "$TMP/f.txt" --json | total)" = 22
check "filter: --include-idle" test "$("$EMBER" heatmap "$TMP/f.txt" --json --include-idle | total)" = 27
check "filter: --comm" test "$("$EMBER" heatmap "$TMP/f.txt" --json --comm java | total)" = 13
check "filter: --pid" test "$("$EMBER" heatmap "$TMP/f.txt" --json --pid 100 | total)" = 7
check "filter: --tid" test "$("$EMBER" heatmap "$TMP/f.txt" --json --tid 102 | total)" = 4
check "filter: --comm and --pid" test "$("$EMBER" heatmap "$TMP/f.txt" --json --comm nginx --pid 100 | total)" = 0
check "filter: applies to --range" test "$("$EMBER" heatmap "$TMP/f.txt" --range 10 11 --comm java --tid 101)" = "java-100/101;main;run 3"

# --- perf script input ------------------------------------------------------------------------
ex=$SHARED/corpus/examples/example-perf-stacks.txt.gz
if [ -f "$ex" ]; then
	# records and idle records counted independently (FlameScope's event regexp; our idle rule)
	read -r nrec nidle < <(zcat "$ex" | python3 -c '
import re, sys
ev = re.compile(r" +([0-9.]+): .+?:")
idle = re.compile(r"cpuidle|cpu_idle|cpu_bringup_and_idle|native_safe_halt|xen_hypercall_sched_op|xen_hypercall_vcpu_op|default_idle|do_idle|intel_idle|acpi_idle|mwait_idle|poll_idle")
n = i = 0; cur = None
def done():
    global i
    if cur is not None and cur[0].split()[0].startswith("swapper") and any(idle.search(f) for f in cur[1:]): i += 1
for line in sys.stdin:
    if line.startswith("#"): continue
    if ev.search(line) and not line.startswith((" ", "\t")):
        done(); n += 1; cur = [line]
    elif cur is not None and line.strip(): cur.append(line)
done(); print(n, i)')
	got_all=$("$EMBER" heatmap "$ex" --json --include-idle | total)
	got=$("$EMBER" heatmap "$ex" --json | total)
	check "perf: every record counted with --include-idle ($got_all of $nrec)" test "$got_all" = "$nrec"
	check "perf: idle records left out ($got = $nrec - $nidle)" test "$got" = $((nrec - nidle))
	zcat "$ex" | "$EMBER" heatmap --format perf - >"$TMP/p.svg"
	check "perf: stdin, SVG xmllint" xmllint --noout "$TMP/p.svg"
	if "$EMBER" collapse --timestamps "$ex" >"$TMP/p.samples" 2>/dev/null; then
		"$EMBER" heatmap "$ex" --json >"$TMP/p1.json"
		"$EMBER" heatmap "$TMP/p.samples" --json >"$TMP/p2.json"
		check "perf: ember collapse --timestamps then heatmap == heatmap of perf script" cmp -s "$TMP/p1.json" "$TMP/p2.json"
	fi
	"$EMBER" heatmap "$ex" --range +0 +100 --include-idle >"$TMP/p.folded"
	"$EMBER" collapse "$ex" >"$TMP/p.collapsed" 2>/dev/null &&
		check "perf: a range over everything equals ember collapse" cmp -s "$TMP/p.collapsed" "$TMP/p.folded"
else
	skip "perf input" "no corpus at $ex"
fi

# --- errors -----------------------------------------------------------------------------------
st() { "$EMBER" heatmap "$@" >/dev/null 2>"$TMP/err"; echo $?; }
check "error: --rows 0" test "$(st "$TMP/f.txt" --rows 0)" = 2
check "error: bad --column-seconds" test "$(st "$TMP/f.txt" --column-seconds 1e3)" = 2
check "error: --range needs two times" test "$(st "$TMP/f.txt" --range 1)" = 2
check "error: --range END before START" test "$(st "$TMP/f.txt" --range 12 11)" = 2
check "error: --flamegraph without --range" test "$(st "$TMP/f.txt" --flamegraph)" = 2
check "error: flame graph option without --flamegraph" test "$(st "$TMP/f.txt" --width 500)" = 2
check "error: --svg with --json" test "$(st "$TMP/f.txt" --svg --json)" = 2
check "error: missing file" test "$(st "$TMP/nope.txt")" = 2
check "error: too many columns" test "$(st "$TMP/burst.txt" --column-seconds 0.000001)" = 2
printf '# ember-samples v1\n10.0 a;b 1\n10.x a;b 1\n10.5 a;b 2.5\n11 a;b 1\n' >"$TMP/bad.txt"
"$EMBER" heatmap "$TMP/bad.txt" --json >"$TMP/bad.json" 2>"$TMP/err"
check "malformed lines: skipped and counted" grep -q '2 malformed lines skipped' "$TMP/err"
check "malformed lines: named file:line:col" grep -q "bad.txt:3:1:" "$TMP/err"
check "malformed lines: the good ones count" test "$(total <"$TMP/bad.json")" = 2
check "--strict: exit 2" test "$(st "$TMP/bad.txt" --strict)" = 2
printf '# ember-samples v2\n10.0 a;b 1\n' >"$TMP/v2.txt"
check "unsupported version: exit 2 with --strict" test "$(st "$TMP/v2.txt" --strict)" = 2
"$EMBER" heatmap --help >"$TMP/help"
check "help" grep -q -- "--range START END" "$TMP/help"
done_testing
