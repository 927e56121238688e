#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# (lane 1, as test_kernel61: its two emulated CPUs take the machine's two for about 80 s)
# JavaScript frames on Debian 12's own kernel: Debian's linux-image-6.1.0-*-amd64 booted under
# QEMU with software emulation (kernel61.sh), from a busybox initramfs holding build/emberd,
# Debian's /usr/bin/node (v20: one ~99 MB binary with its v8dbg_ data; the image ~54 MB) with
# the shared libraries ldd lists, and tests/workloads/nodeburn. Inside, /init starts emberd,
# runs `node app.js` (no flag), waits for emberd to name its first JavaScript frame (node
# ready 4 s after its start, named 1-2 s later), lets V8 settle WARM s more, takes WINDOW s of
# node's stacks from /api/v1/folded, then the "v8" and "sampler" sections of /api/v1/stats,
# stops node and emberd, and prints them, emberd's log and node's samples by 5 s (all, and
# those of V8's optimizing compiler's threads) on the serial console between markers; the
# test reads them back:
#   - the guest runs Debian's 6.1 kernel, emberd starts there (do_sample passed the 6.1
#     verifier), reads node's v8dbg_ data and names its frames, and exits 0 on SIGTERM;
#   - node is sampled: >= MIN samples in the window, 40 % of the 199 Hz its busy thread could
#     give over WINDOW s (1592 in 20 s; 3600-3800 measured: a tick missed under emulation is a
#     sample missed, and a loaded host misses more; 1592 still puts a share's sampling error
#     well inside the 3 pp checked);
#   - >= 90 % of them name a function of the workload (node_shares.sh, as test_node.sh counts)
#     and its five burn functions each within 3 pp of their share of the time (30/25/20/15/10 %),
#     burnAsync with the samples of its part TurboFan inlined into main (named main: emberd does
#     not expand V8's inlined frames, as V8's perf map does not; see below).
#     The window starts once V8's tiers are settled: emulated, TurboFan compiles the burn
#     functions in node's first 10 s and main (with burnAsync inlined) 15-20 s after its
#     start, about 8 % of node's samples in those threads then, none after (named 92 % with
#     a window from 13 s, 97 % from 26 s);
#   - the whole boot-to-poweroff fits in LIMIT s (about 80 s here).
# Its own test, not a part of test_kernel61.sh: node under emulation takes 20 s to warm up, and
# that test's 110 s are taken.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/kernel61.sh" # k61_prereqs, k61_root, k61_libs, k61_init_head, k61_boot ...
. "$(dirname "$0")/node_shares.sh" # shares FILE
k61_prereqs
NODE=${EMBER_NODE:-/usr/bin/node}
[ -x "$NODE" ] || skip_all "no $NODE (Debian's nodejs)"
trap 'stop_all; cleanup_tmp' EXIT
LIMIT=150
WARM=${K61_NODE_WARM:-20}
WINDOW=${K61_NODE_WINDOW:-20}
MIN=$((WINDOW * 199 * 4 / 10))

k61_root
mkdir -p "$R/usr/bin" "$R/w"
cp "$NODE" "$R/usr/bin/node"
cp "$SRCDIR"/tests/workloads/nodeburn/{app.js,mod.mjs} "$R/w/"
k61_libs "$R/bin/emberd" "$R/usr/bin/node"
k61_init_head >"$R/init"
cat >>"$R/init" <<EOF
/bin/emberd --listen 127.0.0.1:8080 -F 199 >/tmp/emberd.log 2>&1 &
EP=\$!
$(k61_init_serves 8080)
T=\$(date +%s)
/usr/bin/node /w/app.js 600 >/tmp/node.out 2>&1 &
NP=\$!
i=0
until grep -q '^ready' /tmp/node.out; do
	i=\$((i + 1)); [ \$i -ge 120 ] && break; sleep 0.5
done
echo "K61 node ready after \$((\$(date +%s) - T)) s: \$(head -1 /tmp/node.out)"
# emberd names node's frames once it has examined the process and read its v8dbg_ data (node's
# 100 MB .symtab: 1-7 s on the host, many more emulated)
i=0
until wget -q -O /tmp/n.folded "http://127.0.0.1:8080/api/v1/folded?pid=\$NP&from=\$T" &&
	grep -q 'app\\.js:[0-9]*)_\\[j\\]' /tmp/n.folded; do
	i=\$((i + 1)); [ \$i -ge 120 ] && break; sleep 0.5
done
echo "K61 node named after \$((\$(date +%s) - T)) s"
sleep $WARM
T0=\$(date +%s)
sleep $WINDOW
T1=\$(date +%s)
wget -q -O /tmp/st.json http://127.0.0.1:8080/api/v1/stats
kill -USR2 \$NP
i=0
until grep -q '^done' /tmp/node.out; do
	i=\$((i + 1)); [ \$i -ge 60 ] && break; sleep 0.5
done
echo "K61 node \$(grep '^split' /tmp/node.out)"
wget -q -O /tmp/n.folded "http://127.0.0.1:8080/api/v1/folded?pid=\$NP&from=\$T0&to=\$T1"
# node's samples by 5 s from its start: all, and those in V8's optimizing compiler's threads
# (TurboFan compiling the hot functions: the warm-up, slow emulated)
s=\$T
while [ \$s -lt \$T1 ]; do
	wget -q -O /tmp/s.folded "http://127.0.0.1:8080/api/v1/folded?pid=\$NP&from=\$s&to=\$((s + 5))"
	echo "K61 node slice +\$((s - T)) s: \$(awk '{ t += \$NF; if (\$0 ~ /OptimizingCompileDispatcher/) c += \$NF } END { print t + 0, c + 0 }' /tmp/s.folded)"
	s=\$((s + 5))
