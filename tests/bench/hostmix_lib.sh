# SPDX-License-Identifier: MIT
# The host-like mix of bench_hostmix.sh and bench_breakdown.sh (sourced, with TMP set): Debian's xz
# and a gzip loop over 20 MB of random bytes, python3.11, perl and node each in a small loop, and
# `ls`/`sed` started 20 times a second. mix_setup writes its inputs into $TMP; mix_start SECONDS
# starts it (pids in MIX); mix_stop ends it. mix_port prints a free port; mix_emberd BIN LOG
# starts an emberd on one (E_PORT, E_PID; stopped with the mix).
mix_setup() {
	head -c 20000000 /dev/urandom >"$TMP/rand.bin"
	cat >"$TMP/work.py" <<'PY'
import sys, time, json
def leaf(n):
    s = 0
    for i in range(n):
        s += i * i
    return s
def middle(n):
    return leaf(n) + len(json.dumps(list(range(200))))
end = time.time() + float(sys.argv[1])
while time.time() < end:
    middle(20000)
PY
	cat >"$TMP/work.js" <<'JS'
function leaf(n) { let s = 0; for (let i = 0; i < n; i++) s = (s + i * i) % 1000003; return s; }
function middle(n) { return leaf(n) + JSON.stringify([n, n + 1]).length; }
const end = Date.now() + Number(process.argv[2]) * 1000;
let x = 0;
while (Date.now() < end) x += middle(100000);
JS
}
mix_start() { # SECONDS
	local s=$1
	( end=$((SECONDS + s)); while [ $SECONDS -lt $end ]; do xz -9 -T1 -c "$TMP/rand.bin" >/dev/null; done ) &
	MIX+=($!)
	( end=$((SECONDS + s)); while [ $SECONDS -lt $end ]; do gzip -6 -c "$TMP/rand.bin" >/dev/null; done ) &
	MIX+=($!)
	/usr/bin/python3.11 "$TMP/work.py" "$s" &
	MIX+=($!)
	perl -e '$e = time + $ARGV[0]; while (time < $e) { $s = 0; $s += $_ * $_ for 1 .. 100000; }' "$s" &
	MIX+=($!)
	node "$TMP/work.js" "$s" >/dev/null &
	MIX+=($!)
	# short-lived processes, 20 a second
	( end=$((SECONDS + s)); while [ $SECONDS -lt $end ]; do
		ls /usr/bin >/dev/null; sed -n 1p /etc/passwd >/dev/null; sleep 0.1; done ) &
	MIX+=($!)
}
mix_stop() {
	local p
	for p in "${MIX[@]}"; do kill "$p" 2>/dev/null; done
	pkill -f "$TMP/work" 2>/dev/null
	for p in "${MIX[@]}"; do wait "$p" 2>/dev/null; done
	MIX=()
}
mix_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
mix_emberd() { # BIN LOG
	E_PORT=$(mix_port)
	"$1" --listen "127.0.0.1:$E_PORT" >"$2" 2>&1 &
	E_PID=$!
	MIX+=($E_PID)
}

# cpu_line: the CPU model and clock, and the share of CPU time stolen by the hypervisor since
# boot (/proc/stat's steal): what a figure on a shared VM depends on besides the guest
cpu_line() {
	echo "# cpu: $(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//') at $(grep -m1 '^cpu MHz' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//') MHz, $(nproc) CPUs; stolen since boot: $(steal_pct)"
}
# machine_line DIR: what a system call, a context switch, a page fault and a fork cost here
# (tests/bench/machine_costs.c, built into DIR): a guest that traps each kernel entry to its
# hypervisor, or switches page tables at each (pti=on), pays many times another's for the same
# work, and a per-process figure follows
machine_line() {
	${CC:-cc} -O2 -pthread -o "$1/machine_costs" "$(dirname "${BASH_SOURCE[0]}")/machine_costs.c" &&
		"$1/machine_costs"
	echo "# kernel: $(uname -r); $(dmesg 2>/dev/null | grep -o -m1 'Hypervisor detected: [A-Za-z]*' || echo 'hypervisor: not told'); meltdown: $(cat /sys/devices/system/cpu/vulnerabilities/meltdown 2>/dev/null || echo '?')"
}
# steal_mark: /proc/stat's "cpu" line now; steal_pct [MARK]: the stolen share of CPU time since
# MARK (default: boot)
steal_mark() { head -1 /proc/stat; }
steal_pct() {
	python3 - "${1:-}" "$(head -1 /proc/stat)" <<'PY'
import sys
a = [int(x) for x in sys.argv[1].split()[1:]] if sys.argv[1] else None
b = [int(x) for x in sys.argv[2].split()[1:]]
d = [y - x for x, y in zip(a, b)] if a else b
tot = sum(d[:8]) or 1
print("%.2f%%" % (100.0 * d[7] / tot))
PY
}
