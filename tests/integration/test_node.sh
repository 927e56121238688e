#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# (lane 1: the workload runs at real-time priority; its shares held within 3 pp with the second lane, or two busy loops, beside it)
# JavaScript frames: the real emberd names the functions of Node processes with no flag in the
# program, from V8's own postmortem data (v8dbg_*), on Debian's /usr/bin/node (EMBER_NODE to
# test another):
#   - tests/workloads/nodeburn/app.js run as `node app.js`: a function, a class method, a
#     closure, an async function and an ES module's function at 30/25/20/15/10 % of the time;
#     >= 90 % of the process's samples name a function of its own, each share within 3 pp;
#     its last second too (stored after it exited: names read while it ran stay); each frame
#     "name (file:line)_[j]" at the line that defines the function;
#   - the same under `node --perf-basic-prof` seen by a second emberd with [v8] enabled = no
#     (the perf-map path): the same functions at the same shares within 3 pp, and the lines V8's
#     own perf map gives them; by the first, where both sources exist, JavaScript frames carry
#     the introspection names;
#   - hostile "node"s (tests/workloads/fakev8.c, run as uid 65534): forged v8dbg_ symbols, a
#     cons string that is its own halves, a string claiming 2^31 characters, a function slot
#     into unmapped memory, objects rewritten all the time: emberd keeps serving, names stay
#     bounded, no name of another process appears; a forged compressed-pointer layout is refused
#     and counted, its frames native; a script's source gives its function's line, one
#     of 2 Mi line feeds (over the line ends one script may keep) none, counted; CR LF and CR
#     count as V8 counts them; 16 scripts of 4 Mi characters are not all read (a window's
#     budget of characters), counted.
. "$(dirname "$0")/../lib.sh"
require_live_emberd
command -v chrt >/dev/null || skip_all "no chrt"
NODE=${EMBER_NODE:-/usr/bin/node}
[ -x "$NODE" ] || skip_all "no $NODE (Debian's nodejs)"
W=$SRCDIR/tests/workloads/nodeburn/app.js
for f in fakev8 fakev8_compressed; do
	[ -x "$OUTPUT/workloads/$f" ] || skip_all "no $OUTPUT/workloads/$f (make workloads)"
done

trap 'stop_all; cleanup_tmp' EXIT

# v8_stat KEY URL: a counter of /api/v1/stats "v8"
v8_stat() {
	curl -sf "$2/api/v1/stats" | python3 -c \
		'import json, sys; print(json.load(sys.stdin).get("v8", {}).get(sys.argv[1], -1))' "$1"
}
within() { awk -v x="$1" -v e="$2" -v d="$3" 'BEGIN { exit !(x - e <= d && e - x <= d) }'; }
atleast() { awk -v x="$1" -v e="$2" 'BEGIN { exit !(x >= e) }'; }

# run_node OUT ARGS...: node ARGS at real-time priority in the background; waits for "ready"
# (NODE_PID, T_READY), lets it run 8 s from FROM, stops it (SIGUSR2: it ends its round and prints
# its split), waits for "done" and a tick more; FROM..TO: from the moment emberd A is
# seen naming a JavaScript frame of the program (its first sample's process examined and node's
# v8dbg_ data read once: 1.1-6.6 s after "ready" on this shared host, most of it reading node's
# 100 MB .symtab; every sample taken after that is walked with V8's frames) to done - 0.1 s.
# Not a fixed delay: a slow first read put up to 12 % of the window before it, unnamed.
run_node() {
	local out=$1 t
	shift
	chrt -f 1 "$NODE" "$@" >"$out" 2>&1 &
	PIDS+=($!)
	wait_log "$out" ready || return 1
	read -r _ NODE_PID T_READY < <(grep -m1 ready "$out")
	FROM=$(awk -v t="$T_READY" 'BEGIN { printf "%.3f", t + 1.5 }')
	for _ in $(seq 60); do
		t=$(date +%s.%N)
		if curl -sf "$URL_A/api/v1/folded?pid=$NODE_PID&from=$T_READY" |
			grep -q ' ([^;]*\(app\.js\|mod\.mjs\)\(:[0-9]*\)\?)_\[j\]'; then
			FROM=$(awk -v t="$t" 'BEGIN { printf "%.3f", t }')
			break
		fi
		sleep 0.1
	done
	echo "# $(basename "$out" .out): measured from $(awk -v f="$FROM" -v r="$T_READY" 'BEGIN { printf "%.1f", f - r }') s after ready"
	sleep 8
	kill -USR2 "$NODE_PID"
	for _ in $(seq 600); do grep -q '^done' "$out" && break; sleep 0.1; done
	T_DONE=$(awk '/^done/ {print $2}' "$out")
	TO=$(awk -v t="${T_DONE:-0}" 'BEGIN { printf "%.3f", t - 0.1 }')
	echo "# $(basename "$out" .out): the workload's own split of its wall time: $(awk '/^split/ { $1 = ""; print }' "$out")"
	sleep 1
}

