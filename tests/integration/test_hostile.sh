#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Hostile processes: an unprivileged user (setpriv --reuid=65534; a user and mount
# namespace of its own where noted) attacks emberd through the files it maps, while a root burner
# runs. emberd keeps sampling (the burner's samples keep arriving), does not crash, stays within
# a memory bound, opens none of the files it must not (strace on every thread of emberd), names
# no process with another's functions, and counts each refusal in /api/v1/stats.
#
#   row 1  a mapped file whose directory is then covered (tmpfs in the attacker's mount
#          namespace) by a FIFO of the same name: the path now names the FIFO
#   row 4  ... and by an absolute symlink to /etc/shadow
#   row 2  a library whose .symtab points into a sparse 1 GB tail, shrunk and grown while parsed
#   row 3  a library whose .symtab claims 10 M entries: refused by symbols.max_symbols; a 64 MiB
#          perf map (1.9 M lines) for nobody's own JIT: kept to symbols.max_perfmap_entries (all
#          perf maps together); a compressed .debug_frame that says it inflates to 2 GiB: refused
#          by symbols.max_section_size before it is inflated
#   row 4  a stripped library without build-id whose .gnu_debuglink names a symlink to a root-only
#          file that defines root_only_secret_alpha_hunter2
#   row 8  a root JIT process's perf map owned and rewritten by nobody; nobody's own JIT named
#   row 5  nobody's library on a tmpfs of its own namespace, then root's library of the same size
#          on a new tmpfs: the same device and inode (both recycled); root's is named its own way
#          and walked with its own unwind table
. "$(dirname "$0")/../lib.sh"
require_live_emberd
W=$OUTPUT/workloads
[ -x "$W/hostile" ] && [ -x "$W/burn" ] && [ -x "$W/jit" ] || skip_all "workloads not built"
for_nobody hostile burn jit # the checkout may sit where nobody cannot enter
W=$NOBODY_BIN
for t in strace setpriv unshare gcc objcopy strip python3; do
	command -v $t >/dev/null || skip_all "no $t"
done
AS_NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
# rows 1 and 5 need an unprivileged user namespace with a mount of its own: skipped (a failure
# under CI) where the kernel forbids them
USERNS=1
"${AS_NOBODY[@]}" unshare -Urm sh -c 'mount -t tmpfs none /mnt' 2>/dev/null || USERNS=0
trap 'kill "$STRACE_PID" 2>/dev/null; stop_all; [ -n "${KEEP:-}" ] && cp -r "$TMP" "$KEEP"; cleanup_tmp' EXIT

chmod 0711 "$TMP" # the attacker reaches its own directory in it, nothing else
A=$TMP/att
mkdir -p "$A/lib" "$TMP/rootonly"
chmod 0700 "$TMP/rootonly"

# --- the attacker's files, built as root then handed over -----------------------------------
cat >"$TMP/spin.c" <<'EOF'
volatile unsigned long spin_sink;
void hostile_spin(void) { for (unsigned long i = 0; i < 2000000; i++) spin_sink += i * i; }
EOF
# root's secret library, and the attacker's of the same layout (its inner function at the same
# address, but neither its name nor in its .dynsym): the secret's .symtab would name it
cat >"$TMP/secret.c" <<'EOF'
volatile unsigned long s;
__attribute__((noinline)) static void root_only_secret_alpha_hunter2(void)
{ for (unsigned long i = 0; i < 2000000; i++) s += i; }
void hostile_spin(void) { root_only_secret_alpha_hunter2(); }
EOF
sed 's/root_only_secret_alpha_hunter2/att_inner_function_xxxxxxxxxxx/' "$TMP/secret.c" >"$TMP/att.c"
CC_SO=(gcc -shared -fPIC -O1 -fno-omit-frame-pointer -Wl,--build-id=none)
"${CC_SO[@]}" -o "$A/libshrink.so" "$TMP/spin.c"
"${CC_SO[@]}" -o "$A/libbig.so" "$TMP/spin.c"
"${CC_SO[@]}" -g -o "$TMP/rootonly/secret.so" "$TMP/secret.c"
chmod 0600 "$TMP/rootonly/secret.so"
# row 4: stripped, no build-id, a debuglink to "secret.so" next to it: a symlink to root's file
"${CC_SO[@]}" -g -o "$A/libatt.so" "$TMP/att.c"
strip --strip-all "$A/libatt.so"
cp "$TMP/rootonly/secret.so" "$A/secret.so"
objcopy --add-gnu-debuglink="$A/secret.so" "$A/libatt.so"
rm "$A/secret.so"
ln -s "$TMP/rootonly/secret.so" "$A/secret.so"
# .symtab moved: into a sparse tail past 900 MB (row 2), or 10 M entries long (row 3)
cat >"$TMP/symtab.py" <<'EOF'
import struct, sys
path, off, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(path, 'r+b') as f:
    b = f.read()
    shoff, = struct.unpack_from('<Q', b, 0x28)
    shentsize, shnum = struct.unpack_from('<HH', b, 0x3a)
    for i in range(shnum):
        h = shoff + i * shentsize
        if struct.unpack_from('<I', b, h + 4)[0] == 2:  # SHT_SYMTAB
            f.seek(h + 0x18)
            f.write(struct.pack('<QQ', off, size))
            sys.exit(0)
