#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# emberd on Debian 12's own kernel: Debian's linux-image-6.1.0-*-amd64 booted under
# QEMU with software emulation (qemu-system-x86, no KVM needed), from a busybox initramfs built
# here that holds build/emberd and the shared libraries ldd lists for it, bpftool, and
# tests/workloads/nofp built -O2 -fomit-frame-pointer. Inside, /init starts nofp and emberd,
# waits for its /healthz, takes SECS of nofp's stacks from /api/v1/folded, stops emberd, lists the loaded BPF programs (the 6.1 verifier's instruction
# counts, bpf_prog_info.verified_insns), and prints everything on the serial console between markers; the test
# reads it back from the console's file:
#   - the guest runs Debian's 6.1 kernel, and emberd starts (its BPF programs pass the 6.1
#     verifier: the counts are printed; [offcpu] enabled, so the off-CPU programs are checked
#     too), serves HTTP, and exits 0 on SIGTERM (a clean stop);
#   - do_sample carries the HotSpot step (bpf/hotspot.bpf.h): 6.1's verifier takes it
#     (/api/v1/stats hs_walk_refused false; no JVM runs in the guest, so no Java frame is seen);
#   - it sampled nofp, and >= 95 % of nofp's samples reach main through main;work (the tables'
#     walk of a program without frame pointers, on 6.1);
#   - /usr/bin/python3.11 as Debian ships it runs a leaf/middle loop (work.py): >= 80 % of
#     its samples show <module>;middle;leaf as Python frames over the whole native stack
#     (_start ... Py_BytesMain: the Python walk on 6.1; the rest: in the while loop, or the
#     interpreter between calls);
#   - the memory and I/O programs ([pagefault], [vmgrow], [blockio], [malloc] on) load too, and
#     page faults, vm growth, malloc (tests/workloads/memio) and block I/O (dd with O_DIRECT on a
#     virtio disk, its drivers insmod'ed from the image's modules) are recorded;
#   - Debian's /usr/bin/node (v20: one ~99 MB binary with its v8dbg_ data) runs
#     tests/workloads/nodeburn (`node app.js`, no flag) from the guest's start, beside the
#     above: once nofp and python3.11 are stopped, and node has run NODE_AGE s (V8's tiers
#     settled: emulated, TurboFan compiles the burn functions in node's first 10 s and main,
#     with burnAsync inlined, 15-20 s after its start on a CPU of its own, about 8 % of node's
#     samples in those threads then, none after), a WINDOW s window of node's stacks:
#       - node is sampled: >= MIN samples, 40 % of the 99 Hz its busy thread could give (a tick
#         missed under emulation is a sample missed, and a loaded host misses more; MIN still
#         puts a share's sampling error well inside the 3 pp checked);
#       - >= 90 % of them name a function of the workload (node_shares.sh, as test_node.sh
#         counts) and its five burn functions each within 3 pp of their share of the time
#         (30/25/20/15/10 % asked; against what they took in the window); the functions
#         TurboFan inlined into burnFunction, burnMethod and main as frames of their own
#         (lcgRound, round;mixRound, burnAsync: see below);
#   - then emberd as on a kernel without bpf_loop (EMBERD_PRETEND_NO_BPF_LOOP=1): its
#     frame-pointer program (do_sample_fp) passes the 6.1 verifier, the one log line, a clean stop;
#   - the whole boot-to-poweroff fits in LIMIT s.
# One guest for all of it: node warms up while the rest is checked (its own guest took 67-85 s
# more, ~50 s of it node's warm-up and a second boot).
# Packages (scripts/packages.txt, make deps): linux-image-amd64, qemu-system-x86, busybox-static.
# Whatever build/emberd is, this runs it: a new BPF program is checked against 6.1 by this test.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/kernel61.sh" # k61_prereqs, k61_root, k61_libs, k61_init_head, k61_boot ...
. "$(dirname "$0")/node_shares.sh" # shares FILE
k61_prereqs
NODE=${EMBER_NODE:-/usr/bin/node}
[ -x "$NODE" ] || skip_all "no $NODE (Debian's nodejs)"
trap 'stop_all; cleanup_tmp' EXIT
SECS=10
LIMIT=170
NODE_AGE=${K61_NODE_AGE:-40}
WINDOW=${K61_NODE_WINDOW:-20}
MIN=$((WINDOW * 99 * 4 / 10))

