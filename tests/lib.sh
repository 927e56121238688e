# SPDX-License-Identifier: MIT
# Shared by the shell tests: TAP-style results for tests/run.sh, temp dirs, skips that turn
# into failures under CI=true (CI must exercise root, BTF, perf_event and the reference scripts for
# real).
# Usage: . "$(dirname "$0")/../lib.sh"
set -u
: "${OUTPUT:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build}"
: "${SRCDIR:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
: "${SHARED:=$(cd "$SRCDIR/.." && pwd)/shared}"
: "${EMBER:=$OUTPUT/ember}"
: "${EMBERD:=$OUTPUT/emberd}"
# FlameGraph's Perl scripts, which the side-by-side checks run (../shared/reference/FlameGraph,
# read-only: never copied into the project)
: "${FLAMEGRAPH_DIR:=$SHARED/reference/FlameGraph}"
# EMBER_ASAN=1: the same tests against the ASan+UBSan builds (make asan-bins); UBSan findings
# abort the program, so a test sees them as a failed run
if [ "${EMBER_ASAN:-0}" = 1 ]; then
	EMBER=$OUTPUT/asan/ember EMBERD=$OUTPUT/asan/emberd
	export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
	export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
fi
export OUTPUT SRCDIR SHARED EMBER EMBERD FLAMEGRAPH_DIR
# a developer's shell may point at Debian's debuginfod server (/etc/profile.d/debuginfod.sh):
# emberd would fetch from it; test_debuginfod.sh sets its own
unset DEBUGINFOD_URLS
T_FAILS=0
T_COUNT=0

TMP=$(mktemp -d "${TMPDIR:-/tmp}/ember-test.XXXXXX")
# KEEP_TMP=1 keeps a test's files (its path is printed) for a look after it
cleanup_tmp() { if [ -n "${KEEP_TMP:-}" ]; then echo "# kept $TMP"; else rm -rf "$TMP"; fi; }
trap cleanup_tmp EXIT

# Background processes a test started (PIDS+=($!)): stop_all kills and reaps them; tests call it
# from their EXIT trap. SIGTERM first; whatever is still there 10 s later gets SIGKILL, so that a
# program that hangs on its way out cannot hold the test until its 15-minute timeout (Debian's
# debuginfod, continued after a SIGSTOP and sent SIGTERM at once, sometimes never exits).
PIDS=()
running() { # PID: alive and not a zombie waiting to be reaped
	local st
	st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) || return 1
	[ "${st%% *}" != Z ]
}
# ours PID: a child of this shell not reaped yet. Bash reaps a background job when it ends, and
# its PID may then be another's: on a host where a test beside this one forks thousands of
# processes (pid_max 32768 here), a kill by a remembered PID once hit another test's perf record.
ours() {
	local st
	st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) || return 1
	set -- $st
	[ "$2" = "$$" ] || [ "$2" = "$BASHPID" ]
}
stop_all() {
	local p i
	for p in "${PIDS[@]}"; do ours "$p" && kill "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do
		ours "$p" || continue
		for i in $(seq 100); do running "$p" || break; sleep 0.1; done
		if running "$p"; then
			echo "# stop_all: pid $p ($(cat /proc/$p/comm 2>/dev/null)) ignored SIGTERM for 10 s: SIGKILL"
			kill -9 "$p" 2>/dev/null
		fi
		wait "$p" 2>/dev/null
	done
	# the perf maps they leave (node --perf-basic-prof and python -X perf keep theirs at exit):
	# a later process given the same pid as another user could not write its own
	for p in "${PIDS[@]}"; do running "$p" || rm -f "/tmp/perf-$p.map"; done
}
# wait_log FILE PATTERN: waits up to 10 s for PATTERN in FILE
wait_log() { for _ in $(seq 200); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done; return 1; }
# A test of a live emberd: root (BPF, perf_event), the binary, kernel BTF and curl.
require_live_emberd() {
	require_root "BPF and perf_event"
	[ -x "$EMBERD" ] || skip_all "no $EMBERD"
	[ -r /sys/kernel/btf/vmlinux ] || skip_all "no kernel BTF"
	command -v curl >/dev/null || skip_all "no curl"
}