sys.exit('no .symtab')
EOF
SMALL=$(stat -c %s "$A/libshrink.so")
python3 "$TMP/symtab.py" "$A/libshrink.so" $((900 << 20)) $((32 << 20)) || not_ok "setup: .symtab moved"
truncate -s 1G "$A/libshrink.so"
python3 "$TMP/symtab.py" "$A/libbig.so" $((16 << 20)) $((240000000)) || not_ok "setup: .symtab of 10 M"
truncate -s 260M "$A/libbig.so"
# row 5: two libraries of one layout and size, with other names
sed 's/root_only_secret_alpha_hunter2/attacker_named_function_zzzzzz/' "$TMP/secret.c" >"$TMP/a5.c"
sed 's/root_only_secret_alpha_hunter2/root_named_function_rrrrrrrrrrr/' "$TMP/secret.c" >"$TMP/r5.c"
# without frame pointers: a stack through hostile_spin shows its file's unwind table in use
CC_SO5=(gcc -shared -fPIC -O1 -fomit-frame-pointer -Wl,--build-id=none)
"${CC_SO5[@]}" -o "$A/lib5.so" "$TMP/a5.c"
"${CC_SO5[@]}" -o "$TMP/root5.so" "$TMP/r5.c"
mkdir -p "$A/mnt" "$TMP/rt"
# row 3: a compressed .debug_frame (no CFI in .eh_frame) whose header says 2 GiB
{ cat "$TMP/spin.c"; for i in $(seq 64); do echo "void z$i(void) { spin_sink += $i; }"; done; } \
	>"$TMP/z.c" # enough CFI for the linker to compress it
gcc -shared -fPIC -O1 -g -fno-asynchronous-unwind-tables -gz=zlib -Wl,--build-id=none \
	-o "$A/libz.so" "$TMP/z.c"
cat >"$TMP/chsize.py" <<'EOF'
import struct, sys
path, name, size = sys.argv[1], sys.argv[2].encode(), int(sys.argv[3])
with open(path, 'r+b') as f:
    b = f.read()
    shoff, = struct.unpack_from('<Q', b, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', b, 0x3a)
    stroff, = struct.unpack_from('<Q', b, shoff + shstrndx * shentsize + 0x18)
    for i in range(shnum):
        h = shoff + i * shentsize
        nm = b[stroff + struct.unpack_from('<I', b, h)[0]:].split(b'\0', 1)[0]
        flags, = struct.unpack_from('<Q', b, h + 8)
        if nm == name and flags & 0x800:  # SHF_COMPRESSED: Elf64_Chdr.ch_size at +8
            f.seek(struct.unpack_from('<Q', b, h + 0x18)[0] + 8)
            f.write(struct.pack('<Q', size))
            sys.exit(0)
sys.exit('no compressed ' + sys.argv[2])
EOF
python3 "$TMP/chsize.py" "$A/libz.so" .debug_frame $((2 << 30)) || not_ok "setup: a compressed .debug_frame"
cp "$W/hostile" "$A/lib/x.so"
cp "$W/hostile" "$A/lib/z"
chown -R 65534:65534 "$A"

# --- emberd, traced ---------------------------------------------------------------------------
emberd_serve -o sampling.tick_ms=250 || { not_ok "emberd starts"; done_testing; }
ok "emberd starts"
STRACE_ARGS=()
for t in /proc/"$EPID"/task/*; do STRACE_ARGS+=(-p "${t##*/}"); done
strace -qq -f -s 4096 -e trace=open,openat,openat2 -o "$TMP/strace.log" "${STRACE_ARGS[@]}" &
STRACE_PID=$!
sleep 1
"$W/burn" 40 >/dev/null &
BURN=$!
PIDS+=($BURN)

