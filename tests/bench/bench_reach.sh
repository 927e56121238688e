#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Unwind tables for every listed file vs for reached files only: two emberd
# builds side by side over bench_hostmix.sh's mix for DUR seconds (both see the same host, so a
# shared VM's load falls on both alike), then each one's unwind counters, process CPU (from
# /proc/PID/stat) and BPF run time (/metrics) per sample, and its exit line.
# usage: bench_reach.sh OLD_EMBERD NEW_EMBERD [DUR]   (root, node, xz, perl; default 30)
set -u
OLD=$1 NEW=$2 DUR=${3:-30}
TMP=$(mktemp -d /tmp/ember-reach.XXXXXX)
MIX=()
trap 'mix_stop; rm -rf "$TMP"' EXIT
. "$(dirname "$0")/hostmix_lib.sh"
mix_setup
mix_start $((DUR + 6))
PO=$(mix_port) PN=$(mix_port)
"$OLD" --listen "127.0.0.1:$PO" >"$TMP/old.log" 2>&1 & EO=$!
"$NEW" --listen "127.0.0.1:$PN" >"$TMP/new.log" 2>&1 & EN=$!
MIX+=($EO $EN)
sleep "$DUR"
for x in "old $EO $PO" "new $EN $PN"; do
	set -- $x
	curl -s "127.0.0.1:$3/api/v1/stats" >"$TMP/$1.json"
	curl -s "127.0.0.1:$3/metrics" >"$TMP/$1.metrics"
	awk '{print $14 + $15}' /proc/$2/stat >"$TMP/$1.ticks"
	grep VmHWM /proc/$2/status | awk '{print $2}' >"$TMP/$1.hwm"
done
kill -INT $EO $EN
wait $EO $EN
python3 - "$TMP" "$(getconf CLK_TCK)" <<'PY'
import json, re, sys
d, hz = sys.argv[1], float(sys.argv[2])
keys = ("builds", "build_ms_total", "tables", "rows_used", "evictions", "refused", "procs",
        "files_unbuilt", "build_asks", "reach_fp_samples", "ready_ms_avg")
print("| | " + " | ".join(keys) + " | samples | user_fp_walks | user_truncated | CPU us/sample | BPF us/sample | peak RSS MiB |")
print("| --- " * (len(keys) + 7) + "|")
for n in ("old", "new"):
    s = json.load(open("%s/%s.json" % (d, n)))
    u, sm = s["unwind"], s["sampler"]
    m = open("%s/%s.metrics" % (d, n)).read()
    x = re.search(r"^ember_bpf_run_time_seconds_total(\{[^}]*\})? ([0-9.e+]+)$", m, re.M)
    bpf = float(x.group(2)) if x else 0.0
    cpu = float(open("%s/%s.ticks" % (d, n)).read()) / hz
    ns = sm["samples"] or 1
    print("| %s | " % n + " | ".join(str(u.get(k, "-")) for k in keys) +
          " | %d | %d | %d | %.1f | %.1f | %.0f |" % (sm["samples"], sm["user_fp_walks"], sm["user_truncated"],
                                        cpu / ns * 1e6, bpf / ns * 1e6,
                                        float(open("%s/%s.hwm" % (d, n)).read()) / 1024))
PY
grep -h "unwind tables" "$TMP/old.log" "$TMP/new.log" | sed 's/^/# /'
