#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# lane: beside (checks labels and counts of a few dozen samples, not time, shares or CPU)
# workload identity from cgroup v1 hierarchies (root, BPF). The sample's BPF cgroup id
# is the v2 one, which on a host of v1 containers says nothing; emberd reads the process's v1
# paths (/proc/PID/cgroup) with its executable. The test mounts a named v1 hierarchy of its own
# (`mount -t cgroup -o none,name=...`: no controller, so it takes none from the host), makes
# docker/ID and kubepods/burstable/podUID/ID in it, runs a burner in each (the v2 cgroup stays
# the test's own) and checks container.id and k8s.pod.uid in OTLP and the HTTP container=
# filter. ~25 s.
. "$(dirname "$0")/../lib.sh"
require_live_emberd
for t in python3 protoc; do command -v $t >/dev/null || skip_all "no $t"; done
BURN=$OUTPUT/workloads/burn
[ -x "$BURN" ] || { not_ok "no $BURN (make workloads)"; done_testing; }
REF=$SHARED/reference/opentelemetry-proto
[ -r "$REF/opentelemetry/proto/profiles/v1development/profiles.proto" ] ||
	skip_all "no reference OTLP schema in $REF"
D=$(dirname "$0")

V1=$TMP/v1
mkdir -p "$V1"
# a name of its own: a hierarchy lives on after umount while it has cgroups (a run killed
# before its cleanup), and pids come round again (pid_max 32768)
V1NAME=ember-v1-$$-$(date +%s%N)
mount -t cgroup -o "none,name=$V1NAME" cgroup "$V1" 2>"$TMP/mount.err" ||
	skip_all "cannot mount a named cgroup v1 hierarchy: $(cat "$TMP/mount.err")"
hexid() { od -An -N32 -tx1 /dev/urandom | tr -d ' \n'; }
DOCKER=$(hexid) K8S=$(hexid)
POD=7a1c2e3f-4b5d-4e6f-8a9b-$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')
CG_DOCKER=$V1/docker/$DOCKER
CG_K8S=$V1/kubepods/burstable/pod$POD/$K8S
cleanup_v1() {
	local d
	for d in $(find "$V1" -mindepth 1 -depth -type d 2>/dev/null); do
		cat "$d/cgroup.procs" 2>/dev/null | while read -r p; do echo "$p" >"$V1/cgroup.procs"; done
		rmdir "$d" 2>/dev/null
	done
	umount "$V1" 2>/dev/null
}
trap 'stop_all; cleanup_v1; cleanup_tmp' EXIT
mkdir -p "$CG_DOCKER" "$CG_K8S" || { not_ok "cgroups in the v1 hierarchy"; done_testing; }
in_cgroup() { local d=$1; shift; sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$d" "$@" & }

RPORT=$(free_port)
RX=$TMP/rx
mkdir -p "$RX"
python3 "$D/export_receiver.py" "$RPORT" "$RX" &
PIDS+=($!)
for _ in $(seq 50); do (echo >/dev/tcp/127.0.0.1/$RPORT) 2>/dev/null && break; sleep 0.1; done
emberd_serve --frequency 99 -o "export.otlp_endpoint=http://127.0.0.1:$RPORT" \
	-o export.otlp_interval=2s -o export.service_rules=container,exe ||
	{ not_ok "emberd starts with [export]"; done_testing; }
wait_log "$TMP/emberd.log" "exporting OTLP profiles" || true
in_cgroup "$CG_DOCKER" "$BURN" 6 >/dev/null; P_DOCKER=$!
in_cgroup "$CG_K8S" "$BURN" 6 >/dev/null; P_K8S=$!
PIDS+=($P_DOCKER $P_K8S)
for _ in $(seq 20); do grep -q "name=$V1NAME:/docker/" "/proc/$P_DOCKER/cgroup" && break; sleep 0.1; done
check "the burners are in the v1 cgroups" grep -q "name=$V1NAME:/docker/$DOCKER" "/proc/$P_DOCKER/cgroup"
grep "^0::" "/proc/$P_DOCKER/cgroup" | sed 's/^/# its v2 cgroup: /'
wait $P_DOCKER $P_K8S 2>/dev/null
sleep 6
: >"$TMP/decoded"
for m in "$RX"/*.meta; do
	f=${m%.meta}.body
	[ -f "$f" ] || continue
	zcat "$f" | protoc -I "$REF" --decode \
		opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest \
		opentelemetry/proto/collector/profiles/v1development/profiles_service.proto \
		>"$f.txt" 2>/dev/null && echo "$f.txt" >>"$TMP/decoded"
done
check "otlp: bodies decode with the reference schema" test -s "$TMP/decoded"
python3 "$D/otlp_check.py" "$TMP/otlp" $(cat "$TMP/decoded") >"$TMP/check.out"
check "otlp: checked ($(cat "$TMP/check.out"))" grep -q '^ok' "$TMP/check.out"
res() { awk -v p=$1 '$1 == p && $2 ~ /\/burn$/ { print; exit }' "$TMP/otlp.res"; }
for p in "docker $P_DOCKER $DOCKER" "kubepods $P_K8S $K8S"; do
	set -- $p
	echo "# $1: pid $2 wants $3; resource: $(res $2 | cut -d' ' -f1,4-)"
done
check "v1 docker/ID: container.id, service.name" test "$(res $P_DOCKER | cut -d' ' -f4,6)" = "$DOCKER ${DOCKER:0:12}"
check "v1 kubepods/burstable/podUID/ID: container.id, k8s.pod.uid" test "$(res $P_K8S | cut -d' ' -f4,5)" = "$K8S $POD"
n_d=$(awk -v p=$P_DOCKER '$2 == p && $4 ~ /^burn;/' "$TMP/otlp" | wc -l)
# Both sides count the burner's own stacks: a sample of the `sh` that joined the cgroup and has
# not yet exec'd the burner is the container's too, and OTLP names it under the same pid but
# not as burn (fresh-clone runs W and X: one such sample, 596 against 595).
curl -sf "$URL/api/v1/folded?container=$DOCKER&from=-5m" >"$TMP/api.folded"
n_api=$(awk '$1 ~ /^burn;/ { n += $NF } END { print n + 0 }' "$TMP/api.folded")
n_other=$(awk '$1 !~ /^burn;/ { n += $NF; s = s " " $1 } END { print n + 0 s }' "$TMP/api.folded")
check "http: container=ID selects the v1 container's samples ($n_api, OTLP $n_d; other stacks: $n_other)" \
	test "$n_d" -gt 20 -a "$n_api" = "$n_d"
check "http: group_by=pod names the v1 pod" grep -q "^$POD;burn;" <(curl -sf "$URL/api/v1/folded?group_by=pod&from=-5m")
done_testing
