#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The dashboard an on-call engineer reads, in headless Chromium at 1366x768
# (test_dashboard_views.mjs):
#  1. replay of a generated 30 min recording (ember-samples v1, no root): the heat map's y-axis in
#     ms, clock labels and colour legend with counts; the newest column in view; a tooltip at the
#     cursor with time, count and share; the same cell under the pointer across two refreshes and
#     after scrolling back; a selection brings the flame graph into view with its top frame on
#     screen, flame and icicle; frame details at the cursor; marker suffixes and Python paths out
#     of the labels; a bad regex clears the highlight; the "unresolved" panel explains the
#     recording's [libcrypto.so.3] frames (perf named no symbol there) with their samples;
#  2. live (root): cells stay put while two refreshes append columns; with the drain paused
#     (EMBERD_TEST_PAUSE_DRAIN, a test knob of emberd) the page shows the stalled banner with the
#     time of the last sample and drops "live", and drops the banner when the drain resumes;
#     a stripped copy of burn: /api/v1/stats and the "unresolved" panel name its file, say it is
#     stripped and what would name it, with its samples in the graph; its frames' tooltips say why.
# Screenshots: $OUTPUT/screenshots/views-*.png; with DOCS_SCREENSHOTS=1 also docs/img/*.png.
. "$(dirname "$0")/../lib.sh"
require_browser
[ -x "$EMBERD" ] || skip_all "no $EMBERD"
command -v python3 >/dev/null || skip_all "no python3"
trap 'stop_all; cleanup_tmp' EXIT

# 30 min of samples, 1 s apart columns of 5..40 samples; a burst at minute 29; stacks up to 48
# frames deep, kernel frames (_[k]), Python frames with their file's full path and line, and 10 %
# in frames perf left unresolved ([libcrypto.so.3])
python3 - "$TMP/rec.samples" <<'PY'
import random, sys
rnd = random.Random(28)
base = 1790000000 * 10**9
out = ["# ember-samples v1"]
py = ["<module> (/opt/app/bin/serve.py:3)_[py]", "main (/opt/app/bin/serve.py:40)_[py]",
      "Worker.run (/opt/app/lib/python3.11/site-packages/app/worker.py:112)_[py]"]
for sec in range(1800):
    n = 5 + (sec * 7) % 36 + (60 if 1740 <= sec < 1750 else 0)
    for _ in range(n):
        t = base + sec * 10**9 + rnd.randrange(10**9)
        k = rnd.randrange(10)
        if k < 4:
            st = ["python3", "_start", "Py_RunMain"] + py + ["json.dumps (/usr/lib/python3.11/json/__init__.py:231)_[py]"]
        elif k < 6:
            st = ["burn", "_start", "main"] + ["deep_%02d" % i for i in range(40)] + ["spin"]
        elif k < 8:
            st = ["burn", "_start", "main", "write", "entry_SYSCALL_64_[k]", "ksys_write_[k]", "vfs_write_[k]"]
        elif k < 9:
            st = ["swapper", "cpu_startup_entry_[k]", "do_idle_[k]"]
        else: # a stripped library perf could not name when it recorded
            st = ["burn", "_start", "main", "[libcrypto.so.3]", "[libcrypto.so.3]"]
        out.append("%d.%09d %s 1" % (t // 10**9, t % 10**9, ";".join(st)))
open(sys.argv[1], "w").write("\n".join(out) + "\n")
PY

mkdir -p "$SCREENSHOT_DIR"
DOCS=
[ "${DOCS_SCREENSHOTS:-0}" = 1 ] && DOCS=$SRCDIR/docs/img && mkdir -p "$DOCS"
if replay_start "$TMP/rec.samples"; then
	URL=$URL PART=replay DOCS=$DOCS node "$SRCDIR/tests/browser/test_dashboard_views.mjs" |
		sed 's/^\(not \)\{0,1\}ok - /&replay: /'
	[ "${PIPESTATUS[0]}" -eq 0 ] || T_FAILS=$((T_FAILS + 1))
else
	not_ok "replay: emberd serves the dashboard"
fi
stop_all

if [ "$(id -u)" -ne 0 ]; then
	skip "live dashboard" "needs root for BPF sampling"
	done_testing
fi
BURN=$OUTPUT/workloads/burn
[ -x "$BURN" ] || { not_ok "live: no $BURN (make workloads)"; done_testing; }
"$BURN" 90 >/dev/null &
PIDS+=($!)
# a stripped copy: its frames stay unresolved, and the page says why (symbols.unresolved_files)
STRIPPED=$TMP/burn-stripped
strip -o "$STRIPPED" "$BURN" || not_ok "strip $BURN"
# (niced: a second burner on a 2-CPU host leaves emberd less room, whose columns must still grow)
nice -n 10 "$STRIPPED" 90 >/dev/null &
PIDS+=($!)
export EMBERD_TEST_PAUSE_DRAIN=$TMP/pause-drain
if emberd_serve; then
	sleep 3 # a few columns of history
	# the API: the stripped copy, by path, with its build-id, the reason and what would name it
	# (symbolized off the drain thread and published once a tick: polled up to 20 s)
	python3 - "$URL/api/v1/stats" "$STRIPPED" <<'PY' && ok "live: /api/v1/stats lists the stripped file, why and what would name it" || not_ok "live: /api/v1/stats lists the stripped file"
import json, sys, time, urllib.request
u = []
for _ in range(80):
    d = json.load(urllib.request.urlopen(sys.argv[1], timeout=5))["symbols"].get("unresolved_files", [])
    u = [x for x in d if x["path"] == sys.argv[2]]
    if u:
        break
    time.sleep(0.25)
print("# " + json.dumps(u)[:300])
sys.exit(0 if u and u[0]["reason"] == "stripped" and u[0]["frame"] == "[burn-stripped]" and
         len(u[0]["build_id"]) == 40 and "dbgsym" in u[0]["hint"] and u[0]["frames"] > 0 else 1)
PY
	URL=$URL PART=live PAUSE=$EMBERD_TEST_PAUSE_DRAIN DOCS=$DOCS STRIPPED=$STRIPPED node "$SRCDIR/tests/browser/test_dashboard_views.mjs" |
		sed 's/^\(not \)\{0,1\}ok - /&live: /'
	[ "${PIPESTATUS[0]}" -eq 0 ] || T_FAILS=$((T_FAILS + 1))
else
	not_ok "live: emberd serves the dashboard"
fi
rm -f "$EMBERD_TEST_PAUSE_DRAIN"
done_testing