k61_root
# the programs and every shared library they load, at the paths ld.so looks for them
gcc -std=gnu11 -O2 -fomit-frame-pointer -g -o "$R/bin/nofp" "$SRCDIR/tests/workloads/nofp.c" ||
	{ not_ok "nofp builds"; done_testing; }
# tests/workloads/memio's malloc mode (alloc_a 800 bytes, alloc_b 200, through libc.so.6's
# malloc, where [malloc]'s uprobe is)
[ -x "$OUTPUT/workloads/memio" ] || skip_all "no $OUTPUT/workloads/memio (make workloads)"
cp "$OUTPUT/workloads/memio" "$R/bin/memio"
# a virtio disk for block I/O: Debian's 6.1 has its drivers as modules, loaded by /init in this
# order (each after what it depends on)
VIRTIO_MODS="virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci virtio_blk"
mkdir -p "$R/lib/mods"
for m in $VIRTIO_MODS; do
	f=$(find "/lib/modules/$KVER" -name "$m.ko" | head -1)
	[ -n "$f" ] || skip_all "no $m.ko for $KVER (linux-image-amd64)"
	cp "$f" "$R/lib/mods/"
done
truncate -s 64M "$TMP/disk.img"
# CPython as Debian ships it, with the one stdlib package it loads from disk under -S
# (encodings; the rest is frozen into 3.11) and os.py, getpath's landmark for the prefix
PYBIN=/usr/bin/python3.11
[ -x "$PYBIN" ] || skip_all "no $PYBIN (python3.11)"
mkdir -p "$R/usr/bin" "$R/usr/lib/python3.11"
cp "$PYBIN" "$R/usr/bin/python3.11"
cp -r /usr/lib/python3.11/encodings "$R/usr/lib/python3.11/"
cp /usr/lib/python3.11/os.py "$R/usr/lib/python3.11/"
cat >"$R/bin/work.py" <<'PY'
import sys, time
def leaf(n):
    s = 0
    for i in range(n):
        s += i * i
    return s
def middle(n):
    return leaf(n)
end = time.time() + float(sys.argv[1])
while time.time() < end:
    middle(20000)
PY
# the verifier's count per loaded program (bpf_prog_info.verified_insns, 5.16+; Debian's
# bpftool 7.1 does not print it)
cat >"$TMP/insns.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
int main(void)
{
	__u32 id = 0;

	while (!bpf_prog_get_next_id(id, &id)) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		int fd = bpf_prog_get_fd_by_id(id);

		memset(&info, 0, sizeof(info));
		if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len))
			printf("prog %u %s verified_insns %u\n", id, info.name, info.verified_insns);
		if (fd >= 0)
			close(fd);
	}
	return 0;
}
C
gcc -O2 -o "$R/bin/insns" "$TMP/insns.c" -lbpf || { not_ok "insns.c builds"; done_testing; }
mkdir -p "$R/w"
cp "$NODE" "$R/usr/bin/node"
cp "$SRCDIR"/tests/workloads/nodeburn/{app.js,mod.mjs} "$R/w/"
k61_libs "$R/bin/emberd" "$R/bin/nofp" "$R/bin/insns" "$R/bin/memio" "$R/usr/bin/python3.11" "$R/usr/bin/node"
objdump -d --no-show-raw-insn --disassemble=work "$R/bin/nofp" >"$TMP/work.s"
check "nofp's work() keeps no frame pointer" \
	sh -c "grep -q 'call.*nofp_a' '$TMP/work.s' && ! grep -q 'mov *%rsp,%rbp' '$TMP/work.s'"