. "$(dirname "$0")/node_shares.sh" # shares FILE

check_shares() { # NAME FILE [REFERENCE_SHARES...]
	local name=$1 TOT NM F M C A MOD BT
	read -r TOT NM F M C A MOD BT < <(shares "$2")
	echo "# $name: $TOT samples, $NM% name a function of the workload; of the $BT in a burn function: function $F%, method $M%, closure $C%, async $A%, module $MOD%"
	check "$name: sampled (>= 300 samples)" test "$TOT" -ge 300
	check "$name: >= 90% of the samples name a function of the program ($NM%)" atleast "$NM" 90
	atleast "$NM" 90 ||
		awk '$0 !~ /(app\.js|mod\.mjs)/' "$2" | sort -t' ' -k2 | awk '{ print $NF, $0 }' |
		sort -rn | head -5 | cut -c1-400 | sed 's/^/#   unnamed: /'
	check "$name: burnFunction 30 +- 3 pp ($F)" within "$F" 30 3
	check "$name: Burner.burnMethod 25 +- 3 pp ($M)" within "$M" 25 3
	check "$name: burnClosure 20 +- 3 pp ($C)" within "$C" 20 3
	check "$name: async burnAsync 15 +- 3 pp ($A)" within "$A" 15 3
	check "$name: module's burnModule 10 +- 3 pp ($MOD)" within "$MOD" 10 3
	SH="$F $M $C $A $MOD"
}

# emberd A: JavaScript frames read (the default); B: [v8] enabled = no (perf maps only)
emberd_serve -F 199 || { not_ok "emberd A starts"; done_testing; }
URL_A=$URL
PORT_B=$(free_port)
URL_B=http://127.0.0.1:$PORT_B
"$EMBERD" --listen "127.0.0.1:$PORT_B" -F 199 -o v8.enabled=no >"$TMP/emberd_b.log" 2>&1 &
PIDS+=($!)
wait_http "$URL_B/healthz" 200 $! || { not_ok "emberd B starts"; sed 's/^/# /' "$TMP/emberd_b.log"; done_testing; }

# --- node app.js: no flag --------------------------------------------------------------------
run_node "$TMP/plain.out" "$W" 30 || not_ok "node app.js prints ready"
curl -sf "$URL_A/api/v1/folded?pid=$NODE_PID&from=$FROM&to=$TO" >"$TMP/plain.A"
curl -sf "$URL_B/api/v1/folded?pid=$NODE_PID&from=$FROM&to=$TO" >"$TMP/plain.B"
check_shares "node app.js" "$TMP/plain.A"
SH_PLAIN=$SH
# the functions TurboFan inlined: frames of their own, as V8's own stack traces show them
# (without their expansion: 12 % of a workload's inlined function's samples, those from before
# its caller was optimized)
read -r IF IM < <(inlined "$TMP/plain.A")
F0=$T_FAILS
check "node app.js: burnFunction's samples go on into lcgRound, inlined by TurboFan, >= 90% ($IF%)" atleast "$IF" 90
check "node app.js: Burner.burnMethod's into round;mixRound, inlined two deep, >= 90% ($IM%)" atleast "$IM" 90
[ "$T_FAILS" -eq "$F0" ] || {
	# what burnFunction's and burnMethod's stacks were, and the reader's counts
	awk '/;burn(Function|Method) / { n = $NF; s = $0; sub(/^.*;main \([^;]*\)_\[j\];/, "", s)
		sub(/ [0-9]+$/, "", s); c[s] += n } END { for (k in c) print c[k], k }' "$TMP/plain.A" |
		sort -rn | head -6 | cut -c1-300 | sed 's/^/#   /'
	curl -sf "$URL_A/api/v1/stats" | python3 -c 'import json, sys