burn_samples() {
	curl -sf "$URL/api/v1/folded?pid=$BURN" | awk '{ n += $NF } END { print n + 0 }'
}

# rows 1 and 4: the path of a mapping names a FIFO, or a symlink to /etc/shadow, in the
# attacker's mount namespace; the files it maps were opened before the cover
[ "$USERNS" = 1 ] && "${AS_NOBODY[@]}" unshare -Urm sh -c '
	cd "$1" || exit 1
	exec 3<lib/x.so 4<lib/z
	mount -t tmpfs none lib || exit 1
	mkfifo lib/x.so && ln -s /etc/shadow lib/z || exit 1
	exec "$2" mapfd 12 3 4' sh "$A" "$W/hostile" >"$TMP/cover.out" 2>&1 &
COVER=$!
PIDS+=($COVER)
# row 2: shrunk and grown while parsed
"${AS_NOBODY[@]}" "$W/hostile" dlcall 12 "$A/libshrink.so" hostile_spin >"$TMP/shrinkcall.out" 2>&1 &
PIDS+=($!)
"${AS_NOBODY[@]}" "$W/hostile" shrink 12 "$A/libshrink.so" $((1 << 30)) "$SMALL" >/dev/null 2>&1 &
PIDS+=($!)
# row 3: 10 M symbols claimed
"${AS_NOBODY[@]}" "$W/hostile" dlcall 12 "$A/libbig.so" hostile_spin >"$TMP/big.out" 2>&1 &
PIDS+=($!)
"${AS_NOBODY[@]}" "$W/hostile" dlcall 12 "$A/libz.so" hostile_spin >"$TMP/z.out" 2>&1 &
PIDS+=($!)
# row 4: the debuglink to root's secret
"${AS_NOBODY[@]}" "$W/hostile" dlcall 12 "$A/libatt.so" hostile_spin >"$TMP/att.out" 2>&1 &
ATT=$!
PIDS+=($ATT)
# row 8: root's JIT, its perf map owned by nobody (as when nobody created it first: chown here
# makes that race certain) and rewritten by nobody with its own names; nobody's own JIT
"$W/jit" --seconds 12 >"$TMP/jit.out" 2>&1 &
JIT=$!
PIDS+=($JIT)
"${AS_NOBODY[@]}" "$W/jit" --seconds 12 >"$TMP/jit_nobody.out" 2>&1 &
JITN=$!
PIDS+=($JITN)
wait_log "$TMP/jit.out" ready || not_ok "root's jit starts"
chown 65534:65534 "/tmp/perf-$JIT.map"
"${AS_NOBODY[@]}" sh -c 'awk "NF == 3 && \$3 ~ /^jit_/ { print \$1, \$2, \"spoofed_by_nobody_\" \$3 }" "$1" >"$2"' \
	sh "$TMP/jit.out" "/tmp/perf-$JIT.map"
# row 3: nobody floods its own perf map to 64 MiB
wait_log "$TMP/jit_nobody.out" ready || not_ok "nobody's jit starts"
"${AS_NOBODY[@]}" awk 'BEGIN { for (i = 0; i < 1900000; i++)
	printf "%x 10 jit_flood_%07d\n", 140000000000000 + i * 16, i }' >>"/tmp/perf-$JITN.map"
ls -l "/tmp/perf-$JITN.map" | sed 's/^/# /'
if [ "$USERNS" = 1 ]; then
	wait_log "$TMP/cover.out" ready ||
		{ sed 's/^/# /' "$TMP/cover.out"; not_ok "the covered mappings are set up"; }
