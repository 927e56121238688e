#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 26 item 1: the process tracker. Every exec is notified and the new image listed for the
# walker with the tables already built, so a C program that lives 30 ms (tests/workloads/
# shortlived: -O2 -fomit-frame-pointer, reaching main only through its unwind tables), run 100
# times, has >= 90 % of its samples reach main;work (61 % when processes were known from their
# first sample). Both ways of reading mappings: PROCMAP_QUERY (on kernels that have it, 6.11+)
# and the /proc/PID/maps text (process.maps_query = no; the only way on 6.1). The mappings are
# read once per event and shared (reads < the three readers' events), and an exit drops them.
# Item 2: a forking server's children (tests/workloads/forker: 50 children that spin 30 ms each
# without exec, no frame pointers) are listed at their fork with a copy of their parent's list:
# >= 90 % of their samples reach main;work (60 % when they were listed at their first sample).
. "$(dirname "$0")/../lib.sh"
require_live_emberd
W=$OUTPUT/workloads
[ -x "$W/shortlived" ] && [ -x "$W/forker" ] || skip_all "workloads not built (make workloads)"
trap 'stop_all; cleanup_tmp' EXIT

stats_json() { curl -sf "$URL/api/v1/stats" >"$TMP/stats.json"; }
field() { # a field path of the last stats_json, e.g. processes.reads
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    d = d[k]
print(str(d).lower())' "$TMP/stats.json" "$1"
}

# the kernel has PROCMAP_QUERY from 6.11
read -r KMAJ KMIN < <(uname -r | awk -F'[.-]' '{ print $1, $2 }')
if [ "$KMAJ" -gt 6 ] || { [ "$KMAJ" -eq 6 ] && [ "$KMIN" -ge 11 ]; }; then HAVE_QUERY=true; else HAVE_QUERY=false; fi
echo "# kernel $(uname -r): PROCMAP_QUERY expected: $HAVE_QUERY"

run_case() { # NAME MAPS_QUERY(yes|no) EXPECT_QUERY(true|false)
	local name=$1 mq=$2 want=$3 tot main t0
	emberd_serve -o process.maps_query="$mq" || { not_ok "$name: emberd starts"; return; }
	sleep 1.5 # start-up: kallsyms, the first tables
	t0=$(date +%s.%N)
	for _ in $(seq 100); do
		"$W/shortlived" 30
	done
	"$W/forker" 50 30 300 # item 2: fork without exec (its children are "forkchild")
	sleep 2.5 # two ticks: the last samples are named and stored
	curl -sf "$URL/api/v1/folded?from=$t0" >"$TMP/$name.folded"
	read -r tot main < <(awk '/^shortlived;/ { n = $NF; t += n; if ($0 ~ /;main;work;/) m += n }
		END { print t + 0, m + 0 }' "$TMP/$name.folded")
	echo "# $name: shortlived 30 x100: $tot samples, $main reach main;work"
	grep '^shortlived;' "$TMP/$name.folded" | grep -v ';main;work;' | sort -t' ' -k2 -nr |
		head -3 | sed 's/^/#   /'
	check "$name: shortlived was sampled (>= 150 samples)" test "$tot" -ge 150
	check "$name: >= 90 % of shortlived's samples reach main;work ($main of $tot)" \
		test $((main * 100)) -ge $((tot * 90))
	stats_json
	echo "# $name: processes $(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["processes"])' "$TMP/stats.json")"
	check "$name: PROCMAP_QUERY used: $(field processes.procmap_query) (expected $want)" \
		test "$(field processes.procmap_query)" = "$want"
	if [ "$want" = true ]; then
		check "$name: reads by PROCMAP_QUERY, none as text" \
			test "$(field processes.query_reads)" -gt 0 -a "$(field processes.text_reads)" -eq 0
	else
		check "$name: reads as /proc/PID/maps text, none by PROCMAP_QUERY" \
			test "$(field processes.text_reads)" -gt 0 -a "$(field processes.query_reads)" -eq 0
	fi
	check "$name: every shortlived listed at exec (unwind.exec_lists $(field unwind.exec_lists) >= 100)" \
		test "$(field unwind.exec_lists)" -ge 100
	check "$name: their exits drop their state (processes.exits $(field processes.exits) >= 100)" \
		test "$(field processes.exits)" -ge 100
	check "$name: the tracker holds no more than the live processes need (procs $(field processes.procs) < 100)" \
		test "$(field processes.procs)" -lt 100
	# item 2: fork without exec
	read -r tot main < <(awk '/^forkchild;/ { n = $NF; t += n; if ($0 ~ /;main;work;/) m += n }
		END { print t + 0, m + 0 }' "$TMP/$name.folded")
	echo "# $name: forker 50 x30 ms: $tot samples of the children, $main reach main;work"
	grep '^forkchild;' "$TMP/$name.folded" | grep -v ';main;work;' | sort -t' ' -k2 -nr |
		head -3 | sed 's/^/#   /'
	check "$name: forker's children were sampled (>= 75 samples)" test "$tot" -ge 75
	check "$name: >= 90 % of the forked children's samples reach main;work ($main of $tot)" \
		test $((main * 100)) -ge $((tot * 90))
	check "$name: the children were listed at their fork (processes.fork_lists $(field processes.fork_lists) >= 50)" \
		test "$(field processes.fork_lists)" -ge 50
	check "$name: emberd still running" kill -0 "$EPID"
	kill "$EPID"
	wait "$EPID" 2>/dev/null
}

run_case query yes "$HAVE_QUERY"
run_case text no false
done_testing