v = json.load(sys.stdin).get("v8", {}); print("#   " + str({k: x for k, x in v.items() if "inline" in k}))'
}
check "v8 stats: frames of inlined functions named (inline_frames $(v8_stat inline_frames "$URL_A"))" \
	test "$(v8_stat inline_frames "$URL_A")" -gt 0
# its last second: stored after it exited (the next tick), when its memory is gone; names read
# before stay (they were lost when their one-second recheck failed: 14.8 % named, measured)
LAST=$(awk -v t="$T_DONE" 'BEGIN { printf "%.3f", t - 1.1 }')
curl -sf "$URL_A/api/v1/folded?pid=$NODE_PID&from=$LAST&to=$TO" >"$TMP/plain.last"
read -r TOT_L NM_L _ < <(shares "$TMP/plain.last")
check "node app.js: its last second before exiting named too ($NM_L% of $TOT_L)" atleast "$NM_L" 90
check "node app.js: frames as 'name (file:line)_[j]' (burnModule from file://.../mod.mjs)" \
	grep -q ';burnModule (file://[^;]*/mod\.mjs:[0-9]*)_\[j\]' "$TMP/plain.A"
check "node app.js: the class method by its name, the closure by its own" \
	grep -q ';burnMethod ([^;]*app\.js:[0-9]*)_\[j\].*;burnClosure ([^;]*app\.js:[0-9]*)_\[j\]\|;burnClosure ([^;]*app\.js:[0-9]*)_\[j\]' "$TMP/plain.A"
check "node app.js: each function at the line that defines it ($(fn_lines "$TMP/plain.A") for $(src_lines))" \
	test "$(fn_lines "$TMP/plain.A")" = "$(src_lines)"
# the same process through emberd B: no function names at all (what a user got before)
read -r _ NM_B _ < <(shares "$TMP/plain.B")
check "node app.js under [v8] enabled = no: no function named ($NM_B%)" atleast 1 "$NM_B"
check "v8 stats: a Node process read, its frames named" \
	test "$(v8_stat frames "$URL_A")" -gt 0

# --- node --perf-basic-prof app.js: the perf map ----------------------------------------------
run_node "$TMP/perf.out" --perf-basic-prof "$W" 30 || not_ok "node --perf-basic-prof prints ready"
curl -sf "$URL_A/api/v1/folded?pid=$NODE_PID&from=$FROM&to=$TO" >"$TMP/perf.A"
curl -sf "$URL_B/api/v1/folded?pid=$NODE_PID&from=$FROM&to=$TO" >"$TMP/perf.B"
check_shares "node --perf-basic-prof (perf map, emberd B)" "$TMP/perf.B"
SH_PERF=$SH
check "perf map path: frames named by V8's perf map (JS:*...)" grep -q ";JS:[*~^+']*burn" "$TMP/perf.B"
# the lines side by side: V8's own perf map (B) and introspection on the same process (A)
check "lines: introspection's line of each function is the perf map's ($(fn_lines "$TMP/perf.A") and $(fn_lines "$TMP/perf.B"))" \
	test "$(fn_lines "$TMP/perf.A")" = "$(fn_lines "$TMP/perf.B")"
