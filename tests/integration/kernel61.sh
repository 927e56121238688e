# SPDX-License-Identifier: MIT
# Sourced by test_kernel61.sh: Debian's own 6.1 kernel
# (linux-image-6.1.0-*-amd64) booted under QEMU with software emulation (TCG: no KVM needed) from
# a busybox initramfs built here in $R, whose /init prints its results on the serial console
# between markers ("K61 ...", K61-BEGIN-NAME ... K61-END-NAME) that the test reads back.
# Packages (scripts/packages.txt, make deps): linux-image-amd64, qemu-system-x86, busybox-static.

# k61_prereqs: root, build/emberd, the newest 6.1 kernel in /boot (KERNEL, KVER), QEMU, a static
# busybox (BUSYBOX) and cpio; skips the test otherwise (failures under CI=true)
k61_prereqs() {
	require_root "the test reads /boot and builds an initramfs with emberd"
	[ -x "$EMBERD" ] || skip_all "no $EMBERD"
	KERNEL=$(ls -1 /boot/vmlinuz-6.1.0-*-amd64 2>/dev/null | sort -V | tail -1)
	[ -n "$KERNEL" ] || skip_all "no /boot/vmlinuz-6.1.0-*-amd64 (linux-image-amd64, make deps)"
	KVER=$(basename "$KERNEL" | sed 's/^vmlinuz-//')
	command -v qemu-system-x86_64 >/dev/null || skip_all "no qemu-system-x86_64 (qemu-system-x86)"
	BUSYBOX=$(command -v busybox)
	[ -n "$BUSYBOX" ] && ldd "$BUSYBOX" 2>&1 | grep -q 'not a dynamic' ||
		skip_all "no static busybox (busybox-static)"
	command -v cpio >/dev/null || skip_all "no cpio"
}

# k61_root: the image's tree, R=$TMP/root, with busybox as /bin/busybox and emberd as /bin/emberd
k61_root() {
	R=$TMP/root
	mkdir -p "$R"/{bin,proc,sys,tmp,dev,lib64,etc}
	cp "$BUSYBOX" "$R/bin/busybox"
	cp "$EMBERD" "$R/bin/emberd"
}

# k61_libs BIN...: every shared library the programs BIN (paths in $R) load, copied into $R at
# the paths ld.so looks for them (and libgcc_s, which glibc loads at run time for
# pthread_cancel: emberd's shutdown guard)
k61_libs() {
	local b
	for b; do
		ldd "$b" | awk '/=> \// { print $3 } /^\t\/[^ ]+ \(/ { print $1 }'
	done | { cat; readlink -f /lib/x86_64-linux-gnu/libgcc_s.so.1 | sed 's|^/usr||'; } | sort -u | while read -r lib; do
		mkdir -p "$R$(dirname "$lib")"
		cp -L "$lib" "$R$lib"
	done
}

# k61_init_head: the first lines of an /init: busybox's applets, the file systems emberd reads
# (proc, sysfs, bpf), loopback up; prints "K61 uname RELEASE" and "K61 btf yes"
k61_init_head() {
	cat <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
mount -t tmpfs tmp /tmp
mount -t bpf bpf /sys/fs/bpf 2>/dev/null
ip link set lo up
echo "K61 uname $(uname -r)"
[ -r /sys/kernel/btf/vmlinux ] && echo "K61 btf yes"
EOF
}

# k61_init_serves PORT: /init's wait (up to 60 s) for the emberd started as $EP to serve
# /healthz on 127.0.0.1:PORT; when it is gone meanwhile (a program the verifier refused), its
# log (section LOG) at once and a power-off, not the guest's timeout
k61_init_serves() {
	cat <<EOF
i=0
until wget -q -O /dev/null http://127.0.0.1:$1/healthz; do
	i=\$((i + 1)); [ \$i -ge 60 ] && break; sleep 1
	# emberd gone (a program the verifier refused): its log now, not after the guest's timeout
	if ! kill -0 \$EP 2>/dev/null; then
		echo K61-BEGIN-LOG; cat /tmp/emberd.log; echo K61-END-LOG; echo K61 done; poweroff -f
	fi
done
echo "K61 emberd serves after \$i s"
EOF
}

# k61_boot LIMIT MEM [QEMU ARGS...]: packs $R (its /init written) into $TMP/initrd.gz and boots
# KERNEL from it on 2 emulated CPUs with MEM MiB, killed after LIMIT s; the console in
# $TMP/console.log, QEMU's exit status in K61_RC, the seconds it took in K61_TOOK
k61_boot() {
	local limit=$1 mem=$2 t0
	shift 2
	chmod +x "$R/init"
	(cd "$R" && find . | cpio -o -H newc --quiet | gzip -1) >"$TMP/initrd.gz"
	echo "# kernel $KERNEL, initramfs $(($(stat -c %s "$TMP/initrd.gz") / 1024)) KiB"
	t0=$SECONDS
	timeout -k 5 "$limit" qemu-system-x86_64 -machine q35,accel=tcg -cpu max -smp 2 -m "$mem" \
		-kernel "$KERNEL" -initrd "$TMP/initrd.gz" "$@" \
		-append "console=ttyS0 rdinit=/init panic=-1 quiet loglevel=3" \
		-display none -monitor none -serial "file:$TMP/serial.log" -no-reboot >"$TMP/qemu.log" 2>&1
	K61_RC=$?
	K61_TOOK=$((SECONDS - t0))
	tr -d '\r' <"$TMP/serial.log" >"$TMP/console.log"
	echo "# qemu: exit $K61_RC after $K61_TOOK s"
}

# k61_powered_off LIMIT: the check that the guest got to its end ("K61 done") and QEMU exited 0
# within LIMIT s; otherwise the console's last lines and QEMU's own output
k61_powered_off() {
	check "the guest powered off within $1 s ($K61_TOOK s, qemu exit $K61_RC)" \
		sh -c "[ $K61_RC -eq 0 ] && grep -q '^K61 done' '$TMP/console.log'" ||
		{ tail -30 "$TMP/console.log" | sed 's/^/#   /'; sed 's/^/#   qemu: /' "$TMP/qemu.log"; }
}

# section NAME: the console's lines between K61-BEGIN-NAME and K61-END-NAME
section() { sed -n "/^K61-BEGIN-$1\$/,/^K61-END-$1\$/p" "$TMP/console.log" | sed '1d;$d'; }

# After k61_powered_off: the guest ran Debian's 6.1 (checked), emberd's log in $TMP/emberd.log
# and printed; when the program was refused, the verifier's last lines (the reason is at the end)
k61_kernel_and_log() {
	check "the guest runs Debian's 6.1 kernel ($(awk '/^K61 uname/ { print $3 }' "$TMP/console.log"))" \
		grep -q '^K61 uname 6\.1\.' "$TMP/console.log"
	section LOG >"$TMP/emberd.log"
	if grep -q 'BPF program load failed' "$TMP/emberd.log"; then
		grep -v 'debug: libbpf' "$TMP/emberd.log" | tail -40 | sed 's/^/#   emberd: /'
	else
		sed 's/^/#   emberd: /' "$TMP/emberd.log" | head -20
	fi
}