done
kill \$EP
wait \$EP
echo "K61 emberd exit \$?"
echo K61-BEGIN-STATS
cat /tmp/st.json
echo K61-END-STATS
echo K61-BEGIN-LOG
cat /tmp/emberd.log
echo K61-END-LOG
echo K61-BEGIN-FOLDED
cat /tmp/n.folded
echo K61-END-FOLDED
echo K61 done
poweroff -f
EOF

k61_boot $LIMIT 1536
grep '^K61 \(emberd serves\|node\)' "$TMP/console.log" | sed 's/^K61 node slice \(.*\): \(.*\) \(.*\)/K61 node slice \1: \2 samples, \3 compiling/' | sed 's/^/# /'
k61_powered_off $LIMIT
k61_kernel_and_log
section STATS >"$TMP/stats.json"
section FOLDED >"$TMP/node.folded"
stat_section() { # NAME: the object NAME of the guest's /api/v1/stats, on one line
	python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1])).get(sys.argv[2])))' \
		"$TMP/stats.json" "$1" 2>/dev/null
}
echo "# v8 stats: $(stat_section v8)"
echo "# sampler stats: $(stat_section sampler)"
check "emberd started on 6.1 (its BPF programs loaded) and served" \
	sh -c "grep -qi 'started' '$TMP/emberd.log' && grep -q '^K61 emberd serves' '$TMP/console.log'"
check "emberd read node's V8 data on 6.1 and named its frames (v8 procs, frames)" \
	python3 -c 'import json, sys; v = json.load(open(sys.argv[1]))["v8"]; sys.exit(not (v["procs"] >= 1 and v["frames"] > 0))' \
	"$TMP/stats.json"
read -r TOT NM F M C A MOD BT < <(shares "$TMP/node.folded")
echo "# node on 6.1: $TOT samples in ${WINDOW} s, $NM% name a function of the workload; of the $BT in a burn function: function $F%, method $M%, closure $C%, async $A%, module $MOD%"
# main as the innermost JavaScript frame: main's own work (little), or a function TurboFan
# inlined into main, named main (its code is main's): burnAsync up to its first await once main is
# optimized (10 s after "ready" on the host, 15 here), a quarter of burnAsync's time: burnAsync
# 10.7-11.5 % of the burn functions' samples for its 15 % (11.1 % on the host in a window 20-35 s
# after start), main innermost in 5.1-5.5 %; under node --no-turbo-inlining 14.9 % and 0.2 %.
# emberd names the physical frame, as V8's own perf map (--perf-basic-prof) does; expanding
# TurboFan's inlined functions into frames of their own is not done. So the split below counts
# main-innermost samples with burnAsync (over the burn functions' samples and those), and the
# raw figure is printed beside it.
read -r MI < <(awk '{ n = $NF; s = substr($0, 1, length($0) - length($NF) - 1); k = split(s, fr, ";"); last = ""
	for (i = 1; i <= k; i++) if (fr[i] ~ /_\[j\]$/) last = fr[i]
	if (last ~ /^main \(/) m += n } END { print m + 0 }' "$TMP/node.folded")
read -r F M C A MOD < <(awk -v f="$F" -v m="$M" -v c="$C" -v a="$A" -v mod="$MOD" -v bt="$BT" -v mi="$MI" 'BEGIN {
	u = bt + mi; if (!u) u = 1
	printf "%.1f %.1f %.1f %.1f %.1f\n", f * bt / u, m * bt / u, c * bt / u, (a * bt / 100 + mi) * 100 / u, mod * bt / u }')
echo "# node on 6.1: $MI samples with main innermost (burnAsync's part inlined there); counted with burnAsync: function $F%, method $M%, closure $C%, async $A% (raw: see above), module $MOD%"
echo "# node's own split of its wall time: $(awk '/^K61 node split/ { $1 = $2 = $3 = ""; print }' "$TMP/console.log")"
within() { awk -v x="$1" -v e="$2" -v d="$3" 'BEGIN { exit !(x - e <= d && e - x <= d) }'; }
atleast() { awk -v x="$1" -v e="$2" 'BEGIN { exit !(x >= e) }'; }
check "node sampled on 6.1 (>= $MIN samples in $WINDOW s: $TOT)" test "$TOT" -ge "$MIN"
check "node on 6.1: >= 90% of the samples name a function of the program ($NM%)" atleast "$NM" 90 ||
	awk '$0 !~ /(app\.js|mod\.mjs)/ { print $NF, $0 }' "$TMP/node.folded" | sort -rn | head -5 |
	cut -c1-400 | sed 's/^/#   unnamed: /'
check "node on 6.1: burnFunction 30 +- 3 pp ($F)" within "$F" 30 3
check "node on 6.1: Burner.burnMethod 25 +- 3 pp ($M)" within "$M" 25 3
check "node on 6.1: burnClosure 20 +- 3 pp ($C)" within "$C" 20 3
check "node on 6.1: async burnAsync (with what TurboFan inlined into main) 15 +- 3 pp ($A)" within "$A" 15 3
check "node on 6.1: module's burnModule 10 +- 3 pp ($MOD)" within "$MOD" 10 3
check "emberd stopped cleanly (exit 0 on SIGTERM)" grep -q '^K61 emberd exit 0$' "$TMP/console.log"
done_testing