else
	skip "rows 1 and 4: a covered directory" "no unprivileged user namespace with mounts here"
fi

sleep 4
B1=$(burn_samples)
sleep 5
B2=$(burn_samples)
echo "# burn samples: $B1 then $B2"
check "emberd alive under attack" kill -0 "$EPID"
check "healthz answers" curl -sf -m 5 -o /dev/null "$URL/healthz"
check "the burner's samples keep arriving ($B1 -> $B2)" test "$B2" -gt "$B1"
curl -sf "$URL/api/v1/folded" >"$TMP/all.folded"
curl -sf "$URL/api/v1/stats" >"$TMP/stats.json"
curl -sf "$URL/api/v1/folded?pid=$JITN" >"$TMP/jitn.folded"
stat_of() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, d))" "$TMP/stats.json" "$1"; }

# what emberd opened: never the FIFO, /etc/shadow, the root-only secret, and no mapped file by
# a path (map_files for all of them)
check "row 1: the FIFO is never opened" bash -c "! grep -E 'att/lib/x\.so' '$TMP/strace.log'"
check "row 4: /etc/shadow is never opened" bash -c "! grep -E 'shadow' '$TMP/strace.log'"
check "row 4: the root-only debug file is never opened" \
	bash -c "! grep -E 'rootonly|secret\.so' '$TMP/strace.log'"
check "row 4: the root-only symbol is never shown" \
	bash -c "! grep -q root_only_secret_alpha_hunter2 '$TMP/all.folded'"
if [ "$USERNS" = 1 ]; then
	check "rows 1/4: the attacker itself is named (hostile_burn)" grep -q hostile_burn "$TMP/all.folded"
fi
F=$(stat_of "mapped_files['opened']")
check "mapped files opened through map_files ($F)" test "$F" -gt 0
# row 2: alive is the test; what the shrinking file gave is counted (short read) or named
SR=$(stat_of "symbols['elf_short_reads']")
echo "# row 2: elf_short_reads $SR"
# row 3
TB=$(stat_of "symbols['elf_too_big']")
check "row 3: the 10 M-symbol table refused, counted (elf_too_big $TB)" test "$TB" -ge 1
UTB=$(stat_of "unwind['too_big']")
check "row 3: the 2 GiB .debug_frame refused before it is inflated, counted (unwind.too_big $UTB)" \
	test "$UTB" -ge 1
PTB=$(stat_of "symbols['perfmap_skipped']['too_big']")
check "row 3: the 64 MiB perf map kept to max_perfmap_entries, counted (too_big $PTB)" test "$PTB" -ge 1
# row 8
check "row 8: nobody's perf map does not name root's JIT" \
	bash -c "! grep -q spoofed_by_nobody '$TMP/all.folded'"
OW=$(stat_of "symbols['perfmap_skipped']['owner']")
check "row 8: refused, counted (perfmap_skipped.owner $OW)" test "$OW" -ge 1
check "row 8: nobody's own JIT is named from its own perf map" \
	grep -q 'jit_alpha' "$TMP/jitn.folded"
