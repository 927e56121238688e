#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# lane: beside (counts files opened and relocations, not time)
# What emberd's start costs in parsing the kernel's BTF (/sys/kernel/btf/vmlinux, ~6 MB: ~70 ms
# of CPU each time with a fresh heap, the largest part of a start-up once):
#   - the BPF objects carry no CO-RE relocation (their .BTF.ext has no CO-RE records): one
#     anywhere makes libbpf read and parse the whole BTF at load, for fields of stable UAPI
#     contexts (a raw tracepoint's arguments, a perf event's sample period) that the programs
#     read at their fixed offsets instead;
#   - emberd as shipped, traced from its start, opens the BTF once (the sampler's offsets:
#     mapping lookup, tasks, exec images, and task_struct.thread.fsbase for the CPython
#     reader), and no more once a Python program is sampled and read (its thread lookup takes
#     the sampler's offset: the python stats' fsbase_off as before, fsbase_ms 0).
. "$(dirname "$0")/../lib.sh"
require_live_emberd
command -v strace >/dev/null || skip_all "no strace"
command -v readelf >/dev/null || skip_all "no readelf (binutils)"
PY=/usr/bin/python3.11
[ -x "$PY" ] || skip_all "no $PY"
trap 'stop_all; cleanup_tmp' EXIT

# --- the objects: no CO-RE records -------------------------------------------------------
# .BTF.ext's header: magic 0xeB9F, version, flags, hdr_len (u32), then func_info and line_info
# (offset, length) and, when hdr_len >= 32, core_relo's (offset, length) at bytes 24 and 28
core_relos() {
	python3 - "$1" <<'PY'
import re, struct, subprocess, sys
out = subprocess.run(["readelf", "-SW", sys.argv[1]], capture_output=True, text=True).stdout
m = re.search(r"\] \.BTF\.ext\s+\S+\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)", out)
if not m:
    print(0)  # no .BTF.ext at all: no relocation records
    sys.exit(0)
off, size = int(m.group(1), 16), int(m.group(2), 16)
b = open(sys.argv[1], "rb").read()[off:off + size]
magic, _ver, _flags, hdr_len = struct.unpack_from("<HBBI", b, 0)
assert magic == 0xEB9F, hex(magic)
print(struct.unpack_from("<I", b, 28)[0] if hdr_len >= 32 else 0)
PY
}
for o in sampler kresolve; do
	f=$OUTPUT/bpf/$o.bpf.o
	n=$(core_relos "$f")
	check "$o.bpf.o: no CO-RE relocation records (${n:-unread} bytes of them)" test "${n:-1}" = 0
done

# --- emberd from its start, traced -------------------------------------------------------
PORT=$(free_port)
URL=http://127.0.0.1:$PORT
strace -qq -f -e trace=open,openat,openat2 -o "$TMP/strace.log" \
	"$EMBERD" --listen "127.0.0.1:$PORT" >"$TMP/emberd.log" 2>&1 &
SPID=$!
PIDS+=($SPID)
wait_http "$URL/healthz" 300 "$SPID" || { sed 's/^/# /' "$TMP/emberd.log"; not_ok "emberd serves HTTP"; done_testing; }
btf_opens() { grep -c '/sys/kernel/btf/vmlinux' "$TMP/strace.log"; }
n=$(btf_opens)
grep -o 'start-up took [0-9.]* ms of CPU' "$TMP/emberd.log" | sed 's/^/# (traced) /'
check "the kernel's BTF opened once by the start ($n)" test "$n" -eq 1

# a Python program: the CPython reader finds its thread state by task_struct.thread.fsbase
cat >"$TMP/work.py" <<'PY'
import sys, time
def leaf(n):
    s = 0
    for i in range(n):
        s += i * i
    return s
end = time.time() + float(sys.argv[1])
while time.time() < end:
    leaf(20000)
PY
"$PY" "$TMP/work.py" 8 &
PYPID=$!
PIDS+=($PYPID)
for _ in $(seq 60); do
	curl -sf "$URL/api/v1/stats" >"$TMP/stats.json" &&
		python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["python"]; sys.exit(not d["fsbase_off"] > 0)' "$TMP/stats.json" &&
		break
	sleep 0.2
done
python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["python"]; print("# python:", {k: d[k] for k in ("fsbase_off", "fsbase_ms")})' "$TMP/stats.json"
check "the CPython reader has task_struct.thread.fsbase's offset" \
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["python"]; sys.exit(not d["fsbase_off"] > 0)' "$TMP/stats.json"
n=$(btf_opens)
check "... and the BTF was not opened again for it ($n opens in all)" test "$n" -eq 1
# (its samples reach the store a tick or two after the reader's detection: polled, ZD4)
for _ in $(seq 40); do
	curl -sf "$URL/api/v1/folded?pid=$PYPID" | grep -q 'leaf ([^)]*work.py[^)]*)_\[py\]' && break
	sleep 0.25
done
check "python3.11's samples carry Python frames" \
	sh -c "curl -sf '$URL/api/v1/folded?pid=$PYPID' | grep -q 'leaf ([^)]*work.py[^)]*)_\[py\]'"
# emberd first (strace waits for its tracee), then strace
EPID=$(pgrep -P "$SPID" | head -1)
[ -n "$EPID" ] && kill "$EPID"
wait "$SPID"
check "emberd exits 0 (under strace)" test $? -eq 0
done_testing
