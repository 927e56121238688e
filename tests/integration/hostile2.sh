# SPDX-License-Identifier: MIT
# Helpers of the hostile tests that measure a bound while a local user attacks
# (test_hostile_*.sh), sourced after tests/lib.sh and faults.sh. The attacker runs as nobody;
# a root burner is the witness:
#   att_dir            ATT: a fresh directory under /tmp that nobody owns (the checkout may sit
#                      in a 0700 folder nobody cannot enter: what nobody runs is copied here)
#   burn_start SECS    the root burner (BURN); needs W (the workloads)
#   burn_lag_ms        the age of the burner's newest stored sample, in ms
#   watch_start / watch_stop
#                      every 0.5 s: emberd's RSS, the burner's lag and /healthz; at the stop
#                      RSS_MAX (KiB), LAG_MAX (ms, past the first 3 s) and HEALTH_BAD (probes
#                      answered other than 200, or not at all)
#   mem_kb             the heap in use (KiB) less the store and the caches of mapped files'
#                      facts and symbols: each is bounded on its own, fills with the burner's
#                      samples and with what every other process on the host maps (on a shared
#                      machine they swing by 20-70 MB with no attacker); what is left is what an
#                      attack on the other parts would add
#   gauge_back CMD BASE TRIES PAUSE  until CMD prints BASE + 64 KiB or less (BACK: the last value)
#   mem_base           MEM0 and HEAP0 before the attack
#   mem_back_check NAME
#                      mem_kb back within MEM0 + 10 % of HEAP0 within a minute
#   mem_back_report NAME
#                      the same figure once back or after 10 s, printed and not checked: for attacks whose
#                      memory emberd gives back later than that (the names' table starts over
#                      when it doubled or is nearly full: test_hostile_nametable.sh)
AS_NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
# nobody runs the system's Python: a developer's (pyenv under /root) is out of its reach
PY_NOBODY=/usr/bin/python3

att_dir() {
	ATT=$(mktemp -d /tmp/ember-att.XXXXXX)
	chmod 755 "$ATT"
	chown 65534:65534 "$ATT"
}

burn_start() {
	"$W/burn" "$1" >/dev/null &
	BURN=$!
	PIDS+=($BURN)
}

burn_lag_ms() {
	local now
	now=$(date +%s%N)
	curl -sf -m 5 "$URL/api/v1/samples?from=-10s&pid=$BURN" |
		awk -v now="$now" '!/^#/ && NF { t = $1 } END {
			if (t == "") { print 99999; exit }
			split(t, p, "."); ms = (substr(now, 1, 10) - p[1]) * 1000 + \
				(substr(now, 11, 3) - substr(p[2] "000", 1, 3)); print ms }'
}

# the age of the store's newest sample (any process), in ms
store_lag_ms() {
	curl -sf -m 5 "$URL/api/v1/stats" | python3 -c 'import json, sys, time
print(int((time.time() - json.load(sys.stdin)["store"].get("newest", 0)) * 1000))' 2>/dev/null || echo -1
}

watch_start() {
	: >"$TMP/watch"
	(
		local i=0 r l h
		while :; do
			r=$(emberd_rss_kb)
			l=$(burn_lag_ms)
			h=$(curl -s -m 2 -o /dev/null -w '%{http_code}' "$URL/healthz")
			[ $i -lt 6 ] && l=0 # the first samples of a fresh burner
			# and the store's newest sample of any process: emberd late, or the burner
			# off its CPU (another lane's real-time workloads), when the lag is long
			echo "$r $l $h $(store_lag_ms) $(date +%T.%N | cut -c1-12)" >>"$TMP/watch"
			i=$((i + 1))
			sleep 0.5
		done
	) &
	WATCH=$!
	PIDS+=($WATCH)
}

watch_stop() {
	kill "$WATCH" 2>/dev/null
	wait "$WATCH" 2>/dev/null
	read -r RSS_MAX LAG_MAX HEALTH_BAD < <(awk '$1 > r { r = $1 } $2 > l { l = $2 }
		$3 != 200 { b++ } END { print r + 0, l + 0, b + 0 }' "$TMP/watch")
}

# bounds_check NAME: the bounds every attack is held to, over the watch
bounds_check() {
	check "$1: emberd under 512 MB RSS (max $((RSS_MAX / 1024)) MiB)" test "$RSS_MAX" -lt $((512 * 1024))
	check "$1: the burner's samples arrive within 2 s of being taken (max lag $LAG_MAX ms)" \
		test "$LAG_MAX" -le 2000 ||
		awk '$2 > 1500 { printf "#   at %s: burner lag %d ms, store newest %d ms old, RSS %d KiB\n", $5, $2, $4, $1 }' "$TMP/watch"
	check "$1: /healthz answered 200 throughout ($HEALTH_BAD probes not)" test "$HEALTH_BAD" = 0
}

mem_kb() {
	stat_json '(d["heap"]["in_use_bytes"] - d["store"]["bytes"] - d["file_cache"]["bytes"] -
		d["symbols"]["mem_bytes"]) // 1024'
}

# gauge_back CMD BASE TRIES PAUSE: runs CMD (a gauge's reader) until what it prints is back
# within 64 KiB of BASE, at most TRIES times PAUSE s apart; BACK is the last value read
gauge_back() {
	local i
	for i in $(seq "$3"); do
		BACK=$($1)
		[ "$BACK" -le $(($2 + 65536)) ] && return 0
		[ "$i" -lt "$3" ] && sleep "$4"
	done
	return 1
}

# mem_base: MEM0 (mem_kb) and HEAP0 (the heap in use, KiB) before an attack
mem_base() {
	MEM0=$(mem_kb)
	HEAP0=$(stat_json 'd["heap"]["in_use_bytes"] // 1024')
}

# mem_back_check NAME: mem_kb back within MEM0 + 10 % of the heap at the baseline (HEAP0: not of
# MEM0, which is small, and can read negative where symbols.mem_bytes overcounts)
mem_back_check() {
	local m back=0
	for _ in $(seq 30); do
		m=$(mem_kb)
		[ "$m" -le $((MEM0 + HEAP0 / 10)) ] && { back=1; break; }
		sleep 2
	done
	check "$1: the heap (less the store and the file caches) back to its baseline within 10 % of the heap ($HEAP0 KiB) within a minute ($MEM0 -> $m KiB)" \
		test $back = 1 || {
		# where it is held: the heap's parts and the per-process owners
		echo "#   heap: $(stat_json 'd["heap"]')"
		echo "#   processes: $(stat_json '{k: d["processes"][k] for k in ("procs", "mappings", "mem_bytes", "snapshot_bytes")}')"
		echo "#   symbols: $(stat_json '{k: v for k, v in d["symbols"].items() if "mem" in k or "procs" in k or "names" in k}')"
	}
}

mem_back_report() {
	local m i
	for i in $(seq 10); do
		sleep 1
		m=$(mem_kb)
		[ "$m" -le $((MEM0 + HEAP0 / 10)) ] && break
	done
	echo "# $1: the heap less the store and the file caches $MEM0 -> $m KiB $i s after (not checked: names and stacks interned during the attack go at a later renewal or compaction)"
}
