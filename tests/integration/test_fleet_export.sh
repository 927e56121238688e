#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# emberd pushes OTLP profiles and Pyroscope profiles with workload identity (root, BPF).
# A receiver of the test's own (export_receiver.py) takes the posts. Four tests/workloads/burn
# run in cgroups made here under the cgroup2 mount, shaped like docker's (cgroupfs driver:
# docker/ID), containerd's (default/ID), kubepods' (systemd driver:
# kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podUID.slice/cri-containerd-ID.scope)
# and a systemd service's (system.slice/ember-fake.service).
#   1. Every OTLP body decodes with `protoc --decode` against ../shared/reference's schema; entry
#      0 of every table is the zero value, every index in range (otlp_check.py); for the
#      exported window the samples equal /api/v1/samples' (every timestamp, every stack by its
#      names), per pid and per thread; build ids equal `readelf -n`'s; container.id, k8s.pod.uid
#      and service.name are the cgroups'; the HTTP filters container=, unit=, service= and
#      group_by= select the same samples.
#   2. Pyroscope: the request shape (name{labels}, from, until, sampleRate, spyName, format,
#      X-Scope-OrgID, bearer auth from a file); each pprof body read by `go tool pprof -raw`, the
#      totals per service equal emberd's folded output.
#   3. Faults: 503 for 8 s (export.retry_max 2 s stands for the issue's 30 s: the same backoff
#      path, shorter) then recovery loses nothing; a longer outage with a small queue drops
#      batches, counted, and the rest arrives; a receiver that never answers and one that
#      trickles are timed out while sampling loses nothing; 413 makes emberd split.
. "$(dirname "$0")/../lib.sh"
require_live_emberd
for t in python3 protoc readelf; do command -v $t >/dev/null || skip_all "no $t"; done
BURN=$OUTPUT/workloads/burn
[ -x "$BURN" ] || { not_ok "no $BURN (make workloads)"; done_testing; }
REF=$SHARED/reference/opentelemetry-proto
[ -r "$REF/opentelemetry/proto/profiles/v1development/profiles.proto" ] ||
	skip_all "no reference OTLP schema in $REF"
CG2=$(cgroup2_mount)
[ -n "$CG2" ] || skip_all "no cgroup2 mount"
D=$(dirname "$0")
export HOME=${HOME:-/root} GOCACHE=${GOCACHE:-$OUTPUT/go-cache} PPROF_TMPDIR=$TMP/pprof GOFLAGS=

