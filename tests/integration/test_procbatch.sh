#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Process events in batches. A fork wakes nobody, whatever process.drain_period_ms says (the BPF
# program lists the child itself, with its parent's list; its first sample or its exec wakes the
# drain and comes after it in the ring); once read it is handed to the worker
# process.drain_period_ms after it (0: with the batch it was read in), with what came meanwhile:
# a process born and gone within one batch and never sampled costs the worker nothing
# (sampler.procs_coalesced). tests/workloads/forker's 300 children that live 2 ms each are
# mostly such processes (those sampled are not: their first sample is urgent), at 15 ms and at
# the default 0 alike (when forks woke the drain at 0, 89-91 were). The counters that show the
# drain's and the worker's wake-ups and the bpf() calls by kind are in /api/v1/stats and
# /metrics.
. "$(dirname "$0")/../lib.sh"
require_live_emberd
W=$OUTPUT/workloads
[ -x "$W/forker" ] || skip_all "workloads not built (make workloads)"
trap 'stop_all; cleanup_tmp' EXIT

run_case() { # NAME PERIOD_MS: prints the processes coalesced while forker ran
	local c0 c1
	emberd_serve -o process.drain_period_ms="$2" || { not_ok "$1: emberd starts"; return; }
	sleep 1.5 # start-up; then the counters of one tick
	c0=$(stat_field sampler.procs_coalesced)
	"$W/forker" 300 2 50
	sleep 2.5 # two ticks: the last batch delivered and the counters published
	c1=$(stat_field sampler.procs_coalesced)
	echo "# $1: forker 300 x2 ms: $((c1 - c0)) processes coalesced; sampler $(curl -sf "$URL/api/v1/stats" | python3 -c 'import json, sys
s = json.load(sys.stdin)["sampler"]
print({k: s[k] for k in ("ring_wakeups", "event_checks", "event_batches", "procs_coalesced", "bpf_calls_by")})')"
	check "$1: emberd still running" kill -0 "$EPID"
	kill "$EPID"
	wait "$EPID" 2>/dev/null
	COALESCED=$((c1 - c0))
}

run_case batched 15
BATCHED=$COALESCED
check "batched: a third or more of the 300 short children cost the worker nothing (coalesced $BATCHED >= 100)" \
	test "$BATCHED" -ge 100
emberd_serve || { not_ok "emberd starts"; done_testing; }
sleep 1.5
curl -sf "$URL/metrics" >"$TMP/metrics"
for m in 'ember_drain_wakeups_total{reason="ring"}' 'ember_drain_wakeups_total{reason="events"}' \
	'ember_event_batches_total' 'ember_processes_coalesced_total' \
	'ember_bpf_calls_by_kind_total{kind="process_lists"}' \
	'ember_bpf_run_time_seconds_total{prog="process_events"}'; do
	check "/metrics: $m" grep -qF "$m " "$TMP/metrics"
done
kill "$EPID"
wait "$EPID" 2>/dev/null
run_case default 0
check "default (process.drain_period_ms = 0): forks wake nobody there too, a third or more coalesced ($COALESCED >= 100; $BATCHED at 15)" \
	test "$COALESCED" -ge 100
done_testing
