#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# lane: beside (checks names and escapes, not time, shares or CPU)
# Names a local user controls, with the folded separator, a TAB and bytes that are not UTF-8,
# through every output. As nobody: an executable (stripped, so that its frames are "[file]"
# frames) named "ev;il\xff\xfe-burn" (its comm too) runs in a cgroup nobody made itself in a
# subtree delegated to it (as systemd delegates to users), named "evil;\tunit\xff.service" (its
# systemd unit, as emberd reads units from cgroup paths). One rule must hold in folded (plain,
# and group_by=unit), samples, SVG, JSON (/api/v1/stats' unresolved list), pprof and OTLP: ';'
# never splits a stack (it is ':'), a control byte and a byte outside UTF-8 are "\xNN", and every
# output is valid UTF-8 (pprof's and OTLP's strings are protobuf strings). Root, BPF; ~25 s.
. "$(dirname "$0")/../lib.sh"
require_live_emberd
for t in python3 protoc setpriv strip; do command -v $t >/dev/null || skip_all "no $t"; done
BURN=$OUTPUT/workloads/burn
[ -x "$BURN" ] || { not_ok "no $BURN (make workloads)"; done_testing; }
REF=$SHARED/reference/opentelemetry-proto
[ -r "$REF/opentelemetry/proto/profiles/v1development/profiles.proto" ] ||
	skip_all "no reference OTLP schema in $REF"
D=$(dirname "$0")

# what nobody runs lives where nobody can read it (the checkout may be in a 0700 folder)
XDIR=$(mktemp -d /tmp/ember-names.XXXXXX)
chmod 0755 "$XDIR"
NAME=$(printf 'ev;il\377\376-burn')
EXE=$XDIR/$NAME
strip -o "$EXE" "$BURN" && chmod 0755 "$EXE" || { not_ok "a stripped copy of burn"; done_testing; }

V1=$XDIR/v1 # nobody must reach it
mkdir -p "$V1"
# a name of its own: a hierarchy lives on after umount while it has cgroups (a run killed
# before its cleanup), and pids come round again (pid_max 32768): "ember-names-PID" met an old
# one with its user-65534 in it
mount -t cgroup -o "none,name=ember-names-$$-$(date +%s%N)" cgroup "$V1" 2>"$TMP/mount.err" ||
	skip_all "cannot mount a named cgroup v1 hierarchy: $(cat "$TMP/mount.err")"
cleanup_v1() {
	local d
	for d in $(find "$V1" -mindepth 1 -depth -type d 2>/dev/null); do
		cat "$d/cgroup.procs" 2>/dev/null | while read -r p; do echo "$p" >"$V1/cgroup.procs"; done
		rmdir "$d" 2>/dev/null
	done
	umount "$V1" 2>/dev/null
}
trap 'stop_all; cleanup_v1; rm -rf "$XDIR"; cleanup_tmp' EXIT
# the delegation: a subtree nobody owns
mkdir "$V1/user-65534" && chown -R 65534:65534 "$V1/user-65534" ||
	{ not_ok "a delegated v1 subtree"; done_testing; }
UNIT=$(printf 'evil;\tunit\377.service')
CG=$V1/user-65534/$UNIT
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
check "nobody makes its cgroup in the delegated subtree" nobody mkdir "$CG"

RPORT=$(free_port)
RX=$TMP/rx
mkdir -p "$RX"
python3 "$D/export_receiver.py" "$RPORT" "$RX" &
PIDS+=($!)
for _ in $(seq 50); do (echo >/dev/tcp/127.0.0.1/$RPORT) 2>/dev/null && break; sleep 0.1; done
emberd_serve --frequency 99 -o "export.otlp_endpoint=http://127.0.0.1:$RPORT" \
	-o export.otlp_interval=2s -o export.service_rules=unit,exe ||
	{ not_ok "emberd starts with [export]"; done_testing; }
ok "emberd starts"
wait_log "$TMP/emberd.log" "exporting OTLP profiles" || true

