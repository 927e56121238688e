#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make install / uninstall under DESTDIR and PREFIX; the manuals render without warnings and
# cover every config key and every ember command; the shipped config documents every key.
. "$(dirname "$0")/../lib.sh"
[ -x "$EMBER" ] || skip_all "no $EMBER"
command -v groff >/dev/null || skip_all "no groff"
D=$TMP/root
if make -s -C "$SRCDIR" O="$OUTPUT" install DESTDIR="$D" PREFIX=/usr >"$TMP/install.log" 2>&1; then
	ok "make install DESTDIR PREFIX=/usr"
else
	not_ok "make install"; sed 's/^/# /' "$TMP/install.log"
fi
for f in usr/bin/ember etc/ember/emberd.conf lib/systemd/system/emberd.service \
	usr/share/man/man1/ember.1 usr/share/man/man5/emberd.conf.5 usr/share/man/man8/emberd.8; do
	check "installed $f" test -s "$D/$f"
done
[ -x "$EMBERD" ] && check "installed usr/sbin/emberd" test -x "$D/usr/sbin/emberd"
check "unit's ExecStart follows PREFIX" grep -q '^ExecStart=/usr/sbin/emberd ' "$D/lib/systemd/system/emberd.service"
check "config installed 0644" test "$(stat -c %a "$D/etc/ember/emberd.conf")" = 644
# an edited config survives a reinstall and an uninstall
echo "# local edit" >>"$D/etc/ember/emberd.conf"
make -s -C "$SRCDIR" O="$OUTPUT" install DESTDIR="$D" PREFIX=/usr >/dev/null 2>&1
check "reinstall keeps an edited config" grep -q "# local edit" "$D/etc/ember/emberd.conf"
make -s -C "$SRCDIR" O="$OUTPUT" uninstall DESTDIR="$D" PREFIX=/usr >"$TMP/un.log" 2>&1
check "uninstall leaves only the edited config" test "$(find "$D" -type f | sed "s|^$D/||")" = etc/ember/emberd.conf
rm -f "$D/etc/ember/emberd.conf"
make -s -C "$SRCDIR" O="$OUTPUT" install DESTDIR="$D" PREFIX=/usr >/dev/null 2>&1
make -s -C "$SRCDIR" O="$OUTPUT" uninstall DESTDIR="$D" PREFIX=/usr >/dev/null 2>&1
check "uninstall removes everything it installed" test -z "$(find "$D" -type f)"

for m in "$SRCDIR"/docs/man/*.[0-9]; do
	out=$(groff -man -ww -z "$m" 2>&1)
	check "$(basename "$m") renders without warnings" test -z "$out"
	[ -n "$out" ] && sed 's/^/# /' <<<"$out"
done
# every ember command has its section in ember(1)
for c in $("$EMBER" help 2>&1 | awk '/^  [a-z]/ {print $1}'); do
	check "ember.1 has a section for '$c'" grep -q "^\.SS ember $c\b" "$SRCDIR/docs/man/ember.1"
done
# every config key is in the shipped config (in its section) and in emberd.conf(5)
if [ -x "$EMBERD" ]; then
	missing_conf= missing_man=
	while IFS=' ' read -r key _; do
		case $key in \[*) sec=${key#[}; sec=${sec%]}; continue ;; '') continue ;; esac
		awk -v s="[$sec]" -v k="$key" '$0 == s { in_s = 1; next } /^\[/ { in_s = 0 }
			in_s && $1 == k && $2 == "=" { f = 1 } END { exit !f }' \
			"$SRCDIR/config/emberd.conf" || missing_conf="$missing_conf $sec.$key"
		grep -qE "^\.BR? .*\b$key\b" "$SRCDIR/docs/man/emberd.conf.5" || missing_man="$missing_man $sec.$key"
	done < <("$EMBERD" --print-config)
	check "config/emberd.conf documents every key${missing_conf:+ (missing:$missing_conf)}" test -z "$missing_conf"
	check "emberd.conf(5) documents every key${missing_man:+ (missing:$missing_man)}" test -z "$missing_man"
	check "the shipped config is valid" "$EMBERD" --config "$SRCDIR/config/emberd.conf" --print-config >/dev/null
fi
done_testing
