#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The dashboard's differential view in headless Chromium (test_dashboard_diff.mjs) against
# emberd --replay of a recorded `perf script` file: the elided share, the Hotelling test and
# its significant stacks, and the elided flame graph, each checked against the API's numbers.
. "$(dirname "$0")/../lib.sh"
require_browser
[ -x "$EMBERD" ] || skip_all "no $EMBERD"
zcat "$SHARED/corpus/examples/example-perf-stacks.txt.gz" >"$TMP/perf.txt" || skip_all "no shared corpus"
trap 'stop_all; cleanup_tmp' EXIT
replay_start "$TMP/perf.txt" || { not_ok "emberd --replay starts"; done_testing; }
# the capture spans 7628263.04 .. 7628273.03; A and B are its halves
R="from=7628263&to=7628268&b_from=7628268&b_to=7628273"
curl -s "$URL/api/v1/diff.folded?$R" >"$TMP/d.folded"
ELIDED_PCT=$(awk '{ t += $(NF-1); if ($NF == 0) g += $(NF-1) } END { printf "%.2f", t ? 100 * g / t : 0 }' "$TMP/d.folded")
ELIDED_SAMPLES=$(awk '{ if ($NF == 0) g += $(NF-1) } END { print g + 0 }' "$TMP/d.folded")
NSIG=$(curl -s "$URL/api/v1/compare?$R&window=1" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["test"]["nr_significant"])')
URL=$URL RANGES=7628263,7628268,7628268,7628273 ELIDED_PCT=$ELIDED_PCT ELIDED_SAMPLES=$ELIDED_SAMPLES NSIG=$NSIG \
	node "$SRCDIR/tests/browser/test_dashboard_diff.mjs"