k61_init_head >"$R/init"
cat >>"$R/init" <<EOF
# stop_ep NAME: SIGTERM to \$EP, 30 s to exit; one that hangs is told (its threads' kernel
# stacks and its log's tail: a timeout of the whole guest said nothing) and killed
stop_ep() {
	kill \$EP
	i=0
	# running or asleep: not exited yet (a zombie, Z, waits for the wait below)
	while case "\$(cut -d' ' -f3 /proc/\$EP/stat 2>/dev/null)" in [SRD]) true ;; *) false ;; esac; do
		i=\$((i + 1)); [ \$i -ge 60 ] && break; sleep 0.5
	done
	if [ \$i -ge 60 ]; then
		echo "K61 \$1 hung at SIGTERM"
		for t in /proc/\$EP/task/*; do
			echo "K61 hung thread \$(cat \$t/comm) \$(cut -d' ' -f3 \$t/stat) \$(cat \$t/wchan 2>/dev/null) \$(tr '\\n' ' ' <\$t/stack 2>/dev/null | head -c 400)"
		done
		tail -20 /tmp/emberd.log | sed 's/^/K61 hung log: /'
		kill -9 \$EP
	fi
	wait \$EP
	echo "K61 \$1 exit \$?"
}
TN=\$(date +%s)
/usr/bin/node /w/app.js 600 >/tmp/node.out 2>&1 &
NP=\$!
/bin/nofp 100 >/tmp/nofp.out &
NOFP=\$!
/usr/bin/python3.11 -S /bin/work.py 100 >/tmp/py.out 2>&1 &
PYP=\$!
for m in $VIRTIO_MODS; do insmod /lib/mods/\$m.ko || echo "K61 insmod \$m failed"; done
/bin/emberd --listen 127.0.0.1:8080 -F 99 -o offcpu.enabled=yes -o pagefault.enabled=yes \
	-o vmgrow.enabled=yes -o blockio.enabled=yes -o malloc.enabled=yes -o malloc.comm=memio -o malloc.interval=64K \
	>/tmp/emberd.log 2>&1 &
EP=\$!
$(k61_init_serves 8080)
# the window starts once the tables of nofp and python3.11 are built (0.3-3 s under emulation,
# more on a loaded host): no process waits for its list, then one tick more
i=0
until wget -q -O /tmp/st.json http://127.0.0.1:8080/api/v1/stats &&
	grep -q '"procs_pending": 0,' /tmp/st.json &&
	[ "\$(grep -o '"procs": [0-9]*' /tmp/st.json | head -1 | grep -o '[0-9]*\$')" -ge 3 ]; do
	i=\$((i + 1)); [ \$i -ge 60 ] && break; sleep 0.5
done
echo "K61 tables ready after \$i polls: \$(grep -o '"procs[a-z_]*": [0-9]*' /tmp/st.json | tr '\\n' ' ')"
echo "K61 hs_walk_refused \$(grep -o '"hs_walk_refused": [a-z]*' /tmp/st.json | grep -o '[a-z]*\$')"
sleep 1
T0=\$(date +%s)
/bin/memio malloc 3 >/tmp/memio.out 2>&1 &
# 16 MiB written to the disk with O_DIRECT: bios submitted by dd, under [write]
[ -b /dev/vda ] && echo "K61 disk /dev/vda" && dd if=/dev/zero of=/dev/vda bs=64k count=256 oflag=direct 2>/dev/null &
sleep $SECS
echo K61-BEGIN-PROGS
/bin/insns 2>&1
echo K61-END-PROGS
wget -q -O /tmp/e.folded "http://127.0.0.1:8080/api/v1/folded?from=\$T0"
for e in pagefault vmgrow malloc blockio; do
	wget -q -O /tmp/m.folded "http://127.0.0.1:8080/api/v1/folded?event=\$e&from=-60s"
	echo "K61 memio \$e \$(wc -l </tmp/m.folded)"
	[ \$e = malloc ] && echo "K61 memio malloc alloc_a \$(grep -c 'alloc_a' /tmp/m.folded)"
	[ \$e = blockio ] && echo "K61 memio blockio dd_write \$(grep -c '^dd;\\[write\\];' /tmp/m.folded)"
done
# node, alone now: its frames named (emberd examined it and read its v8dbg_ data: node's 100 MB
# .symtab, seconds emulated), then NODE_AGE s from its start, then the window
kill \$NOFP \$PYP
echo "K61 node \$(head -1 /tmp/node.out) at +\$((\$(date +%s) - TN)) s"
i=0
until wget -q -O /tmp/n.folded "http://127.0.0.1:8080/api/v1/folded?pid=\$NP&from=\$TN" &&
	grep -q 'app\\.js:[0-9]*)_\\[j\\]' /tmp/n.folded; do
	i=\$((i + 1)); [ \$i -ge 120 ] && break; sleep 0.5
done
echo "K61 node named at +\$((\$(date +%s) - TN)) s"
while [ \$((\$(date +%s) - TN)) -lt $NODE_AGE ]; do sleep 1; done
T0=\$(date +%s)
kill -USR1 \$NP
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
s=\$TN
while [ \$s -lt \$T1 ]; do
	wget -q -O /tmp/s.folded "http://127.0.0.1:8080/api/v1/folded?pid=\$NP&from=\$s&to=\$((s + 5))"
	echo "K61 node slice +\$((s - TN)) s: \$(awk '{ t += \$NF; if (\$0 ~ /OptimizingCompileDispatcher/) c += \$NF } END { print t + 0, c + 0 }' /tmp/s.folded)"
	s=\$((s + 5))
done
stop_ep emberd
# degraded mode (no bpf_loop): its own program, do_sample_fp, through 6.1's verifier
EMBERD_PRETEND_NO_BPF_LOOP=1 /bin/emberd --listen 127.0.0.1:8081 -F 99 >/tmp/emberd-fp.log 2>&1 &
EP=\$!
i=0
until wget -q -O /dev/null http://127.0.0.1:8081/healthz; do
	i=\$((i + 1)); [ \$i -ge 30 ] && break; sleep 1
done
echo K61-BEGIN-FPPROGS
/bin/insns 2>&1
echo K61-END-FPPROGS
stop_ep emberd-fp
grep -c 'no bpf_loop' /tmp/emberd-fp.log | sed 's/^/K61 fp lines /'
echo K61-BEGIN-LOG
cat /tmp/emberd.log
echo K61-END-LOG
echo K61-BEGIN-FOLDED
cat /tmp/e.folded
echo K61-END-FOLDED
echo K61-BEGIN-STATS
cat /tmp/st.json
echo K61-END-STATS
echo K61-BEGIN-NODE
cat /tmp/n.folded
echo K61-END-NODE
echo K61 done
poweroff -f
EOF

k61_boot $LIMIT 1536 -drive "file=$TMP/disk.img,format=raw,if=virtio"
grep '^K61 tables ready\|^K61 emberd serves\|^K61 node\|^K61 .*hung' "$TMP/console.log" |
	sed 's/^K61 node slice \(.*\): \(.*\) \(.*\)/K61 node slice \1: \2 samples, \3 compiling/' | sed 's/^/# /'
k61_powered_off $LIMIT
k61_kernel_and_log
section PROGS >"$TMP/progs.txt"
section FOLDED >"$TMP/e.folded"
sed 's/^prog /# verifier 6.1: prog /' "$TMP/progs.txt"
check "emberd started on 6.1 (its BPF programs loaded)" \
	sh -c "grep -q 'do_sample verified_insns [1-9]' '$TMP/progs.txt' && grep -qi 'started' '$TMP/emberd.log'"
# the HotSpot step in do_sample's frame callback (hotspot.bpf.h) passes 6.1's verifier too: not
# refused (emberd would load without it, no Java frames, and say so); a change that takes the
# program past 6.1's limits with the step (its 512-byte combined stack did once) shows here
check "do_sample loaded with the HotSpot step on 6.1 ($(grep '^K61 hs_walk_refused' "$TMP/console.log"))" \
	sh -c "grep -q '^K61 hs_walk_refused false\$' '$TMP/console.log' && ! grep -q 'no Java frames: the kernel refused' '$TMP/emberd.log'"
# the off-CPU programs ([offcpu] enabled: sched_switch, sched_waking, sched_wakeup,
# sys_exit) pass the 6.1 verifier too (bpf_prog_info.name is cut at 15 characters)
check "the off-CPU programs loaded on 6.1 (offcpu_switch_b, offcpu_waking, offcpu_wakeup, offcpu_resume)" \
	sh -c "for p in offcpu_switch_b offcpu_waking offcpu_wakeup offcpu_resume; do grep -q \" \$p verified_insns [1-9]\" '$TMP/progs.txt' || exit 1; done"
# the memory and I/O programs ([pagefault], [vmgrow], [blockio], [malloc] enabled) too, and
# page faults, vm growth, malloc (memio's alloc_a through libc's malloc) and block I/O (dd's
# O_DIRECT writes to a virtio disk) recorded there
check "the memory and I/O programs loaded on 6.1 (memio_pagefault, memio_sys_exit, memio_bio_queue, memio_rq_comple, memio_malloc)" \
	sh -c "for p in memio_pagefault memio_sys_exit memio_bio_queue memio_rq_comple memio_malloc; do grep -q \" \$p verified_insns [1-9]\" '$TMP/progs.txt' || exit 1; done"
check "page faults and vm growth recorded on 6.1" \
	sh -c "grep -q '^K61 memio pagefault [1-9]' '$TMP/console.log' && grep -q '^K61 memio vmgrow [1-9]' '$TMP/console.log'"
check "malloc recorded on 6.1, memio's alloc_a in its stacks ($(grep '^K61 memio malloc' "$TMP/console.log" | tr '\n' ' '))" \
	grep -q '^K61 memio malloc alloc_a [1-9]' "$TMP/console.log"
check "block I/O recorded on 6.1: dd's O_DIRECT writes under [write] ($(grep '^K61 memio blockio\|^K61 disk\|^K61 insmod' "$TMP/console.log" | tr '\n' ' '))" \
	grep -q '^K61 memio blockio dd_write [1-9]' "$TMP/console.log"
check "emberd stopped cleanly (exit 0 on SIGTERM)" grep -q '^K61 emberd exit 0$' "$TMP/console.log"
section FPPROGS >"$TMP/fpprogs.txt"
sed 's/^prog /# verifier 6.1, no bpf_loop: prog /' "$TMP/fpprogs.txt"
check "degraded mode (EMBERD_PRETEND_NO_BPF_LOOP=1): do_sample_fp loaded, one line, clean stop" \
	sh -c "grep -q 'do_sample_fp verified_insns [1-9]' '$TMP/fpprogs.txt' &&
	       grep -q '^K61 fp lines 1\$' '$TMP/console.log' &&
	       grep -q '^K61 emberd-fp exit 0\$' '$TMP/console.log'"
grep '^nofp;' "$TMP/e.folded" >"$TMP/nofp.folded"
read -r share total < <(awk '{ n = $NF; t += n; if ($0 ~ /;main;work;/) m += n } END { printf "%.4f %d\n", t ? m / t : 0, t }' "$TMP/nofp.folded")
echo "# nofp on 6.1: $total samples, $share reach main;work"
check "nofp sampled on 6.1 and >= 95 % of its stacks reach main ($share of $total)" \
	awk -v s="$share" -v t="$total" 'BEGIN { exit !(t >= 300 && s >= 0.95) }'
[ "$share" = 0.0000 ] && head -5 "$TMP/nofp.folded" | sed 's/^/#   /'
# CPython: its Python frames (read by the BPF walker on 6.1) over the native ones down to main
grep '^python3.11;' "$TMP/e.folded" >"$TMP/py.folded"
read -r pyshare pytotal < <(awk '{ n = $NF; t += n; if ($0 ~ /^python3\.11;_start;.*;Py_BytesMain;.*;<module> \(\/bin\/work\.py\)_\[py\];middle \(\/bin\/work\.py\)_\[py\];leaf \(\/bin\/work\.py\)_\[py\]/) m += n } END { printf "%.4f %d\n", t ? m / t : 0, t }' "$TMP/py.folded")
echo "# CPython 3.11 on 6.1: $pytotal samples, $pyshare in _start;...;Py_BytesMain;...;<module>;middle;leaf"
check "CPython sampled on 6.1, its Python frames over a whole native stack ($pyshare of $pytotal)" \
	awk -v s="$pyshare" -v t="$pytotal" 'BEGIN { exit !(t >= 200 && s >= 0.80) }'
awk -v s="$pyshare" 'BEGIN { exit !(s < 0.80) }' && awk '{ print $NF "\t" $0 }' "$TMP/py.folded" | sort -nr | head -5 | cut -f2- | sed 's/^.*PyEval_EvalCode;/#   ...;/'
# node, alone in the guest for its window
section STATS >"$TMP/stats.json"
section NODE >"$TMP/node.folded"
stat_section() { # NAME: the object NAME of the guest's /api/v1/stats, on one line
	python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1])).get(sys.argv[2])))' \
		"$TMP/stats.json" "$1" 2>/dev/null
}
echo "# v8 stats: $(stat_section v8)"
echo "# sampler stats: $(stat_section sampler)"
# the mapping lookup is on in 6.1 (its offsets from 6.1's BTF, the inode's timespec64 i_mtime
# among them): execs seeded, their file's size and mtime checked (38 in the first run)
check "6.1: execs seeded by the table of their file, its inode's size and mtime checked (sampler.exec_seeds > 0)" \
	python3 -c 'import json, sys; s = json.load(open(sys.argv[1]))["sampler"]; sys.exit(not s["exec_seeds"] > 0)' \
	"$TMP/stats.json"
within() { awk -v x="$1" -v e="$2" -v d="$3" 'BEGIN { exit !(x - e <= d && e - x <= d) }'; }
atleast() { awk -v x="$1" -v e="$2" 'BEGIN { exit !(x >= e) }'; }
check "emberd read node's V8 data on 6.1 and named its frames (v8 procs, frames)" \
	python3 -c 'import json, sys; v = json.load(open(sys.argv[1]))["v8"]; sys.exit(not (v["procs"] >= 1 and v["frames"] > 0))' \
	"$TMP/stats.json"
read -r TOT NM F M C A MOD BT < <(shares "$TMP/node.folded")
echo "# node on 6.1: $TOT samples in ${WINDOW} s, $NM% name a function of the workload; of the $BT in a burn function: function $F%, method $M%, closure $C%, async $A%, module $MOD%"
# main as the innermost JavaScript frame: main's own work (little), or a function TurboFan
# inlined into main named main. burnAsync runs up to its first await inlined into main once main
# is optimized (15 s after "ready" here): a quarter of burnAsync's time, which came out as main
# (5.1-5.5 % of node's samples, burnAsync 10.7-11.5 % of the burn functions for its 15 %) until
# emberd expanded TurboFan's inlined functions into frames of their own (main;burnAsync); 0.2 %
# under node --no-turbo-inlining. lcgRound and round;mixRound are inlined into burnFunction and
# burnMethod the same way.
read -r MI < <(awk '{ n = $NF; s = substr($0, 1, length($0) - length($NF) - 1); k = split(s, fr, ";"); last = ""
	for (i = 1; i <= k; i++) if (fr[i] ~ /_\[j\]$/) last = fr[i]
	if (last ~ /^main \(/) m += n } END { print m + 0 }' "$TMP/node.folded")
read -r IF IM < <(inlined "$TMP/node.folded")
echo "# node on 6.1: $MI samples with main innermost; burnFunction's in lcgRound $IF%, burnMethod's in round;mixRound $IM%"
# what the five really took in the window (app.js's split of its wall time, from SIGUSR1 at the
# window's start): under emulation burnAsync's awaits take their time (its share 15.8-19.3 %),
# and the samples follow (15.8-18.0 % counted with main against the 15 % asked)
read -r EF EM EC EA EMOD < <(awk '/^K61 node split/ { print $4, $5, $6, $7, $8 }' "$TMP/console.log")
echo "# node's own split of its wall time in the window: $EF $EM $EC $EA $EMOD"
check "node sampled on 6.1 (>= $MIN samples in $WINDOW s: $TOT)" test "$TOT" -ge "$MIN"
check "node on 6.1: >= 90% of the samples name a function of the program ($NM%)" atleast "$NM" 90 ||
	awk '$0 !~ /(app\.js|mod\.mjs)/ { print $NF, $0 }' "$TMP/node.folded" | sort -rn | head -5 |
	cut -c1-400 | sed 's/^/#   unnamed: /'
check "node on 6.1: burnFunction ${EF:-30} +- 3 pp ($F)" within "$F" "${EF:-30}" 3
check "node on 6.1: Burner.burnMethod ${EM:-25} +- 3 pp ($M)" within "$M" "${EM:-25}" 3
check "node on 6.1: burnClosure ${EC:-20} +- 3 pp ($C)" within "$C" "${EC:-20}" 3
check "node on 6.1: async burnAsync ${EA:-15} +- 3 pp ($A)" within "$A" "${EA:-15}" 3
check "node on 6.1: module's burnModule ${EMOD:-10} +- 3 pp ($MOD)" within "$MOD" "${EMOD:-10}" 3
check "node on 6.1: TurboFan's inlined functions named: burnFunction's samples in lcgRound >= 90% ($IF%)" atleast "$IF" 90
check "node on 6.1: ... Burner.burnMethod's in round;mixRound >= 90% ($IM%)" atleast "$IM" 90
check "node on 6.1: main innermost in <= 2% of node's samples (burnAsync's part inlined there named burnAsync: $MI of $TOT)" \
	test $((MI * 50)) -le "$TOT"
done_testing