set -- $SH_PLAIN
for x in $SH_PERF; do
	check "no flag vs --perf-basic-prof: same share within 3 pp ($1 vs $x)" within "$1" "$x" 3
	shift
done
# where both exist, introspection names the JavaScript frames it reads (file names, no JS:)
INTRO=$(awk '{ n = $NF; if ($0 ~ /;burn(Function|Method|Closure|Async|Module) \([^;]*\)_\[j\]/) i += n; t += n }
	END { printf "%.1f", t ? 100 * i / t : 0 }' "$TMP/perf.A")
check "both sources: introspection's names in >= 60% of the samples ($INTRO%)" atleast "$INTRO" 60
rm -f "/tmp/perf-$NODE_PID.map"

# --- hostile node binaries ---------------------------------------------------------------------
for_nobody fakev8 fakev8_compressed
mkdir -p "$TMP/fake" "$TMP/fakec" && chmod 0755 "$TMP/fake" "$TMP/fakec"
cp "$NOBODY_BIN/fakev8" "$TMP/fake/node" && cp "$NOBODY_BIN/fakev8_compressed" "$TMP/fakec/node"
chmod 0755 "$TMP/fake/node" "$TMP/fakec/node"
UNSUP0=$(v8_stat procs_unsupported "$URL_A")
REFUSED0=$(v8_stat refused_bad_value "$URL_A")
UNREAD0=$(v8_stat line_sources_unread "$URL_A")
DEFER0=$(v8_stat line_sources_deferred "$URL_A")
for m in cycle long unmapped moving compressed lines manylines bigsrc; do
	bin=$TMP/fake/node
	[ $m = compressed ] && bin=$TMP/fakec/node
	setpriv --reuid=65534 --regid=65534 --clear-groups "$bin" "${m/compressed/cycle}" 4 \
		>"$TMP/fake.$m" 2>&1 &
	PIDS+=($!)
	wait_log "$TMP/fake.$m" ready || not_ok "fake node $m prints ready"
	read -r _ FPID _ < <(grep -m1 ready "$TMP/fake.$m")
	if [ $m = compressed ]; then
		# sampled and examined while it runs (4 s): the count is a gauge of the live ones;
		# 1.5 s after "ready" was too soon once beside the second lane (fresh-clone run ZC4)
		for _ in $(seq 14); do
			sleep 0.25
			UNSUP=$(v8_stat procs_unsupported "$URL_A")
			[ "$UNSUP" -gt "$UNSUP0" ] 2>/dev/null && break
		done
	fi
	for _ in $(seq 100); do grep -q '^done' "$TMP/fake.$m" && break; sleep 0.1; done
	sleep 1
	curl -sf "$URL_A/api/v1/folded?pid=$FPID" >"$TMP/fake.$m.folded"
	N=$(awk '{ t += $NF } END { print t + 0 }' "$TMP/fake.$m.folded")
	LONG=$(awk -F';' '{ for (i = 1; i <= NF; i++) if (length($i) > m) m = length($i) } END { print m + 0 }' "$TMP/fake.$m.folded")
	check "fake node ($m): sampled ($N samples)" test "$N" -ge 50
	check "fake node ($m): no frame name over 600 bytes (longest $LONG)" test "$LONG" -le 600
	check "fake node ($m): no name of another process" \
		sh -c "! grep -q 'burn\|app\.js' '$TMP/fake.$m.folded'"
	case $m in
	long) check "fake node (long): its 2^31-character name read bounded (512 'A's)" \
		grep -q ';A\{512\}_\[j\]' "$TMP/fake.$m.folded" ;;
	cycle | unmapped | compressed) check "fake node ($m): no JavaScript frame named" \
		sh -c "! grep -q '_\[j\]' '$TMP/fake.$m.folded'" ;;
	lines) check "fake node (lines): its function at line 501 (499 CR LF, a CR, then the function)" \
		grep -q ';srcfn (hostile\.js:501)_\[j\]' "$TMP/fake.$m.folded" ;;
	manylines) check "fake node (manylines): 2 Mi lines: named without a line" \
		grep -q ';srcfn (hostile\.js)_\[j\]' "$TMP/fake.$m.folded"
		check "fake node (manylines): its source counted unread ($UNREAD0 -> $(v8_stat line_sources_unread "$URL_A"))" \
			test "$(v8_stat line_sources_unread "$URL_A")" -gt "$UNREAD0" ;;
	bigsrc) check "fake node (bigsrc): 16 scripts of 4 Mi characters: the reads stop at the window's budget, counted ($DEFER0 -> $(v8_stat line_sources_deferred "$URL_A"))" \
		test "$(v8_stat line_sources_deferred "$URL_A")" -gt "$DEFER0"
		check "fake node (bigsrc): its functions named all the same" \
			grep -q ';srcfn (hostile\.js)_\[j\]' "$TMP/fake.$m.folded" ;;
	esac
	check "emberd A still serves after fake node ($m)" curl -sf -o /dev/null "$URL_A/healthz"