# nobody moves itself into its cgroup and runs the executable
# (setpriv itself, not the function: $! is then the pid that becomes the attacker)
setpriv --reuid=65534 --regid=65534 --clear-groups \
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$1" 9' "$CG" "$EXE" >/dev/null &
P=$!
PIDS+=($P)
sleep 1
check "the attacker is named so (comm) and in its cgroup" \
	bash -c 'cmp -s <(printf "%s\n" "$1") /proc/$0/comm && grep -qF "$2" /proc/$0/cgroup' \
	"$P" "$NAME" "$(printf 'evil;\tunit\377.service')"
# the HTTP views while it runs: emberd reads a process's identity (its unit) when first asked,
# from /proc, which a process that has exited no longer has
sleep 5
curl -s "$URL/api/v1/folded?pid=$P&from=-2m" >"$TMP/folded"
curl -s "$URL/api/v1/folded?pid=$P&from=-2m&group_by=unit" >"$TMP/unit.folded"
curl -s "$URL/api/v1/samples?pid=$P&from=-2m" >"$TMP/samples"
curl -s "$URL/api/v1/flamegraph.svg?pid=$P&from=-2m" >"$TMP/fg.svg"
curl -s "$URL/api/v1/stats" >"$TMP/stats.json"
curl -s -o "$TMP/profile.pb.gz" "$URL/debug/pprof/profile?seconds=120"
wait $P 2>/dev/null
sleep 4 # a drain tick, and two OTLP intervals