# row 5: nobody's library sampled on its tmpfs, the tmpfs gone; then root's on a new one. The
# kernel gives the new tmpfs the lowest free device number: another mount in between (other
# tests) takes it, so up to 3 tries for the same device and inode
KEY_A=x KEY_R=y
for _ in 1 2 3; do
	[ "$USERNS" = 1 ] || break
	# nobody's process runs until its library's unwind table is in use (a stack through
	# hostile_spin into its callee: no frame pointers there), at most 20 s: else there is no
	# stale table to drop (files_changed 0: ZV waited 4 s, once in 22 runs too short; then ZF1
	# waited for any table built since, and another process's came first beside the other lane)
	"${AS_NOBODY[@]}" unshare -Urm sh -c '
		mount -t tmpfs none "$1/mnt" && cp "$1/lib5.so" "$1/mnt/lib.so" || exit 1
		echo "$(stat -c "%d %i %s" "$1/mnt/lib.so") $$"
		exec "$2" dlcall 20 "$1/mnt/lib.so" hostile_spin' sh "$A" "$W/hostile" >"$TMP/r5a.out" 2>&1 &
	NP=$!
	NPID= t5=$SECONDS
	while [ $((SECONDS - t5)) -lt 20 ] && kill -0 "$NP" 2>/dev/null; do
		[ -n "$NPID" ] || read -r _ _ _ NPID <"$TMP/r5a.out" 2>/dev/null
		[ -n "$NPID" ] && curl -sf "$URL/api/v1/folded?pid=$NPID" |
			grep -q 'hostile_spin;attacker_named_function_zzzzzz' && break
		sleep 0.5
	done
	echo "# row 5: nobody's library walked with its table after $((SECONDS - t5)) s"
	read -r _ _ _ NPID <"$TMP/r5a.out"
	[ -n "$NPID" ] && kill "$NPID" 2>/dev/null
	wait "$NP"
	mount -t tmpfs none "$TMP/rt"
	cp "$TMP/root5.so" "$TMP/rt/lib.so"
	read -r D5 I5 S5 APID <"$TMP/r5a.out"
	KEY_A="$D5 $I5 $S5"
	KEY_R=$(stat -c "%d %i %s" "$TMP/rt/lib.so")
	echo "# row 5: nobody's library: $KEY_A; root's: $KEY_R"
	[ "$KEY_A" = "$KEY_R" ] && break
	umount "$TMP/rt"
done
if [ "$KEY_A" = "$KEY_R" ]; then
	"$W/hostile" dlcall 4 "$TMP/rt/lib.so" hostile_spin >"$TMP/r5r.out" 2>&1 &
	R5=$!
	PIDS+=($R5)
	wait "$R5"
	curl -sf "$URL/api/v1/folded?pid=$R5" >"$TMP/r5.folded"
	curl -sf "$URL/api/v1/folded?pid=$APID" >"$TMP/r5a.folded"
	curl -sf "$URL/api/v1/stats" >"$TMP/stats.json"
	umount "$TMP/rt"
fi
if [ "$USERNS" = 0 ]; then
	skip "row 5: a recycled device and inode" "no unprivileged user namespace with mounts here"
elif [ "$KEY_A" = "$KEY_R" ]; then
	check "row 5: nobody's process was named with its library's functions (cached)" \
		grep -q attacker_named_function "$TMP/r5a.folded"
	check "row 5: root's process is named with its own functions" \
		grep -q root_named_function_rrrrrrrrrrr "$TMP/r5.folded"
	check "row 5: ... never with nobody's" \
		bash -c "! grep -q attacker_named_function '$TMP/r5.folded'"
	CH=$(stat_of "symbols['elf_changed']")
	check "row 5: the stale image dropped, counted (elf_changed $CH)" test "$CH" -ge 1
	# the unwinder's table of nobody's file is not root's either (elf/filecache.h's one rule)
	UCH=$(stat_of "unwind['files_changed']")
	check "row 5: the stale unwind table dropped, counted (unwind.files_changed $UCH)" \
		test "$UCH" -ge 1
else
	skip "row 5: same device and inode" "the kernel gave other numbers ($KEY_A / $KEY_R)"
fi
HWM=$(awk '/VmHWM/ { print $2 }' /proc/"$EPID"/status)
echo "# emberd VmHWM ${HWM} kB"
if [ "${EMBER_ASAN:-0}" = 1 ]; then
	echo "# (ASan build: its shadow memory and quarantine make RSS no measure of the bounds)"
else
	check "emberd's peak RSS under 256 MiB (${HWM} kB; the unit's MemoryMax is 512M)" \
		test "$HWM" -lt 262144
fi
kill "$STRACE_PID" 2>/dev/null
wait "$STRACE_PID" 2>/dev/null
kill -TERM "$EPID"
for _ in $(seq 50); do kill -0 "$EPID" 2>/dev/null || break; sleep 0.1; done
check "emberd exits on SIGTERM" bash -c "! kill -0 $EPID 2>/dev/null"
grep -E 'error|warning' "$TMP/emberd.log" | head -5 | sed 's/^/# /'
done_testing
