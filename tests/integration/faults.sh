# SPDX-License-Identifier: MIT
# Helpers of the fault-injection tests (tests/integration/test_faults_*.sh), sourced after
# tests/lib.sh. emberd_start ARGS...: starts $EMBERD on a free port ($URL, $EPID, log in
# $TMP/emberd.log) and waits for /healthz; emberd_stop_check NAME: SIGTERM, then one result:
# exit 0 within 2 s, no sanitizer report in the log (a kill -9 if it hangs).

emberd_start() {
	if emberd_serve "$@"; then ok "emberd serves HTTP"; return 0; fi
	not_ok "emberd serves HTTP"
	return 1
}

# VmRSS of emberd in KiB
emberd_rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$EPID/status" 2>/dev/null || echo 0; }

# stat_json EXPR: a value of /api/v1/stats, EXPR in Python over d (e.g. 'd["sampler"]["lost"]')
stat_json() {
	curl -sf -m 10 "$URL/api/v1/stats" |
		python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"
}

emberd_stop_check() {
	local t0 ms rc alive=1
	t0=$(date +%s%N)
	kill -TERM "$EPID" 2>/dev/null
	for _ in $(seq 40); do kill -0 "$EPID" 2>/dev/null || { alive=0; break; }; sleep 0.05; done
	if [ $alive = 1 ]; then
		not_ok "$1: emberd exits within 2 s of SIGTERM (hung; killed)"
		kill -9 "$EPID" 2>/dev/null
		wait "$EPID" 2>/dev/null
		return 1
	fi
	wait "$EPID"
	rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	check "$1: emberd exits 0 within 2 s of SIGTERM (rc $rc, ${ms} ms)" test "$rc" -eq 0
	check "$1: no sanitizer report, no crash in the log" \
		sh -c "! grep -E 'AddressSanitizer|LeakSanitizer|runtime error|Segmentation' '$TMP/emberd.log'"
}