# the escaped forms: literal backslashes
export COMM_ESC='ev:il\xff\xfe-burn' UNIT_ESC='evil:\x09unit\xff.service'
utf8() { python3 -c 'import sys
for f in sys.argv[1:]:
    open(f, "rb").read().decode("utf-8")' "$@"; }
# no byte of the names outside UTF-8 (and with -t, no TAB) in the files
noraw() { python3 -c 'import sys
tab = sys.argv[1] == "-t"
for f in sys.argv[1 + tab:]:
    d = open(f, "rb").read()
    assert b"\xff" not in d and b"\xfe" not in d and not (tab and b"\t" in d), f' "$@"; }
# the same in a protobuf message (whose numbers may hold any byte): the names' raw bytes
norawname() { python3 -c 'import sys
for f in sys.argv[1:]:
    d = open(f, "rb").read()
    assert b"il\xff\xfe-burn" not in d and b"unit\xff.service" not in d, f' "$@"; }

N=$(wc -l <"$TMP/folded")
check "the attacker was sampled ($N folded lines)" test "$N" -ge 1
check "folded, samples: valid UTF-8" utf8 "$TMP/folded" "$TMP/unit.folded" "$TMP/samples"
check "folded, samples: no raw byte of the names, no TAB" noraw -t "$TMP/folded" "$TMP/unit.folded" "$TMP/samples"
# (the pid's first samples may be the test's bash, setpriv or the sh that joined the cgroup)
check "folded: stacks rooted at the escaped comm, every line 'STACK COUNT'" \
	awk 'index($0, ENVIRON["COMM_ESC"] ";") == 1 && /^[^ ]+ [0-9]+$/ { n++; next }
		!/^(bash|setpriv|sh);/ { bad = 1; print "# " $0 } END { exit bad || n == 0 }' "$TMP/folded"
check "folded: the stripped executable's frames are the escaped [file] frame" \
	grep -qF "[$COMM_ESC]" "$TMP/folded"
check "group_by=unit: the unit frame escaped above the comm, the stack not split" \
	awk 'index($0, ENVIRON["UNIT_ESC"] ";" ENVIRON["COMM_ESC"] ";") == 1 && /^[^ ]+ [0-9]+$/ { n++; next }
		!/^[^;]*;(bash|setpriv|sh);/ { bad = 1; print "# " $0 } END { exit bad || n == 0 }' \
	"$TMP/unit.folded"
check "samples: 'TIME STACK COUNT' rooted at the escaped comm" \
	awk '/^#/ { next } !/^[0-9]+\.[0-9]+ [^ ]+ [0-9]+$/ { bad = 1 }
		index($2, ENVIRON["COMM_ESC"] ";") == 1 { n++ } END { exit bad || n == 0 }' "$TMP/samples"
check "SVG: well-formed XML, the comm's frame titled with its escaped name" python3 -c '
import os, sys, xml.etree.ElementTree as ET
t = ET.parse(sys.argv[1]).getroot()
titles = [e.text or "" for e in t.iter() if e.tag.endswith("title")]
assert any(s.startswith(os.environ["COMM_ESC"] + " (") for s in titles), titles[:5]' "$TMP/fg.svg"
# the unresolved list: the frame as the graphs show it, the path as JSON writes any string
check "JSON: /api/v1/stats is valid UTF-8 JSON, the unresolved file escaped by the same rule" \
	python3 -c '
import json, os, sys
raw = open(sys.argv[1], "rb").read()
st = json.loads(raw.decode("utf-8"))
strs = []
def walk(o):
    if isinstance(o, dict): [walk(v) for v in o.values()]
    elif isinstance(o, list): [walk(v) for v in o]
    elif isinstance(o, str): strs.append(o)
walk(st)
assert "[" + os.environ["COMM_ESC"] + "]" in strs, "no escaped frame in stats"
assert sys.argv[2] + "/ev;il\\xff\\xfe-burn" in strs, "no escaped path in stats"' \
	"$TMP/stats.json" "$XDIR"

# pprof: the strings of the message, decoded by protoc, and the frames as ember reads them back
zcat "$TMP/profile.pb.gz" >"$TMP/profile.pb"
check "pprof: no raw form of the names in the message" norawname "$TMP/profile.pb"
"$EMBER" convert --from pprof "$TMP/profile.pb.gz" >"$TMP/pprof.folded" 2>"$TMP/pprof.err"
check "pprof: the escaped comm root and [file] frame read back" \
	sh -c 'grep -qF "$0;[$0];" "$1"' "$COMM_ESC" "$TMP/pprof.folded"

# OTLP: the bodies decode with the reference schema (protoc refuses a string that is not UTF-8)
: >"$TMP/decoded"
bad=0
for m in "$RX"/*.meta; do
	f=${m%.meta}.body
	[ -f "$f" ] || continue
	if zcat "$f" | protoc -I "$REF" --decode \
		opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest \
		opentelemetry/proto/collector/profiles/v1development/profiles_service.proto \
		>"$f.txt" 2>"$f.err"; then
		echo "$f.txt" >>"$TMP/decoded"
	else
		bad=$((bad + 1))
		sed 's/^/# protoc: /' "$f.err" | head -3
	fi
done
check "otlp: every body decodes with the reference schema ($bad did not)" \
	test -s "$TMP/decoded" -a "$bad" -eq 0
python3 "$D/otlp_check.py" "$TMP/otlp" $(cat "$TMP/decoded") >"$TMP/check.out"
check "otlp: checked ($(cat "$TMP/check.out"))" grep -q '^ok' "$TMP/check.out"
for m in "$RX"/*.meta; do [ -f "${m%.meta}.body" ] && zcat "${m%.meta}.body"; done >"$TMP/otlp.raw"
# (a TAB may stay in an attribute's value, the unit's: valid UTF-8, in no frame)
check "otlp: no raw form of the names in any request" norawname "$TMP/otlp.raw"
check "otlp: the sample's thread and frames carry the escaped names" \
	awk -v p=$P '$2 == p && index($4, ENVIRON["COMM_ESC"] ";") == 1 { n++ } END { exit n == 0 }' \
	"$TMP/otlp"
check "otlp: the resource's executable path is escaped by the same rule" \
	env WANT="$XDIR/ev;il\\xff\\xfe-burn" \
	awk -v p=$P '$1 == p && $2 == ENVIRON["WANT"] { f = 1 } END { exit !f }' \
	"$TMP/otlp.res"
check "emberd still running" kill -0 "$EPID"
done_testing
