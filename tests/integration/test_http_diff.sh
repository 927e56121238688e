#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# lane: beside (emberd serves a replayed recording: no timing, share or CPU bound to disturb)
# emberd's /api/v1/diff.folded and /api/v1/compare against a real emberd in replay mode (no
# root): the diff of two ranges equals `ember diff` of the two ranges' /api/v1/folded, elided=1
# keeps the vanished stacks, and compare equals `ember stat compare` run on the per-window
# folded files; bad parameters are 4xx with the parameter named.
. "$(dirname "$0")/../lib.sh"
command -v curl >/dev/null || skip_all "no curl"
[ -x "$EMBERD" ] || skip_all "no $EMBERD"
IN=$TMP/perf.txt
zcat "$SHARED/corpus/examples/example-perf-stacks.txt.gz" >"$IN" || skip_all "no shared corpus"
trap 'stop_all; cleanup_tmp' EXIT
replay_start "$IN" || { not_ok "emberd --replay starts"; sed 's/^/# /' "$TMP/emberd.log"; done_testing; }

# the capture spans 7628263.04 .. 7628273.03 (seconds since boot)
A="from=7628263&to=7628268" B="b_from=7628268&b_to=7628273"
curl -s "$URL/api/v1/folded?from=7628263&to=7628268&idle=1" >"$TMP/a.folded"
curl -s "$URL/api/v1/folded?from=7628268&to=7628273&idle=1" >"$TMP/b.folded"
for n in 0 1; do
	curl -s "$URL/api/v1/diff.folded?$A&$B&idle=1&normalize=$n" >"$TMP/d.folded"
	nflag=; [ $n = 1 ] && nflag=-n
	# shellcheck disable=SC2086
	"$EMBER" diff $nflag "$TMP/a.folded" "$TMP/b.folded" >"$TMP/want"
	check "diff.folded normalize=$n equals ember diff of the two ranges" cmp -s "$TMP/want" "$TMP/d.folded"
done
check "... and it is not empty" test -s "$TMP/d.folded"
curl -s "$URL/api/v1/diff.folded?$A&$B&idle=1&elided=1" >"$TMP/e.folded"
check "elided=1 keeps exactly the stacks absent from B" cmp -s "$TMP/e.folded" <(awk '$NF == 0 && $(NF-1) != 0 { $NF = ""; sub(/ $/, ""); print }' "$TMP/want")

# diff.svg (the HTTP helper's handler) states the elided share; elided=1 draws those paths
share=$("$EMBER" diff "$TMP/a.folded" "$TMP/b.folded" | awk '{ t += $(NF-1); if ($NF == 0) g += $(NF-1) } END { printf "%.2f", 100 * g / t }')
curl -s "$URL/api/v1/diff.svg?$A&$B&idle=1" >"$TMP/d.svg"
check "diff.svg states $share% elided" grep -q ">$share% elided" "$TMP/d.svg"
curl -s "$URL/api/v1/diff.svg?$A&$B&idle=1&elided=1" >"$TMP/e.svg"
etotal=$(awk '{ s += $NF } END { print s }' "$TMP/e.folded")
check "diff.svg elided=1 draws the $etotal elided samples" grep -q "<title>all ($etotal samples" "$TMP/e.svg"

# compare: five 1 s windows each way, against ember stat compare on the same windows
for i in 0 1 2 3 4; do
	curl -s "$URL/api/v1/folded?from=$((7628263 + i))&to=$((7628264 + i))&idle=1" >"$TMP/wa$i.folded"
	curl -s "$URL/api/v1/folded?from=$((7628268 + i))&to=$((7628269 + i))&idle=1" >"$TMP/wb$i.folded"
done
curl -s "$URL/api/v1/compare?$A&$B&idle=1&window=1" >"$TMP/cmp.json"
"$EMBER" stat compare --json --a "$TMP"/wa*.folded --b "$TMP"/wb*.folded >"$TMP/cli.json"
/usr/bin/python3 - "$TMP/cmp.json" "$TMP/cli.json" <<'PYEOF'
import json, sys
h = json.load(open(sys.argv[1])); c = json.load(open(sys.argv[2]))
t = h["test"]
print(("ok" if h["a"]["windows"] == 5 and h["b"]["windows"] == 5 else "not ok") + " - compare cuts each range into 5 windows")
same = all(t[k] == c[k] for k in ("n_a", "n_b", "stacks", "p", "nr_significant", "reject")) and \
    all(abs(t[k] - c[k]) <= 1e-9 * max(1, abs(c[k])) for k in ("t2", "f", "p_value", "t2_crit")) and \
    [k["stack"] for k in t["kept"]] == [k["stack"] for k in c["kept"]]
print(("ok" if same else "not ok") + f" - compare equals ember stat compare on the windows (T2 {t['t2']:.4g}, p {t['p_value']:.3g})")
PYEOF
code() { curl -s -o "$TMP/body" -w '%{http_code}' "$URL$1"; }
check "compare without b_from is 400" test "$(code "/api/v1/compare?$A")" = 400
check "... naming the parameter" grep -q '"param": "b_from"' "$TMP/body"
check "compare with under 2 windows is 400" test "$(code "/api/v1/compare?from=7628263&to=7628264&$B")" = 400
check "... saying the smallest range" grep -q 'at least 2 whole windows of 1 s (ranges of 2 s or more)' "$TMP/body"
check "compare with alpha=2 is 400" test "$(code "/api/v1/compare?$A&$B&alpha=2")" = 400
check "compare with too many windows is 413" test "$(code "/api/v1/compare?from=7620000&to=7628263&b_from=7620000&b_to=7628263&window=1")" = 413
check "... giving the limit and the window that fits" grep -q 'more than 600 windows in a range (8263 s in windows of 1 s): use window=14 or more' "$TMP/body"
check "... which is the default without window" \
	bash -c "curl -s '$URL/api/v1/compare?from=7620010&to=7628273&b_from=7620010&b_to=7628273&idle=1' | grep -q '^{\"window_s\":14,.*\"verdict\":\"no significant difference (p-value'"
check "compare of an empty range with a recorded one is a test (200)" \
	test "$(code "/api/v1/compare?from=7600000&to=7600005&$B")" = 200
check "compare of two ranges without samples is 422" \
	test "$(code "/api/v1/compare?from=7600000&to=7600005&b_from=7700000&b_to=7700005")" = 422
check "... saying neither range has samples" grep -q 'no samples in either range' "$TMP/body"
check "diff.folded with b_from after b_to is 400" test "$(code "/api/v1/diff.folded?$A&b_from=7628270&b_to=7628268")" = 400
done_testing
