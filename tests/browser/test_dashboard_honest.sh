#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The views engineers know and a page that says what it holds, in headless Chromium at 1366x768
# (test_dashboard_honest.mjs):
#  1. replay of a generated recording (no root): the top table equals /api/v1/top, sorted by self
#     and by total, filtered by the search, whose "% through matches" is exact; a row opens the
#     sandwich of a function called from two places (both callers above, callees below, each
#     adding up to its total); focus and ignore redraw the graph as /api/v1/folded?focus=/ignore=
#     gives it; a range pick of a graph taller than the window keeps its root and widest frames
#     in view; without [offcpu] the page says so next to the selector and where the graph would
#     be when off-CPU events are asked for anyway;
#  2. live (root): retention 2 s, so a range 30 s back is evicted: the page says how far back the
#     history reaches instead of "no samples"; the header says the evictions and the oldest time;
#     a filtered rate is labelled as such beside the host's; a capture's listed count is its
#     graph's, idle shown the same way.
# Screenshots: $OUTPUT/screenshots/honest-*.png.
. "$(dirname "$0")/../lib.sh"
require_browser
[ -x "$EMBERD" ] || skip_all "no $EMBERD"
command -v python3 >/dev/null || skip_all "no python3"
trap 'stop_all; cleanup_tmp' EXIT

# 120 s of samples: shared_fn called from caller_one and caller_two; a tower 110 frames deep
# (a graph ~1350 px tall); some idle samples
python3 - "$TMP/rec.samples" <<'PY'
import random, sys
rnd = random.Random(39)
base = 1790000000 * 10**9
out = ["# ember-samples v1"]
for sec in range(120):
    for _ in range(20):
        t = base + sec * 10**9 + rnd.randrange(10**9)
        k = rnd.randrange(10)
        if k < 3:
            st = ["app", "_start", "main", "caller_one", "shared_fn", "leaf_a"]
        elif k < 5:
            st = ["app", "_start", "main", "caller_two", "shared_fn", "leaf_b"]
        elif k < 6:
            st = ["app", "_start", "main", "caller_two", "other_fn"]
        elif k < 8:
            st = ["app", "_start", "main"] + ["tower_%03d" % i for i in range(110)]
        elif k < 9:
            st = ["worker", "_start", "work_loop", "leaf_a"]
        else:
            st = ["app", "_start", "main", "spin"]
        out.append("%d.%09d %s 1" % (t // 10**9, t % 10**9, ";".join(st)))
open(sys.argv[1], "w").write("\n".join(out) + "\n")
PY

if replay_start "$TMP/rec.samples"; then
	URL=$URL PART=replay FROM=1790000000 TO=1790000120 node "$SRCDIR/tests/browser/test_dashboard_honest.mjs" |
		sed 's/^\(not \)\{0,1\}ok - /&replay: /'
	[ "${PIPESTATUS[0]}" -eq 0 ] || T_FAILS=$((T_FAILS + 1))
else
	not_ok "replay: emberd serves the dashboard"
fi
stop_all
PIDS=()

if [ "$(id -u)" -ne 0 ] || [ ! -r /sys/kernel/btf/vmlinux ]; then
	skip "live part" "needs root and BTF for BPF sampling"
	done_testing
fi
BURN=$OUTPUT/workloads/burn
[ -x "$BURN" ] || { not_ok "live: no $BURN (make workloads)"; done_testing; }
"$BURN" 60 >/dev/null &
PIDS+=($!)
if emberd_serve -o store.retention=2; then
	sleep 6 # evictions by age
	URL=$URL PART=live node "$SRCDIR/tests/browser/test_dashboard_honest.mjs" | sed 's/^\(not \)\{0,1\}ok - /&live: /'
	[ "${PIPESTATUS[0]}" -eq 0 ] || T_FAILS=$((T_FAILS + 1))
else
	not_ok "live: emberd serves the dashboard"
fi
done_testing
