#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ember heatmap's SVG in headless Chromium: hover a cell (time range and count), click two cells
# (highlight; start, end and samples of the range), and the range read from the page fed back to
# `ember heatmap --range` gives the same number of samples; see test_heatmap.mjs.
. "$(dirname "$0")/../lib.sh"
require_browser
command -v python3 >/dev/null || skip_all "no python3"
# 8 columns of 1 s from a whole second, random samples plus samples on row and column edges;
# the expected counts per cell are computed here, independently of ember
python3 - "$TMP/in.txt" "$TMP/want.json" <<'PY'
import json, random, sys
rnd = random.Random(11)
base, cols, rows, col_ns = 1700000000 * 10**9, 8, 50, 10**9
vals = [[0] * rows for _ in range(cols)]
lines = ["# ember-samples v1"]
for c in range(cols):
    ts = [base + c * col_ns + r * 20 * 10**6 for r in range(0, rows, 3)]
    ts += [base + c * col_ns + rnd.randrange(col_ns) for _ in range(rnd.randrange(50, 400))]
    for t in ts:
        n = rnd.choice([1, 1, 2])
        lines.append("%d.%09d app;main;f%d %d" % (t // 10**9, t % 10**9, rnd.randrange(5), n))
        off = t - base
        vals[off // col_ns][(off % col_ns) * rows // col_ns] += n
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
json.dump({"start_ns": str(base), "column_ns": col_ns, "rows": rows, "values": vals}, open(sys.argv[2], "w"))
PY
"$EMBER" heatmap "$TMP/in.txt" --title "browser test" >"$TMP/map.svg" || { not_ok "ember heatmap"; done_testing; }
SVG=$TMP/map.svg WANT=$TMP/want.json IN=$TMP/in.txt node "$SRCDIR/tests/browser/test_heatmap.mjs"
