#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The dashboard with a profile of 100k unique stacks (emberd --replay of generated ember-samples):
# the flame graph renders pruned to what is visible, search reports the exact Matched % (computed
# here independently), zoom and reset work. The times taken are printed as "# timing" lines for
# docs/benchmarks.md, never asserted.
. "$(dirname "$0")/../lib.sh"
require_browser
[ -x "$EMBERD" ] || skip_all "no $EMBERD"
python3 - "$TMP/big.samples" "$TMP/expect.json" <<'PY'
import json, random, re, sys
random.seed(7)
out = open(sys.argv[1], "w")
out.write("# ember-samples v1\n")
total = matched = 0
pat = re.compile(r"lvl3_2$")
for k in range(100000):
    depth = 6 + k % 14
    frames = ["big"] + ["lvl%d_%d" % (i, random.randrange(4)) for i in range(depth)] + ["leaf_%d" % k]
    c = 1 + k % 5
    t = 1700000000 + (k % 10000) / 1000.0
    out.write("%.9f %s %d\n" % (t, ";".join(frames), c))
    total += c
    if any(pat.search(f) for f in frames[1:]):
        matched += c
json.dump({"total": total, "pct": 100.0 * matched / total, "regex": "lvl3_2$"}, open(sys.argv[2], "w"))
PY
trap 'stop_all; cleanup_tmp' EXIT
replay_start "$TMP/big.samples" # the page test fails on its own if emberd is not up
URL=$URL EXPECT=$TMP/expect.json node "$SRCDIR/tests/browser/test_dashboard_large.mjs"
