#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# lane: beside (checks names and escapes, not time, shares or CPU)
# a process names itself (prctl(PR_SET_NAME)) with the folded separator, a line
# break, markup, quotes, format directives, a backslash, DEL and a byte that is not UTF-8. The
# comm is the root frame of every stack: it must come out escaped like any other frame name (no
# ';', no line break, control bytes as \xNN) in folded, samples, SVG, JSON and pprof output, and
# the escapes are counted in /api/v1/stats and /metrics. The attacker runs as nobody.
. "$(dirname "$0")/../lib.sh"
require_live_emberd
command -v setpriv >/dev/null || skip_all "no setpriv"
trap "stop_all; cp -r \$TMP /tmp/hc-last; cleanup_tmp" EXIT

emberd_serve || { not_ok "emberd starts"; done_testing; }
ok "emberd starts"

# the name: ; \n <b> " x % s { } \ DEL 0xff (14 bytes, within the kernel's 15)
setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 -c '
import ctypes, time
ctypes.CDLL(None).prctl(15, b";\n<b>\"x%s{}\\\x7f\xff", 0, 0, 0)
end = time.time() + 4
while time.time() < end:
    pass
' &
APID=$!
PIDS+=($APID)
sleep 0.5
od -c </proc/$APID/comm | head -2 | sed 's/^/# comm: /'
check "the attacker named itself" cmp -s <(printf ';\n<b>"x%%s{}\\\177\377\n') /proc/$APID/comm
# an ad hoc capture of it too (captures name stacks through their own sink)
CAP=$(curl -s -X POST -d "seconds=2&pid=$APID" "$URL/api/v1/captures" |
	python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])')
wait $APID
sleep 1.5 # one drain tick and a half

curl -s "$URL/api/v1/folded?pid=$APID" >"$TMP/folded"
curl -s "$URL/api/v1/samples?pid=$APID" >"$TMP/samples"
curl -s "$URL/api/v1/flamegraph.svg?pid=$APID" >"$TMP/fg.svg"
curl -s "$URL/api/v1/stats" >"$TMP/stats.json"
for _ in $(seq 50); do
	curl -s "$URL/api/v1/captures/$CAP" | grep -q '"state": *"running"' || break
	sleep 0.1
done
curl -s "$URL/api/v1/captures/$CAP/folded" >"$TMP/cap.folded"
curl -s "$URL/metrics" >"$TMP/metrics"
curl -s -o "$TMP/profile.pb.gz" "$URL/debug/pprof/profile?seconds=3600"
export ESC=':\x0a<b>"x%s{}\\x7f'
LC_ALL=C awk 'index($0, ENVIRON["ESC"]) != 1' "$TMP/folded" | head -5 | sed 's/^/# other root: /'

# the escaped root frame (ESC above): ':' for ';', \x0a for the line break, \x7f for DEL; the
# rest as is
N=$(wc -l <"$TMP/folded")
check "the attacker was sampled ($N folded lines)" test "$N" -ge 1
check "folded: every line is 'STACK COUNT' (no injected line)" \
	awk '!/^[^ ].* [0-9]+$/ { bad = 1 } END { exit bad || NR == 0 }' "$TMP/folded"
# (the pid's first samples may carry the names it had before prctl: bash (the fork), setpriv, python3)
check "folded: stacks rooted at the escaped comm, none at another form of it" \
	awk 'index($0, ENVIRON["ESC"]) == 1 { n++; next } !/^(bash|setpriv|python3);/ { bad = 1 }
		END { exit bad || n == 0 }' "$TMP/folded"
check "samples: every line is 'TIME STACK COUNT' rooted at the escaped comm" \
	awk '/^#/ { next } { n++ }
		!/^[0-9]+\.[0-9]+ .* [0-9]+$/ { bad = 1 }
		index($2, ENVIRON["ESC"]) == 1 { e++; next } $2 !~ /^(bash|setpriv|python3);/ { bad = 1 }
		END { exit bad || e == 0 }' "$TMP/samples"
check "capture: stacks rooted at the escaped comm, one 'STACK COUNT' a line" \
	awk 'index($0, ENVIRON["ESC"]) == 1 && /^[^ ].* [0-9]+$/ { n++; next } { bad = 1 }
		END { exit bad || n == 0 }' "$TMP/cap.folded"
check "no raw line break or DEL from the comm anywhere in folded or samples" \
	python3 -c 'import sys
for f in sys.argv[1:]:
    d = open(f, "rb").read()
    assert b"\x7f" not in d and b"\n<b>" not in d and b";\n" not in d, f' "$TMP/folded" "$TMP/samples" "$TMP/cap.folded"
check "SVG: well-formed XML with the name escaped" python3 -c '
import sys, xml.etree.ElementTree as ET
t = ET.parse(sys.argv[1]).getroot()
titles = [e.text or "" for e in t.iter() if e.tag.endswith("title")]
assert any(s.startswith(":\\x0a<b>\"x%s{}") for s in titles), titles[:5]' "$TMP/fg.svg"
check "JSON: /api/v1/stats parses and counts the escaped comm's samples" python3 -c '
import json, sys
st = json.load(open(sys.argv[1]))
assert st["store"]["comms_escaped"] >= 1, st["store"]' "$TMP/stats.json"
check "/metrics: ember_store_escaped_comms_total > 0" \
	awk '/^ember_store_escaped_comms_total / && $2 > 0 { f = 1 } END { exit !f }' "$TMP/metrics"
# pprof: the comm label and the root frame are the escaped text (decoded by ember itself)
"$EMBER" convert --from pprof "$TMP/profile.pb.gz" >"$TMP/pprof.folded" 2>"$TMP/pprof.err"
check "pprof: no stack holds the raw name" python3 -c '
import sys
d = open(sys.argv[1], "rb").read()
assert b"\x7f" not in d and b";\n<b>" not in d
assert b":\\x0a<b>" in d, d[:300]' "$TMP/pprof.folded"
check "emberd still running" kill -0 "$EPID"
done_testing