ok() { T_COUNT=$((T_COUNT + 1)); echo "ok - $*"; }
not_ok() { T_COUNT=$((T_COUNT + 1)); T_FAILS=$((T_FAILS + 1)); echo "not ok - $*"; }
# check NAME COMMAND...: ok if the command succeeds; returns the command's success, so that
# `check ... || { diagnostics; }` prints them on a failure
check() { local n=$1; shift; if "$@"; then ok "$n"; else not_ok "$n"; return 1; fi; }
# skip NAME REASON: a skip, except under CI=true where it is a failure
skip() {
	if [ "${CI:-}" = true ]; then
		not_ok "$1 (would skip under CI: $2)"
	else
		T_COUNT=$((T_COUNT + 1))
		echo "ok - $1 # SKIP $2"
	fi
}
# cgroup2_mount: where the cgroup2 hierarchy is mounted ("" when it is not): the root the
# paths of /proc/PID/cgroup's "0::" lines are relative to
cgroup2_mount() { awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts; }
# have_flamegraph SCRIPT...: 0 when FlameGraph's SCRIPTs (flamegraph.pl, difffolded.pl,
# stackcollapse-perf.pl ...) are in FLAMEGRAPH_DIR and perl runs. Otherwise 1, for the test to
# compare with the corpus' recorded results or skip; under CI=true, which has them, a missing one
# fails the whole script instead.
have_flamegraph() {
	local s
	for s; do
		[ -f "$FLAMEGRAPH_DIR/$s" ] && command -v perl >/dev/null && continue
		if [ "${CI:-}" = true ]; then
			echo "not ok - no FlameGraph $s in '$FLAMEGRAPH_DIR' or no perl (a failure under CI)"
			exit 1
		fi
		return 1
	done
	return 0
}
# require_root REASON: skip the whole script (exit 77) unless root; fail under CI
require_root() {
	if [ "$(id -u)" -ne 0 ]; then
		if [ "${CI:-}" = true ]; then echo "not ok - needs root: $*"; exit 1; fi
		echo "[Skipped: needs root: $*]"; exit 77
	fi
}
skip_all() {
	if [ "${CI:-}" = true ]; then echo "not ok - $* (skips are failures under CI)"; exit 1; fi
	echo "[Skipped: $*]"
	exit 77
}
# for_nobody FILE...: copies each FILE (a workload's name, or a path) into a folder the
# unprivileged user of the tests (uid 65534) can reach wherever the checkout sits (a 0700
# folder, /root), and prints that folder. The test's $TMP becomes 0711 (traversable, not
# listable). Sets NOBODY_BIN to that folder. Fails the test with the reason when nobody still
# cannot run the copies (TMPDIR in a folder nobody may enter).
for_nobody() {
	local d=$TMP/nobody-bin f
	chmod 0711 "$TMP" && mkdir -p "$d" && chmod 0755 "$d" ||
		{ echo "not ok - cannot make $d for uid 65534"; exit 1; }
	for f; do
		case $f in /*) ;; *) f=$OUTPUT/workloads/$f ;; esac
		cp "$f" "$d/" && chmod 0755 "$d/$(basename "$f")" ||
			{ echo "not ok - cannot copy $f for uid 65534"; exit 1; }
	done
	if ! setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$d/$(basename "$f")"; then
		echo "not ok - uid 65534 cannot reach $d (is TMPDIR=${TMPDIR:-/tmp} in a folder only root may enter?)"
		exit 1
	fi
	NOBODY_BIN=$d
}
# A free TCP port on 127.0.0.1.
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
# wait_http URL [TRIES] [PID]: waits up to TRIES x 0.1 s (default 200) for URL to answer 2xx;
# 1 if it does not, or as soon as process PID (when given) is gone
# stat_field PATH: a field of the live emberd's /api/v1/stats ($URL), by its dotted path
# (e.g. sampler.procs_coalesced)
stat_field() {
	curl -sf "$URL/api/v1/stats" | python3 -c 'import json, sys
d = json.load(sys.stdin)
for k in sys.argv[1].split("."):
    d = d[k]
print(d)' "$1"
}
wait_http() {
	local url=$1 tries=${2:-200} pid=${3:-}
	for _ in $(seq "$tries"); do
		curl -sf -m 1 -o /dev/null "$url" 2>/dev/null && return 0
		[ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null && return 1
		sleep 0.1
	done
	return 1
}
# emberd_serve [ARG...]: a live emberd with ARGs on a free loopback port (PORT, URL and EPID set,
# its pid in PIDS for stop_all, its log in $TMP/emberd.log); 1 if /healthz does not answer within
# 20 s (its log is then shown)
emberd_serve() {
	PORT=$(free_port)
	URL=http://127.0.0.1:$PORT
	"$EMBERD" --listen "127.0.0.1:$PORT" "$@" >"$TMP/emberd.log" 2>&1 &
	EPID=$!
	PIDS+=($EPID)
	wait_http "$URL/healthz" 200 "$EPID" && return 0
	sed 's/^/# /' "$TMP/emberd.log"
	return 1
}
# replay_start FILE [ARG...]: emberd --replay FILE [ARG...] on a free loopback port (PORT and URL
# set, its pid in PIDS for stop_all, its log in $TMP/emberd.log); 1 if /healthz does not answer
# within 10 s
replay_start() {
	local f=$1
	shift
	PORT=$(free_port)
	URL=http://127.0.0.1:$PORT
	"$EMBERD" --listen "127.0.0.1:$PORT" "$@" --replay "$f" >"$TMP/emberd.log" 2>&1 &
	EPID=$!
	PIDS+=($EPID)
	wait_http "$URL/healthz" 100 "$EPID"
}
done_testing() { [ "$T_FAILS" -eq 0 ]; exit $?; }
# require_browser: node, playwright-core (make deps) and chromium must be there; otherwise skip
# the script (a failure under CI).
require_browser() {
	command -v node >/dev/null || skip_all "no node"
	[ -x "${CHROMIUM:-/usr/bin/chromium}" ] || skip_all "no chromium"
	[ -d "$OUTPUT/node/node_modules/playwright-core" ] || skip_all "no playwright-core in $OUTPUT/node (make deps)"
	export NODE_PATH=$OUTPUT/node/node_modules SCREENSHOT_DIR=$OUTPUT/screenshots
	mkdir -p "$SCREENSHOT_DIR"
}

# from_entry IN OUT: folded stacks from glibc's __libc_start_call_main up, the comm kept, for
# comparing with perf: its unwinding stops there (frame pointers: libc has none; dwarf: often),
# while emberd's goes on to __libc_start_main and _start
from_entry() { sed -E 's/^([^;]*);(.*;)?(__libc_start_call_main;)/\1;\3/' "$1" >"$2"; }
