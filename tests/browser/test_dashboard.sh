#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The dashboard in headless Chromium (test_dashboard.mjs) against real emberds:
#  1. replay of a recorded `perf script` file (no root): heat map, drag selection, flame graph
#     with tcp_sendmsg, hover, search + Matched %, zoom, curl/downloads, diff of two ranges;
#  2. live (root): emberd sampling tests/workloads/burn; the same, on burn_c, plus an on-call
#     capture that completes and opens.
# Screenshots: $OUTPUT/screenshots/dashboard-*.png (live) and replay/dashboard-*.png.
. "$(dirname "$0")/../lib.sh"
require_browser
[ -x "$EMBERD" ] || skip_all "no $EMBERD"
trap 'stop_all; cleanup_tmp' EXIT
wait_up() { # URL LOG SECONDS
	local i
	for i in $(seq $(($3 * 10))); do
		curl -sf "$1/healthz" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	echo "# emberd did not come up:"; sed 's/^/#   /' "$2" | tail -20
	return 1
}

# --- 1. replay ---
zcat "$SHARED/corpus/examples/example-perf-stacks.txt.gz" >"$TMP/perf.txt" || skip_all "no shared corpus"
mkdir -p "$SCREENSHOT_DIR/replay"
PORT=$(free_port)
"$EMBERD" --listen "127.0.0.1:$PORT" --replay "$TMP/perf.txt" >"$TMP/replay.log" 2>&1 &
PIDS+=($!)
if wait_up "http://127.0.0.1:$PORT" "$TMP/replay.log" 10; then
	URL=http://127.0.0.1:$PORT FN=tcp_sendmsg SCREENSHOT_DIR=$SCREENSHOT_DIR/replay \
		node "$SRCDIR/tests/browser/test_dashboard.mjs" | sed 's/^\(not \)\{0,1\}ok - /&replay: /'
	[ "${PIPESTATUS[0]}" -eq 0 ] || T_FAILS=$((T_FAILS + 1))
else
	not_ok "replay: emberd serves the dashboard"
fi

# --- 2. live, sampling the burn workload ---
if [ "$(id -u)" -ne 0 ]; then
	skip "live dashboard" "needs root for BPF sampling"
	done_testing
fi
BURN=$OUTPUT/workloads/burn
[ -x "$BURN" ] || { not_ok "live: no $BURN (make workloads)"; done_testing; }
"$BURN" 60 >"$TMP/burn.out" &
PIDS+=($!)
PORT=$(free_port)
"$EMBERD" --listen "127.0.0.1:$PORT" >"$TMP/live.log" 2>&1 &
PIDS+=($!)
if wait_up "http://127.0.0.1:$PORT" "$TMP/live.log" 20; then
	sleep 4 # a few seconds of history for the heat map
	URL=http://127.0.0.1:$PORT FN=burn_c CAP_FN=burn_ CAPTURE=1 node "$SRCDIR/tests/browser/test_dashboard.mjs" |
		sed 's/^\(not \)\{0,1\}ok - /&live: /'
	[ "${PIPESTATUS[0]}" -eq 0 ] || T_FAILS=$((T_FAILS + 1))
else
	not_ok "live: emberd serves the dashboard"
fi
done_testing