BASE=$CG2/ember-test-$$
hexid() { od -An -N32 -tx1 /dev/urandom | tr -d ' \n'; }
DOCKER=$(hexid) CTRD=$(hexid) K8S=$(hexid)
POD=0f3c6a1e-5b2d-4c8e-9a7f-$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')
CG_DOCKER=$BASE/docker/$DOCKER
CG_CTRD=$BASE/default/$CTRD
CG_K8S=$BASE/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${POD//-/_}.slice/cri-containerd-$K8S.scope
CG_UNIT=$BASE/system.slice/ember-fake.service
cleanup_cg() {
	local d
	[ -d "$BASE" ] || return 0
	for d in $(find "$BASE" -depth -type d); do
		cat "$d/cgroup.procs" 2>/dev/null | while read -r p; do echo "$p" >"$CG2/cgroup.procs"; done
		rmdir "$d" 2>/dev/null
	done
}
trap 'stop_all; cleanup_cg; cleanup_tmp' EXIT
mkdir -p "$CG_DOCKER" "$CG_CTRD" "$CG_K8S" "$CG_UNIT" || skip_all "cannot make cgroups under $CG2"

# in_cgroup DIR CMD...: CMD in cgroup DIR, in the background (its pid in $!). The sh spins
# ~50 ms first, in the test's own cgroup, so that every pid has samples of its sh before the
# move and the exec (what a container runtime's shim does too): those samples belong to the
# test's cgroup and to sh, not to the container nor to burn. Without the spin a 1-ms sh was
# sampled now and then (3 runs in ~9), and emberd named the sh's samples with the executable
# that /proc showed when the exporter looked (burn): the pid's first resource then was burn's
# without container.id.
in_cgroup() {
	local d=$1
	shift
	sh -c 'i=0; while [ $i -lt 40000 ]; do i=$((i + 1)); done
		echo $$ >"$0/cgroup.procs" && exec "$@"' "$d" "$@" &
}

RPORT=$(free_port)
RX=$TMP/rx
mkdir -p "$RX"
python3 "$D/export_receiver.py" "$RPORT" "$RX" &
PIDS+=($!)
for _ in $(seq 50); do (echo >/dev/tcp/127.0.0.1/$RPORT) 2>/dev/null && break; sleep 0.1; done
printf 's3cret-token\n' >"$TMP/token"
chmod 600 "$TMP/token"

stat_json() { curl -sf "$URL/api/v1/stats"; }
# ex FIELD [KIND]: an exporter counter from /api/v1/stats (failed.X for a failure reason)
ex() {
	stat_json | python3 -c 'import json, sys
e = json.load(sys.stdin)["export"][sys.argv[2]]
for k in sys.argv[1].split("."): e = e[k]
print(e)' "$1" "${2:-otlp}"
}
# wait_for EXPR SECONDS: until the shell expression holds
wait_for() { for _ in $(seq $(($2 * 5))); do eval "$1" && return 0; sleep 0.2; done; return 1; }
# decode: every OTLP body received so far (2xx) as protoc text, listed in $TMP/decoded
decode() {
	local f m n=0
	: >"$TMP/decoded"
	for m in "$RX"/*.meta; do
		f=${m%.meta}.body
		[ -f "$f" ] && grep -q '"/v1development/profiles"' "$m" || continue
		zcat "$f" | protoc -I "$REF" --decode \
			opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest \
			opentelemetry/proto/collector/profiles/v1development/profiles_service.proto \
			>"$f.txt" 2>"$f.err" || { echo "# $f: $(cat "$f.err")"; return 1; }
		echo "$f.txt" >>"$TMP/decoded"
		n=$((n + 1))
	done
	[ "$n" -gt 0 ]
}
# folded_total QUERY: the samples of /api/v1/folded?QUERY
folded_total() { curl -sf "$URL/api/v1/folded?$1" | awk '{ n += $NF } END { print n + 0 }'; }

# --- 0: proto/otlp.proto has the reference's field numbers, types and labels ---------------------
DS=/usr/include/google/protobuf/descriptor.proto
if [ -r "$DS" ]; then
	protoc -I "$REF" --include_imports --descriptor_set_out="$TMP/ref.pb" \
		opentelemetry/proto/collector/profiles/v1development/profiles_service.proto &&
		protoc -I "$SRCDIR/proto" --descriptor_set_out="$TMP/ours.pb" otlp.proto &&
		protoc -I /usr/include --decode=google.protobuf.FileDescriptorSet \
			google/protobuf/descriptor.proto <"$TMP/ours.pb" >"$TMP/ours.txt" &&
		protoc -I /usr/include --decode=google.protobuf.FileDescriptorSet \
			google/protobuf/descriptor.proto <"$TMP/ref.pb" >"$TMP/ref.txt"
	if out=$(python3 "$D/proto_check.py" "$TMP/ours.txt" "$TMP/ref.txt"); then
		ok "proto/otlp.proto matches the reference schema ($out)"
	else
		not_ok "proto/otlp.proto differs from the reference: $out"
	fi
else
	skip "proto/otlp.proto against the reference" "no $DS (protobuf-compiler)"
fi

# --- 1 and 2: OTLP and Pyroscope, identity ----------------------------------------------------
emberd_serve --frequency 99 -o "export.otlp_endpoint=http://127.0.0.1:$RPORT" \
	-o export.otlp_interval=2s -o "export.pyroscope_url=http://127.0.0.1:$RPORT/" \
	-o export.pyroscope_interval=2s -o export.pyroscope_tenant=team-a \
	-o "export.bearer_token_file=$TMP/token" -o export.service_rules=unit,container,regex,exe \
	-o "export.service_regex=nope=^x\$ burner=^(bz$$|bzz)\$" ||
	{ not_ok "emberd starts with [export]"; done_testing; }
# the exporter starts after the HTTP server: the burners after it, so that all they run is sent;
# 14 s, so that the window 5 s inside what was exported (below) holds ~4 s of them
check "log: exporting to the receiver" wait_log "$TMP/emberd.log" "exporting OTLP profiles to http://127.0.0.1:$RPORT"
in_cgroup "$CG_DOCKER" "$BURN" 14 >/dev/null; P_DOCKER=$!
in_cgroup "$CG_CTRD" "$BURN" 14 >/dev/null; P_CTRD=$!
in_cgroup "$CG_K8S" "$BURN" 14 >/dev/null; P_K8S=$!
in_cgroup "$CG_UNIT" "$BURN" 14 >/dev/null; P_UNIT=$!
# and one in no container nor unit: service.name by export.service_regex on its comm (a copy of
# burn named for this run: another test's burn on the machine is not this one)
cp "$BURN" "$TMP/bz$$"
"$TMP/bz$$" 14 >/dev/null &
P_PLAIN=$!
PIDS+=($P_DOCKER $P_CTRD $P_K8S $P_UNIT $P_PLAIN)
wait $P_DOCKER $P_CTRD $P_K8S $P_UNIT $P_PLAIN 2>/dev/null
# their last samples: drained (<= 2 ticks, longer when loaded), then sent (2 s rounds)
sleep 8
check "otlp: posts accepted" test "$(ex requests)" -ge 2
check "otlp: nothing failed or dropped" test "$(ex dropped)" = 0 -a "$(ex failed.http_4xx)" = 0
check "otlp: every body decodes with the reference schema" decode
meta=$(ls "$RX"/*.meta | head -1)
check "otlp: POST /v1development/profiles, protobuf, gzip" python3 -c '
import json, sys
for f in sys.argv[1:]:
    m = json.load(open(f))
    if m["path"] != "/v1development/profiles": continue
    h = m["headers"]
    assert h["Content-Type"] == "application/x-protobuf" and h["Content-Encoding"] == "gzip", h
' "$RX"/*.meta
if python3 "$D/otlp_check.py" "$TMP/otlp" $(cat "$TMP/decoded") >"$TMP/check.out"; then
	ok "otlp: entry 0 zero in every table, indices in range ($(cat "$TMP/check.out"))"
else
	not_ok "otlp: $(cat "$TMP/check.out")"
fi
read -r _ N T0 T1 <"$TMP/check.out"
# The same window from emberd's own API: TIME_US STACK per sample. The exporter takes what was
# appended to the store since its last round (late samples too); a window 5 s inside the
# exported times is one whose every sample had reached the store before the last round (the
# drain's delay is ~2 ticks) and none before the exporter started.
# The bounds sit half-way between two microseconds (the store's resolution): cpu-clock fires at
# exact periods, so a sample 5 s before the last one is common, and a bound on it was read as
# inside by one side and outside by the other (a fresh-clone run: 1 sample only in the API).
W0=$(((T0 + 5000000000) / 1000 * 1000 + 500)) W1=$(((T1 - 5000000000) / 1000 * 1000 + 500))
fmt() { echo "$(($1 / 1000000000)).$(printf %09d $(($1 % 1000000000)))"; }
curl -sf "$URL/api/v1/samples?from=$(fmt $W0)&to=$(fmt $W1)" >"$TMP/api.samples"
python3 - "$TMP/api.samples" "$TMP/otlp" "$W0" "$W1" >"$TMP/cmp.out" <<'EOF'
import collections, sys
api, otlp = collections.Counter(), collections.Counter()
w0, w1 = int(sys.argv[3]), int(sys.argv[4])
for line in open(sys.argv[1]):
    if line.startswith("#"): continue
    t, rest = line.rstrip("\n").split(" ", 1)
    stack, n = rest.rsplit(" ", 1)
    s, f = t.split(".")
    api["%s%s %s" % (s, f[:6], stack)] += int(n)
for line in open(sys.argv[2]):
    t, pid, tid, stack = line.rstrip("\n").split(" ", 3)
    if w0 <= int(t) * 1000 < w1:
        otlp["%s %s" % (t, stack)] += 1
print(sum(api.values()), sum(otlp.values()), len(api - otlp), len(otlp - api))
# each differing sample: its time and the frames where the two stacks part
only_o = {}
for k in (otlp - api).keys():
    only_o.setdefault(k.split(" ", 1)[0], k.split(" ", 1)[1])
for k in list((api - otlp).keys())[:4]:
    t, a = k.split(" ", 1)
    o = only_o.get(t)
    if o is None:
        print("# api only:", k[:300]); continue
    fa, fo = a.split(";"), o.split(";")
    i = 0
    while i < min(len(fa), len(fo)) and fa[i] == fo[i]: i += 1
    print("# %s: from frame %d (%s), api %s | otlp %s" % (t, i, fa[0], ";".join(fa[i:i + 3])[:300], ";".join(fo[i:i + 3])[:300]))
EOF
read -r NA NO MA MO <"$TMP/cmp.out"
if [ "$NA" -gt 100 ] && [ "$NA" = "$NO" ] && [ "$MA" = 0 ] && [ "$MO" = 0 ]; then
	ok "otlp: the window's samples equal /api/v1/samples' ($NA samples in $(((W1 - W0) / 1000000)) ms: timestamps and stacks)"
else
	not_ok "otlp: api $NA samples, otlp $NO; $MA only in the API, $MO only in OTLP"
	grep '^#' "$TMP/cmp.out"
fi
# per pid and thread, every sample of the burners' lives (they started after the exporter and
# ended 8 s ago): burn is one thread (tid = pid)
for p in $P_DOCKER $P_CTRD $P_K8S $P_UNIT; do
	n_api=$(curl -sf "$URL/api/v1/samples?pid=$p&tid=$p&from=-5m" | awk '!/^#/ { n += $NF } END { print n + 0 }')
	n_otlp=$(awk -v p=$p '$2 == p && $3 == p' "$TMP/otlp" | wc -l)
	check "otlp: pid/thread $p: $n_otlp samples, the API's $n_api" test "$n_api" -gt 20 -a "$n_api" = "$n_otlp"
done
# build ids
bad=0 nb=0
while read -r pid path bid _; do
	[ "$bid" != - ] && [ -r "$path" ] || continue
	# a binary rebuilt since its process started: the process maps the old file (emberd's
	# build id is that one's), the path names the new one; and a process gone since (another
	# job's emberd, rebuilt and stopped during a fresh-clone run): which file it ran is unknown
	[ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$path" ] || continue
	want=$(readelf -n "$path" 2>/dev/null | awk '/Build ID/ { print $3; exit }')
	nb=$((nb + 1))
	[ "$want" = "$bid" ] || { bad=$((bad + 1)); echo "# $path: $bid, readelf $want"; }
done <"$TMP/otlp.res"
check "otlp: build ids equal readelf -n ($nb resources)" test "$nb" -gt 0 -a "$bad" = 0
# the executables' build-ids: from the symbolizer's images where it read them (elfshare), not
# read from the file again (the burners are sampled before the exporter asks for their resource)
IR=$(ex build_ids_read identity) IB=$(ex build_ids_borrowed identity)
check "identity: executables' build-ids borrowed from the symbolizer's images ($IB borrowed, $IR read)" \
	test "${IB:-0}" -gt 0
# symbolized native frames: a Mapping of their file with its build id, the function's start as
# the address (the symbol's value through its PT_LOAD segment, by readelf -sW and -lW)
python3 - "$TMP/otlp.maps" "$P_DOCKER $P_CTRD $P_K8S $P_UNIT" >"$TMP/maps.out" <<'EOF2'
import os, re, subprocess, sys
burners = set(sys.argv[2].split())
elf = {}
def facts(path):
    if path not in elf:
        segs, syms = [], {}
        bid = re.search(r"Build ID: ([0-9a-f]+)", subprocess.run(["readelf", "-n", path],
                        capture_output=True, text=True).stdout)
        for l in subprocess.run(["readelf", "-lW", path], capture_output=True, text=True).stdout.splitlines():
            f = l.split()
            if f and f[0] == "LOAD":
                segs.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))  # off, vaddr, filesz
        # the symbols of the file and of its separate debug file (by build id), as emberd reads them
        files = [path]
        if bid:
            files.append("/usr/lib/debug/.build-id/%s/%s.debug" % (bid.group(1)[:2], bid.group(1)[2:]))
        lines = []
        for f in files:
            if os.path.isfile(f):
                lines += subprocess.run(["readelf", "-sW", f], capture_output=True, text=True).stdout.splitlines()
        for l in lines:
            f = l.split()
            if len(f) >= 8 and f[3] in ("FUNC", "IFUNC"):
                v = int(f[1], 16)
                for off, va, sz in segs:
                    if va <= v < va + sz:
                        syms.setdefault(f[7].split("@")[0], set()).add(off + v - va)
        elf[path] = (bid.group(1) if bid else "-", syms)
    return elf[path]
good = bad = burn = 0
for line in open(sys.argv[1]):
    pid, name, path, bid, addr = line.split()
    if not os.path.isfile(path) or os.readlink("/proc/self/exe") == path:
        continue
    want_bid, syms = facts(path)
    if bid != want_bid and pid not in burners:
        # a file rebuilt since its process mapped it (another emberd of the machine): the
        # process maps the old one, which the path no longer names (the burners' never is)
        try:
            if (path + " (deleted)") in open("/proc/%s/maps" % pid).read():
                continue
        except OSError:
            continue
    if bid == want_bid and int(addr, 16) in syms.get(name, ()):
        good += 1
        burn += pid in burners and path.endswith("/burn")
    else:
        bad += 1
        print("# %s %s in %s: build id %s address %s; readelf: %s %s" % (pid, name, path, bid, addr,
              want_bid, sorted(hex(x) for x in syms.get(name, ()))[:3]))
print(good, bad, burn)
EOF2
read -r mg mb mburn < <(tail -1 "$TMP/maps.out")
grep '^#' "$TMP/maps.out" | head -5
check "otlp: symbolized native frames carry their file, build id and offset ($mg frames, $mburn of burn; $mb wrong)" \
	test "$mg" -gt 0 -a "$mburn" -ge 3 -a "$mb" = 0
# the files of those frames: the symbolizer's images borrowed (elfshare), not parsed again
FF=$(ex frame_files) FB=$(ex frame_files_borrowed)
echo "# frameloc: $(for k in frames_located frames_unlocated frame_files_unshared frame_files_deferred frame_images_kept frame_images_kept_found; do printf '%s=%s ' $k "$(ex $k)"; done)"
check "otlp: the frames' files are the symbolizer's images, borrowed, none parsed again ($FB of $FF files read)" \
	test "${FB:-0}" -gt 0 -a "${FB:-0}" = "${FF:-x}"
# identity
# (the burner's resource: before its exec the pid was the sh that moved it into the cgroup)
res() { awk -v p=$1 '$1 == p && $2 ~ /\/(burn|bz[0-9]+)$/ { print; exit }' "$TMP/otlp.res"; }
for p in "docker $P_DOCKER $DOCKER" "containerd $P_CTRD $CTRD" "kubepods $P_K8S $K8S" "unit $P_UNIT -"; do
	set -- $p
	echo "# identity $1: pid $2 wants container $3; resource: $(res $2 | cut -d' ' -f1,4-)"
done
check "identity: docker/ID: container.id, service.name" test "$(res $P_DOCKER | cut -d' ' -f4,6)" = "$DOCKER ${DOCKER:0:12}"
check "identity: default/ID (containerd): container.id" test "$(res $P_CTRD | cut -d' ' -f4,6)" = "$CTRD ${CTRD:0:12}"
check "identity: kubepods: container.id, k8s.pod.uid" test "$(res $P_K8S | cut -d' ' -f4,5,6)" = "$K8S $POD ${K8S:0:12}"
check "identity: system.slice/ember-fake.service: service.name ember-fake" test "$(res $P_UNIT | cut -d' ' -f4,6)" = "- ember-fake"
check "identity: export.service_regex names the plain burner 'burner'" test "$(res $P_PLAIN | cut -d' ' -f4,6)" = "- burner"
n_p=$(awk -v p=$P_PLAIN -v c="bz$$" '$2 == p && index($4, c ";") == 1' "$TMP/otlp" | wc -l)
n_re=$(folded_total "service=burner&from=-5m")
check "http: service=burner: its $n_re samples, the plain burner's $n_p" test "$n_p" -gt 20 -a "$n_re" = "$n_p"
# the pid's samples in the cgroup: burn's (the sh before them ran in the test's cgroup)
n_d=$(awk -v p=$P_DOCKER '$2 == p && $4 ~ /^burn;/' "$TMP/otlp" | wc -l)
n_u=$(awk -v p=$P_UNIT '$2 == p && $4 ~ /^burn;/' "$TMP/otlp" | wc -l)
n_k=$(awk -v p=$P_K8S '$2 == p && $4 ~ /^burn;/' "$TMP/otlp" | wc -l)
n_sh=$(awk -v a=$P_DOCKER -v b=$P_CTRD -v c=$P_K8S -v d=$P_UNIT \
	'($2 == a || $2 == b || $2 == c || $2 == d) && $4 ~ /^sh;/' "$TMP/otlp" | wc -l)
check "identity: the burners' sh sampled before the move ($n_sh samples)" test "$n_sh" -gt 0
bad_sh=$(awk -v a=$P_DOCKER -v b=$P_CTRD -v c=$P_K8S -v d=$P_UNIT '$2 ~ /\/burn$/ &&
	(($1 == a || $1 == b || $1 == c) && $4 == "-" || $1 == d && $6 != "ember-fake")' "$TMP/otlp.res" | wc -l)
check "identity: no resource names burn without its cgroup's identity ($bad_sh)" test "$bad_sh" = 0
# burn's samples only, as n_* count them: the sh that moved itself into the cgroup is in it
# until its exec (a sample of sh there, in the unit, once: fresh-clone run O, 488 for 487)
W="from=-5m&comm=%5Eburn%24"
check "http: container=ID selects its samples ($n_d)" test "$(folded_total "container=$DOCKER&$W")" = "$n_d"
check "http: container=PREFIX too" test "$(folded_total "container=${DOCKER:0:12}&$W")" = "$n_d"
check "http: unit=ember-fake.service ($n_u)" test "$(folded_total "unit=ember-fake.service&$W")" = "$n_u"
check "http: service=ember-fake ($n_u)" test "$(folded_total "service=ember-fake&$W")" = "$n_u"
check "http: container= on /api/v1/samples" test "$(curl -sf "$URL/api/v1/samples?container=$K8S&$W" | awk '!/^#/ { n += $NF } END { print n + 0 }')" = "$n_k"
curl -sf "$URL/api/v1/folded?group_by=container&$W" >"$TMP/grouped"
check "http: group_by=container: the container above the root" test "$(grep "^${K8S:0:12};" "$TMP/grouped" | awk '{ n += $NF } END { print n + 0 }')" = "$n_k"
check "http: group_by=pod" grep -q "^$POD;burn;" <(curl -sf "$URL/api/v1/folded?group_by=pod&$W")
code=$(curl -s -o /dev/null -w '%{http_code}' "$URL/api/v1/folded?group_by=nope")
check "http: group_by=nope is a 400" test "$code" = 400
code=$(curl -s -o /dev/null -w '%{http_code}' "$URL/api/v1/folded?container=xyz")
check "http: container=xyz is a 400" test "$code" = 400

# Pyroscope: the request shape and the bodies
python3 - "$RX" >"$TMP/pyro.out" <<'EOF'
import glob, json, os, re, sys, urllib.parse
rx = sys.argv[1]
for m in sorted(glob.glob(rx + "/*.meta")):
    meta = json.load(open(m))
    if not meta["path"].startswith("/ingest?"): continue
    q = urllib.parse.parse_qs(meta["path"].split("?", 1)[1])
    h = meta["headers"]
    assert h.get("X-Scope-Orgid", h.get("X-Scope-OrgID")) == "team-a", h
    assert h["Authorization"] == "Bearer s3cret-token", h
    assert h["Content-Type"].startswith("multipart/form-data; boundary="), h
    name = q["name"][0]
    assert re.match(r"^[^{]+\.cpu\{service_name=[^,}]+(,[a-z_]+=[^,}]+)*\}$", name), name
    frm, until = int(q["from"][0]), int(q["until"][0])
    assert 0 < frm <= until and q["sampleRate"] == ["99"] and q["spyName"] == ["ember"], q
    assert q["format"] == ["pprof"], q
    body = open(m[:-5] + ".body", "rb").read()
    boundary = h["Content-Type"].split("boundary=")[1].encode()
    part = body.split(b"--" + boundary)[1]
    assert b'name="profile"' in part, part[:200]
    data = part.split(b"\r\n\r\n", 1)[1].rsplit(b"\r\n", 1)[0]
    out = m[:-5] + ".pprof"
    open(out, "wb").write(data)
    svc = re.search(r"service_name=([^,}]+)", name).group(1)
    print(svc, out)
EOF
if [ $? = 0 ] && [ -s "$TMP/pyro.out" ]; then
	ok "pyroscope: query parameters, tenant, bearer token, multipart profile ($(wc -l <"$TMP/pyro.out") posts)"
else
	not_ok "pyroscope: request shape"
	head -5 "$TMP/pyro.out"
fi
if command -v go >/dev/null; then
	for svc in ${DOCKER:0:12} ember-fake; do
		tot=0
		for f in $(awk -v s=$svc '$1 == s { print $2 }' "$TMP/pyro.out"); do
			n=$(go tool pprof -raw "$f" 2>/dev/null | awk '/^Samples:/ { s = 1; next } s && /^ *[0-9]+ +[0-9]+:/ { n += $1 } /^Locations/ { s = 0 } END { print n + 0 }')
			tot=$((tot + n))
		done
		want=$(folded_total "service=$svc&from=-5m")
		check "pyroscope: $svc: go tool pprof -raw totals $tot = folded $want" test "$tot" -gt 20 -a "$tot" = "$want"
	done
else
	skip "pyroscope: go tool pprof" "no go"
fi
# the credentials file is read at each post: one longer than a token (4095 bytes) is refused, not
# cut, said once in the log, and the posts go without it; a good one again is used again
# auth_of: the Authorization header of each post whose meta file is newer than FILE ("-" if none)
auth_of() { find "$RX" -name '*.meta' -newer "$1" -exec python3 -c '
import json, sys
for f in sys.argv[1:]: print(json.load(open(f))["headers"].get("Authorization", "-"))' {} +; }
head -c 5000 /dev/zero | tr '\0' x >"$TMP/token"
check "credentials: a token file longer than 4095 bytes is said in the log" \
	wait_log "$TMP/emberd.log" "longer than 4095 bytes: sending without them"
touch "$TMP/t.long"
# more posts, each reading the file again: three after the long file
posts_since() { find "$RX" -name '*.meta' -newer "$1" | wc -l; }
wait_for '[ "$(posts_since "$TMP/t.long")" -ge 3 ]' 15
check "credentials: said once, not at every post ($(posts_since "$TMP/t.long") posts since)" \
	test "$(grep -c 'longer than 4095 bytes' "$TMP/emberd.log")" = 1
check "credentials: posts after it carry no Authorization (never a cut token)" \
	eval '[ "$(auth_of "$TMP/t.long" | sort -u | tr "\n" " ")" = "- " ]'
touch "$TMP/t.good"
printf 's3cret-token\n' >"$TMP/token"
check "credentials: the good file again: posts carry the token again" \
	wait_for 'auth_of "$TMP/t.good" | grep -qx "Bearer s3cret-token"' 15
stop_all
PIDS=()
python3 "$D/export_receiver.py" "$RPORT" "$RX" &
PIDS+=($!)
for _ in $(seq 50); do (echo >/dev/tcp/127.0.0.1/$RPORT) 2>/dev/null && break; sleep 0.1; done

# --- 3: faults ------------------------------------------------------------------------------
# fresh_rx: empties the receiver's folder
fresh_rx() { rm -f "$RX"/*; echo "${1:-ok}" >"$RX/mode"; }
# received: samples in the accepted OTLP bodies, and their window (otlp_check.py's "ok N T0 T1")
received() { decode && python3 "$D/otlp_check.py" "$TMP/f" $(cat "$TMP/decoded"); }
lost() { stat_json | python3 -c 'import json, sys; print(json.load(sys.stdin)["sampler"]["lost"])'; }
# the main loop publishes its counters each tick: the first copy
published() { wait_for 'stat_json | grep -q "\"export\": {"' 10; }

fresh_rx 503
"$BURN" 60 >/dev/null &
PIDS+=($!)
emberd_serve --frequency 99 -o "export.otlp_endpoint=http://127.0.0.1:$RPORT" \
	-o export.otlp_interval=2s -o export.retry_max=2s -o export.timeout=2s ||
	{ not_ok "emberd starts"; done_testing; }
published
lost0=$(lost)
check "outage: 503s counted and retried" \
	wait_for '[ "$(ex failed.http_5xx)" -gt 2 ] && [ "$(ex retries)" -gt 2 ]' 20
echo ok >"$RX/mode"
wait_for '[ "$(ex queued)" = 0 ] && [ "$(ex requests)" -ge 4 ]' 20
# three more rounds after the recovery, so that what arrived spans more than the two 5 s margins
# (the queue can empty within a round of the outage's end: a window of ~0 s, 0 samples, once)
r0=$(ex requests)
wait_for '[ "$(ex requests)" -ge $((r0 + 3)) ] && [ "$(ex queued)" = 0 ]' 20
read -r _ n t0 t1 < <(received)
# as above: the window 5 s inside what arrived
w0=$(((t0 + 5000000000) / 1000 * 1000 + 500)) w1=$(((t1 - 5000000000) / 1000 * 1000 + 500))
n=$(awk -v a=$((w0 / 1000 + 1)) -v b=$((w1 / 1000 + 1)) '$1 >= a && $1 < b' "$TMP/f" | wc -l)
want=$(folded_total "from=$(fmt $w0)&to=$(fmt $w1)")
check "outage: 8 s of 503 then recovery: nothing dropped, $n samples arrived = the store's $want" \
	test "$(ex dropped)" = 0 -a "$n" -gt 50 -a "$n" = "$want"

# a receiver that never answers, then one that trickles: timed out, sampling loses nothing
echo hang >"$RX/mode"
s0=$(ex samples) t_0=$(ex failed.timeout)
check "hang: requests timed out" wait_for '[ "$(ex failed.timeout)" -gt "$t_0" ]' 20
echo trickle >"$RX/mode"
t_1=$(ex failed.timeout)
check "trickle: requests timed out" wait_for '[ "$(ex failed.timeout)" -gt "$t_1" ]' 20
check "hang, trickle: 0 samples lost by the sampler meanwhile" test "$(lost)" = "$lost0"
echo ok >"$RX/mode"
wait_for '[ "$(ex queued)" = 0 ]' 20
check "hang, trickle: then everything queued arrives" test "$(ex queued)" = 0 -a "$(ex dropped)" = 0

# 413: emberd splits the message
fresh_rx 413big
sp0=$(ex splits)
wait_for '[ "$(ex splits)" -gt "$sp0" ]' 12
check "413: the message was split ($(($(ex splits) - sp0)) splits)" test "$(ex splits)" -gt "$sp0"
check "413: the halves were accepted" wait_for '[ -n "$(ls "$RX"/*.body 2>/dev/null)" ]' 10
check "413: the halves decode, their pruned dictionaries in range" eval "received >/dev/null"
check "413: nothing dropped" test "$(ex dropped)" = 0
grep "cannot be split" "$TMP/emberd.log" | head -3 | sed 's/^/# /'
stop_all
PIDS=()

# a longer outage with a queue of 64 KiB: the oldest batches are dropped, counted; the rest arrives
python3 "$D/export_receiver.py" "$RPORT" "$RX" &
PIDS+=($!)
for _ in $(seq 50); do (echo >/dev/tcp/127.0.0.1/$RPORT) 2>/dev/null && break; sleep 0.1; done
fresh_rx 503
"$BURN" 60 4 >/dev/null &
PIDS+=($!)
printf '[export]\notlp_endpoint = http://127.0.0.1:%s\notlp_interval = 1s\nretry_max = 1s\nqueue_memory = 64K\n' \
	"$RPORT" >"$TMP/export.conf"
emberd_serve --frequency 999 --config "$TMP/export.conf" ||
	{ not_ok "emberd starts"; done_testing; }
published
wait_for '[ "$(ex dropped)" -gt 0 ]' 25
check "long outage: batches dropped past the bound, counted ($(ex dropped) batches, $(ex dropped_samples) samples)" \
	test "$(ex dropped)" -gt 0 -a "$(ex dropped_samples)" -gt 0
echo ok >"$RX/mode"
wait_for '[ "$(ex queued)" = 0 ] && [ "$(ex requests)" -ge 3 ]' 20
echo 503 >"$RX/mode" # freeze: what arrived and what emberd counts as sent, at rest
sleep 3
read -r _ n t0 t1 < <(received)
check "long outage: the rest arrives (received $n = sent $(ex samples))" test "$n" -gt 0 -a "$n" = "$(ex samples)"
curl -sf "$URL/metrics" >"$TMP/metrics"
check "metrics: ember_export_dropped_samples_total" grep -q '^ember_export_dropped_samples_total{exporter="otlp"} [1-9]' "$TMP/metrics"
check "metrics: ember_export_failures_total by reason" grep -q '^ember_export_failures_total{exporter="otlp",reason="http_5xx"} [1-9]' "$TMP/metrics"

# SIGHUP: [export] is live; an empty endpoint turns the OTLP exporter off
printf '[export]\notlp_endpoint =\n' >"$TMP/export.conf"
kill -HUP "$EPID"
wait_for 'grep -q "reload:" "$TMP/emberd.log"' 10
wait_for '[ "$(ex enabled)" = False ]' 10
check "SIGHUP: export.otlp_endpoint emptied turns the exporter off" test "$(ex enabled)" = False
stop_all
PIDS=()

# TLS: the receiver's certificate verified with export.ca_file, and a client certificate
if command -v openssl >/dev/null; then
	openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -days 1 \
		-addext "subjectAltName=IP:127.0.0.1" -keyout "$TMP/tls.key" -out "$TMP/tls.crt" \
		>/dev/null 2>&1
	chmod 600 "$TMP/tls.key"
	fresh_rx ok
	python3 "$D/export_receiver.py" "$RPORT" "$RX" "$TMP/tls.crt" "$TMP/tls.key" &
	PIDS+=($!)
	for _ in $(seq 50); do (echo >/dev/tcp/127.0.0.1/$RPORT) 2>/dev/null && break; sleep 0.1; done
	emberd_serve -o "export.otlp_endpoint=https://127.0.0.1:$RPORT" -o export.otlp_interval=1s \
		-o "export.ca_file=$TMP/tls.crt" \
		-o "export.client_cert=$TMP/tls.crt" -o "export.client_key=$TMP/tls.key" ||
		{ not_ok "emberd starts with TLS settings"; done_testing; }
	published
	check "TLS: the CA bundle verifies the receiver, the client certificate is accepted" \
		wait_for '[ "$(ex requests)" -gt 0 ]' 15
	kill "$EPID"; wait "$EPID" 2>/dev/null
	emberd_serve -o "export.otlp_endpoint=https://127.0.0.1:$RPORT" -o export.otlp_interval=1s \
		-o "export.ca_file=$TMP/tls.crt" ||
		{ not_ok "emberd starts with TLS settings"; done_testing; }
	published
	wait_for '[ "$(ex retries)" -gt 0 ]' 15
	check "TLS: without the client certificate the receiver refuses: retried, nothing accepted" \
		test "$(ex requests)" = 0 -a "$(ex retries)" -gt 0
	stop_all
	PIDS=()
else
	skip "TLS" "no openssl"
fi

# configuration: --check-config refuses a bad endpoint
"$EMBERD" --check-config -o export.otlp_endpoint=ftp://x >/dev/null 2>"$TMP/cc.err"
check "--check-config: a non-http endpoint is refused" test $? -ne 0
"$EMBERD" --check-config -o 'export.service_regex=web=(nginx' >/dev/null 2>"$TMP/cc.err"
check "--check-config: a bad export.service_regex is refused, with its reason" \
	grep -q "export.service_regex: web: " "$TMP/cc.err"
"$EMBERD" --check-config -o export.client_cert=/nonexistent -o export.client_key=/nonexistent >/dev/null 2>&1
check "--check-config: an unreadable client certificate is refused" test $? -ne 0
done_testing