done
# forged TurboFan code (fakev8.c: a Code whose data says outerfn inlined innerfn; a cycle in
# that data; a position table of 2^31 - 1 bytes), the three side by side for 3 s
INL0=$(v8_stat inline_unreadable "$URL_A")
for m in inline inlcycle inlhuge; do
	setpriv --reuid=65534 --regid=65534 --clear-groups "$TMP/fake/node" $m 3 >"$TMP/fake.$m" 2>&1 &
	PIDS+=($!)
done
for m in inline inlcycle inlhuge; do
	wait_log "$TMP/fake.$m" ready || not_ok "fake node $m prints ready"
done
for m in inline inlcycle inlhuge; do
	for _ in $(seq 100); do grep -q '^done' "$TMP/fake.$m" && break; sleep 0.1; done
done
sleep 1
for m in inline inlcycle inlhuge; do
	read -r _ FPID _ < <(grep -m1 ready "$TMP/fake.$m")
	curl -sf "$URL_A/api/v1/folded?pid=$FPID" >"$TMP/fake.$m.folded"
	N=$(awk '{ t += $NF } END { print t + 0 }' "$TMP/fake.$m.folded")
	check "fake node ($m): sampled ($N samples)" test "$N" -ge 50
	check "fake node ($m): no name of another process" \
		sh -c "! grep -q 'burn\|app\.js\|lcgRound' '$TMP/fake.$m.folded'"
	if [ $m = inline ]; then
		check "fake node (inline): its forged inlined function as a frame of its own (outerfn;innerfn)" \
			grep -q ';outerfn_\[j\];innerfn_\[j\]' "$TMP/fake.$m.folded"
	else
		check "fake node ($m): the function alone, no inlined frame from the broken data" \
			sh -c "grep -q ';outerfn_\[j\]' '$TMP/fake.$m.folded' && ! grep -q 'innerfn' '$TMP/fake.$m.folded'"
	fi
done
check "fake node (inlcycle, inlhuge): their inlining data counted unreadable ($INL0 -> $(v8_stat inline_unreadable "$URL_A"))" \
	test "$(v8_stat inline_unreadable "$URL_A")" -ge $((INL0 + 2))
check "emberd A still serves after the forged optimized code" curl -sf -o /dev/null "$URL_A/healthz"
check "compressed-pointer layout: counted unsupported ($UNSUP0 -> $UNSUP)" test "$UNSUP" -gt "$UNSUP0"
check "compressed-pointer layout: refused as bad_value ($REFUSED0 -> $(v8_stat refused_bad_value "$URL_A"))" \
	test "$(v8_stat refused_bad_value "$URL_A")" -gt "$REFUSED0"
echo "# v8 stats: $(curl -sf "$URL_A/api/v1/stats" | python3 -c 'import json, sys; print(json.load(sys.stdin).get("v8"))')"

stop_all
done_testing
