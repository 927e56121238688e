#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# lane: beside (light: the service's configuration, TLS, tokens, reload and sd_notify; no time, share or CPU bound)
# emberd as a production service:
#   - --check-config: exit 0 and the effective configuration; bad values with file:line, exit 2;
#   - a non-loopback listen address without TLS + token refuses to start; http.insecure starts
#     with a warning (in a network namespace of our own: 10.231.x.1 on its lo);
#   - bearer token: 401 without it or with a wrong one (no details), 200 with it, /healthz open;
#     a token file readable by others is refused;
#   - TLS with a certificate made here by openssl: curl --cacert + token works on the namespace's
#     address, plain HTTP and unverified clients do not;
#   - SIGHUP: a rotated token and a new log level apply live, a new frequency "needs a restart";
#   - sd_notify: READY=1, WATCHDOG=1, RELOADING=1 and STOPPING=1 reach $NOTIFY_SOCKET;
#   - least privilege: /proc/PID/status shows only the kept capabilities (also as security.user
#     = nobody), and stacks of another user's processes (burn, and JIT code through its perf map)
#     still resolve by name, also inside an emulation of the unit's sandbox (private /tmp,
#     read-only /, no_new_privs, the unit's bounding set).
. "$(dirname "$0")/../lib.sh"
require_root "network namespaces, BPF and capabilities"
[ -x "$EMBERD" ] || skip_all "no $EMBERD"
for t in curl openssl ip setpriv python3; do command -v $t >/dev/null || skip_all "no $t"; done
W=$OUTPUT/workloads
[ -x "$W/burn" ] && [ -x "$W/jit" ] || skip_all "workloads not built (make workloads)"
for_nobody burn jit # the checkout may sit where nobody cannot enter
W=$NOBODY_BIN
zcat "$SHARED/corpus/examples/example-perf-stacks.txt.gz" >"$TMP/perf.txt" || skip_all "no corpus"

NS=ember-svc-$$
ADDR=10.231.$(($$ % 200 + 20)).1
trap 'stop_all; ip netns del "$NS" 2>/dev/null; cleanup_tmp' EXIT
# the address sits on the namespace's own lo (no dummy/veth module needed): reachable only
# inside the namespace, and not 127.0.0.0/8, so emberd's policy treats it as non-loopback
ip netns add "$NS" && ip -n "$NS" link set lo up && ip -n "$NS" addr add "$ADDR/32" dev lo ||
	skip_all "cannot create a network namespace"
# daemons are started with `ip netns exec` directly (not through inns) so that $! is their pid
inns() { ip netns exec "$NS" "$@"; }

# stats_matching PORT WORD...: the /api/v1/stats counters whose dotted path holds one of the
# words, as "#   stats: PATH VALUE" lines (a failed check's diagnostics)
stats_matching() {
	local port=$1
	shift
	curl -s "http://127.0.0.1:$port/api/v1/stats" | python3 -c 'import json, sys
def walk(o, path=""):
    if isinstance(o, dict):
        for k, v in o.items(): walk(v, path + "." + k if path else k)
    elif any(w in path for w in sys.argv[1:]): print("#   stats:", path, o)
walk(json.load(sys.stdin))' "$@" 2>&1 | head -60
}

# code URL [curl args]: the HTTP status ("000" when the connection fails); body in $TMP/body
code() { local u=$1; shift; curl -s -o "$TMP/body" -w '%{http_code}' --max-time 5 "$@" "$u"; }

# test material: token (root, 0600), certificate for the namespace address and 127.0.0.1
head -c 32 /dev/urandom | base64 | tr -d '\n=' >"$TMP/token"
chmod 600 "$TMP/token"
TOKEN=$(cat "$TMP/token")
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=emberd \
	-addext "subjectAltName=IP:$ADDR,IP:127.0.0.1" -keyout "$TMP/key.pem" -out "$TMP/cert.pem" \
	2>/dev/null || skip_all "openssl cannot make a certificate"
chmod 600 "$TMP/key.pem"

# --- --check-config ---------------------------------------------------------------------------
cat >"$TMP/good.conf" <<EOF
[http]
listen = $ADDR:8443
tls_cert = $TMP/cert.pem
tls_key = $TMP/key.pem
auth_token_file = $TMP/token
[filter]
exclude_comms = sshd,kworker/*
EOF
"$EMBERD" --config "$TMP/good.conf" -F 49 --check-config >"$TMP/check.out" 2>"$TMP/check.err"
check "--check-config: valid configuration exits 0" test $? -eq 0
check "--check-config prints the effective configuration (file and flag)" \
	grep -qx "frequency = 49" "$TMP/check.out"
check "--check-config: file values in the output" grep -qx "exclude_comms = sshd,kworker/\*" "$TMP/check.out"
printf '[http]\nmax_connections = 5\n\n[sampling]\nfrequency = lots\n' >"$TMP/bad.conf"
"$EMBERD" --config "$TMP/bad.conf" --check-config >/dev/null 2>"$TMP/bad.err"
check "--check-config: bad value exits 2" test $? -eq 2
check "bad value named with file:line" grep -q "bad.conf:5: sampling.frequency: 'lots'" "$TMP/bad.err"
printf '[http]\nlisten_to = 1\n' >"$TMP/unknown.conf"
"$EMBERD" --config "$TMP/unknown.conf" --check-config >/dev/null 2>"$TMP/unknown.err"
check "unknown key is an error with file:line" grep -q "unknown.conf:2: unknown key 'http.listen_to'" "$TMP/unknown.err"
cp "$TMP/token" "$TMP/token-open"; chmod 644 "$TMP/token-open"
"$EMBERD" -o "http.auth_token_file=$TMP/token-open" --check-config >/dev/null 2>"$TMP/open.err"
check "--check-config refuses a world-readable token file" \
	grep -q "accessible to group or others" "$TMP/open.err"

# --- the listen policy ------------------------------------------------------------------------
ip netns exec "$NS" "$EMBERD" --listen "$ADDR:18080" --replay "$TMP/perf.txt" >"$TMP/refuse.log" 2>&1 &
RP=$!; PIDS+=($RP)
for _ in $(seq 100); do kill -0 $RP 2>/dev/null || break; sleep 0.05; done
if kill -0 $RP 2>/dev/null; then
	not_ok "non-loopback listen without TLS/token refuses to start (still running)"
else
	wait $RP; rc=$?
	check "non-loopback listen without TLS/token refuses to start with exit status 2, a configuration error the unit does not retry ($rc)" test $rc -eq 2
	check "the refusal says why" grep -q "refusing to listen on non-loopback '$ADDR:18080'" "$TMP/refuse.log"
fi
check "nothing listens after the refusal" test "$(inns curl -s -o /dev/null -w '%{http_code}' \
	--max-time 2 "http://$ADDR:18080/healthz")" = 000
"$EMBERD" --listen "$ADDR:18080" -o http.auth_token_file="$TMP/token" --replay "$TMP/perf.txt" \
	>"$TMP/refuse2.log" 2>&1
rc=$?
check "a token without TLS is refused too (exit $rc)" bash -c "grep -q 'without TLS' '$TMP/refuse2.log' && test $rc -eq 2"
ip netns exec "$NS" "$EMBERD" --listen "$ADDR:18081" -o http.insecure=yes --replay "$TMP/perf.txt" \
	>"$TMP/insecure.log" 2>&1 &
PIDS+=($!)
wait_log "$TMP/insecure.log" started
check "http.insecure = yes starts, with a warning" grep -q "warning: INSECURE" "$TMP/insecure.log"
check "... and serves on the namespace address" test "$(inns curl -s -o /dev/null -w '%{http_code}' \
	"http://$ADDR:18081/healthz")" = 200
kill "${PIDS[-1]}"

# --- bearer token on loopback -----------------------------------------------------------------
PORT=$(free_port)
"$EMBERD" --listen "127.0.0.1:$PORT" -o http.auth_token_file="$TMP/token" \
	--replay "$TMP/perf.txt" >"$TMP/auth.log" 2>&1 &
PIDS+=($!)
wait_log "$TMP/auth.log" started || sed 's/^/# /' "$TMP/auth.log"
U=http://127.0.0.1:$PORT
check "token: /healthz needs none (200)" test "$(code "$U/healthz")" = 200
for p in /api/v1/folded /api/v1/stats /no/such/endpoint /assetsx /api/v1/captures/1/folded; do
	check "token: $p without it is 401" test "$(code "$U$p")" = 401
done
check "token: 401 body has no details" grep -qx '{"error": "unauthorized", "status": 401}' "$TMP/body"
# the dashboard's page and files hold no data; the page asks for the token (tests/browser)
check "token: the dashboard page / needs none (200)" test "$(code "$U/")" = 200
check "token: its script /assets/app.js needs none (200)" test "$(code "$U/assets/app.js")" = 200
check "token: an unknown /assets/ file is 404" test "$(code "$U/assets/nope")" = 404
check "token: a POST without it is 401 (refused on the headers)" \
	test "$(head -c 200000 /dev/zero | tr '\0' a | code "$U/api/v1/captures" -X POST --data-binary @-)" = 401
check "token: wrong token is 401" test "$(code "$U/api/v1/folded" -H "Authorization: Bearer ${TOKEN}x")" = 401
check "token: Basic scheme is 401" test "$(code "$U/api/v1/folded" -u "user:$TOKEN")" = 401
check "token: right token is 200" test "$(code "$U/api/v1/folded" -H "Authorization: Bearer $TOKEN")" = 200
check "token: the body is the profile" grep -q ' [0-9]*$' "$TMP/body"
curl -s -D "$TMP/h401" -o /dev/null "$U/api/v1/folded"
check "token: 401 carries WWW-Authenticate: Bearer" grep -qi '^WWW-Authenticate: Bearer' "$TMP/h401"
# request hardening: URL beyond http.max_request, an over-long parameter, paths that try to
# reach the filesystem
AUTH=(-H "Authorization: Bearer $TOKEN")
check "hardening: a 70 KB URL is refused (414)" test "$(code "$U/api/v1/folded?comm=$(head -c 70000 /dev/zero | tr '\0' a)" "${AUTH[@]}")" = 414
check "hardening: a 2 KB parameter is a 400" test "$(code "$U/api/v1/folded?comm=$(head -c 2000 /dev/zero | tr '\0' a)" "${AUTH[@]}")" = 400
for p in /assets/../../../etc/passwd /assets/%2e%2e/%2e%2e/etc/passwd /../etc/passwd; do
	check "hardening: $p is a 404" test "$(code "$U$p" --path-as-is "${AUTH[@]}")" = 404
done

kill "${PIDS[-1]}"; wait "${PIDS[-1]}" 2>/dev/null

# --- SIGHUP (rotate the token, change the level and the frequency) and sd_notify ----------------
NEWTOKEN=$(head -c 32 /dev/urandom | base64 | tr -d '\n=')
printf '[log]\nlevel = info\n[sampling]\nfrequency = 99\n[http]\nauth_token_file = %s\n' "$TMP/token" >"$TMP/hup.conf"
# notify_listener SOCKET LOG SECONDS: a fake NOTIFY_SOCKET (a path, or "@name" for an abstract
# socket) that appends what emberd tells systemd to LOG, one datagram per line, after a first
# line "bound"; it quits after SECONDS without a datagram
notify_listener() {
	python3 - "$1" "$2" "$3" <<'EOF' &
import socket, sys
name, log, secs = sys.argv[1], sys.argv[2], float(sys.argv[3])
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("\0" + name[1:] if name.startswith("@") else name)
s.settimeout(secs)
with open(log, "a") as out:
    out.write("bound\n"); out.flush()
    try:
        while True:
            out.write(s.recv(4096).decode() + "\n"); out.flush()
    except socket.timeout:
        pass
EOF
	PIDS+=($!)
	wait_log "$2" bound
}
notify_listener "$TMP/notify.sock" "$TMP/notify.log" 20
NOTIFY_SOCKET=$TMP/notify.sock WATCHDOG_USEC=1000000 "$EMBERD" --listen "127.0.0.1:$PORT" \
	--config "$TMP/hup.conf" --replay "$TMP/perf.txt" >"$TMP/hup.log" 2>&1 &
HP=$!; PIDS+=($HP)
wait_log "$TMP/hup.log" started
check "before SIGHUP: old token 200" test "$(code "$U/api/v1/stats" -H "Authorization: Bearer $TOKEN")" = 200
check "before SIGHUP: a 1 h range is fine" test "$(code "$U/api/v1/folded?from=-3600s" -H "Authorization: Bearer $TOKEN")" = 200
printf '%s\n' "$NEWTOKEN" >"$TMP/token"
printf '[log]\nlevel = debug\n[sampling]\nfrequency = 49\n[http]\nauth_token_file = %s\nmax_range = 60\n' "$TMP/token" >"$TMP/hup.conf"
kill -HUP $HP
wait_log "$TMP/hup.log" "reload: .* change(s) applied"
check "SIGHUP: the rotated token works" test "$(code "$U/api/v1/stats" -H "Authorization: Bearer $NEWTOKEN")" = 200
check "SIGHUP: the old token is 401" test "$(code "$U/api/v1/stats" -H "Authorization: Bearer $TOKEN")" = 401
check "SIGHUP: log.level applied" grep -q "reload: 'log.level' changed: applied" "$TMP/hup.log"
# the same URL as before: the reload flushed the micro-cache (replay answers live 60 s in it)
check "SIGHUP: http.max_range applied (1 h range now 413, not the cached 200)" \
	test "$(code "$U/api/v1/folded?from=-3600s" -H "Authorization: Bearer $NEWTOKEN")" = 413
check "SIGHUP: frequency needs a restart" grep -q "'sampling.frequency' changed: needs a restart" "$TMP/hup.log"
printf '[log]\nlevel = loud\n' >"$TMP/hup.conf"
kill -HUP $HP
wait_log "$TMP/hup.log" "keeping the running configuration"
check "SIGHUP: a bad file keeps the running configuration (file:line)" \
	grep -q "hup.conf:2: log.level: 'loud'" "$TMP/hup.log"
check "SIGHUP: ... and the token still works" test "$(code "$U/api/v1/stats" -H "Authorization: Bearer $NEWTOKEN")" = 200
sleep 0.6
kill $HP; wait $HP 2>/dev/null
sleep 0.2
for m in READY=1 WATCHDOG=1 RELOADING=1 STOPPING=1; do
	check "sd_notify: $m" grep -q "^$m" "$TMP/notify.log"
done
# an abstract socket ("@name"), and a watchdog asked of another process (WATCHDOG_PID): READY
# and STOPPING reach it, no WATCHDOG=1
notify_listener "@ember-notify-$$" "$TMP/notify2.log" 6
NP=${PIDS[-1]}
NOTIFY_SOCKET=@ember-notify-$$ WATCHDOG_USEC=1000000 WATCHDOG_PID=1 "$EMBERD" \
	--listen "127.0.0.1:$PORT" --replay "$TMP/perf.txt" >"$TMP/abs.log" 2>&1 &
AP=$!; PIDS+=($AP)
wait_log "$TMP/abs.log" started
sleep 0.5
kill $AP; wait $AP 2>/dev/null
wait $NP 2>/dev/null
check "sd_notify to an abstract socket: READY=1 and STOPPING=1" \
	sh -c "grep -q '^READY=1' '$TMP/notify2.log' && grep -q '^STOPPING=1' '$TMP/notify2.log'"
check "sd_notify: no WATCHDOG=1 when WATCHDOG_PID is another process" \
	sh -c "! grep -q '^WATCHDOG=1' '$TMP/notify2.log'"

# --- TLS on the namespace address ----------------------------------------------------------------
printf '%s\n' "$TOKEN" >"$TMP/token"
ip netns exec "$NS" "$EMBERD" --config "$TMP/good.conf" --listen "$ADDR:18443" --replay "$TMP/perf.txt" \
	>"$TMP/tls.log" 2>&1 &
PIDS+=($!)
wait_log "$TMP/tls.log" started || sed 's/^/# /' "$TMP/tls.log"
check "TLS + token on a non-loopback address starts" grep -q "http: TLS, bearer token required" "$TMP/tls.log"
check "TLS: curl --cacert with the token is 200" test "$(inns curl -s -o "$TMP/body" -w '%{http_code}' \
	--cacert "$TMP/cert.pem" -H "Authorization: Bearer $TOKEN" "https://$ADDR:18443/api/v1/folded")" = 200
check "TLS: the body is the profile" grep -q ' [0-9]*$' "$TMP/body"
check "TLS: curl --cacert without the token is 401" test "$(inns curl -s -o /dev/null -w '%{http_code}' \
	--cacert "$TMP/cert.pem" "https://$ADDR:18443/api/v1/folded")" = 401
check "TLS: an unverified certificate is rejected by curl" test "$(inns curl -s -o /dev/null \
	-w '%{http_code}' "https://$ADDR:18443/healthz")" = 000
check "TLS: plain HTTP gets no answer" test "$(inns curl -s -o /dev/null -w '%{http_code}' \
	--max-time 3 "http://$ADDR:18443/healthz")" = 000
t0=$(date +%s)
for _ in $(seq 40); do inns curl -s -o /dev/null --max-time 2 "http://$ADDR:18443/healthz"; done
windows=$(( ($(date +%s) - t0) / 10 + 2 ))	# 10 s windows the 41 handshakes may span
n=$(grep -c 'warning: http: Error' "$TMP/tls.log")
check "TLS: 41 bad handshakes log at most 10 lines per 10 s ($n lines, <= $windows windows)" \
	test "$n" -le $((windows * 10)) -a "$n" -lt 41
kill "${PIDS[-1]}"

# --- least privilege while sampling -------------------------------------------------------------
[ -r /sys/kernel/btf/vmlinux ] || { skip "least privilege" "no kernel BTF"; done_testing; }
want=$(printf '%016x' $(( (1<<2) | (1<<19) | (1<<34) | (1<<38) | (1<<39) | (1<<40) )))
last=$(cat /proc/sys/kernel/cap_last_cap)
[ "$last" -lt 40 ] && want=$(printf '%016x' $(( 0x$want & ((1 << (last + 1)) - 1) )))
for mode in root nobody; do
	PORT=$(free_port)
	extra=(-o filter.exclude_comms=burnx); [ $mode = nobody ] && extra=(-o security.user=nobody)
	# [filter]'s cgroups: a cgroup v2 of our own, excluded (its path as /proc/PID/cgroup's "0::"
	# line gives it: under the cgroup2 mount)
	CGT=
	CG2=$(cgroup2_mount)
	if [ $mode = root ] && [ -n "$CG2" ] && mkdir "$CG2/ember-filter-$$" 2>/dev/null; then
		CGT=/ember-filter-$$
		extra+=(-o "filter.exclude_cgroups=/nonexistent,$CGT")
	fi
	"$EMBERD" --listen "127.0.0.1:$PORT" "${extra[@]}" >"$TMP/priv-$mode.log" 2>&1 &
	EP=$!; PIDS+=($EP)
	wait_log "$TMP/priv-$mode.log" started || { sed 's/^/# /' "$TMP/priv-$mode.log"; not_ok "emberd ($mode) starts"; continue; }
	eff=$(awk '/^CapEff/ {print $2}' /proc/$EP/status)
	bnd=$(awk '/^CapBnd/ {print $2}' /proc/$EP/status)
	uid=$(awk '/^Uid/ {print $2}' /proc/$EP/status)
	check "privileges ($mode): CapEff $eff = $want" test "$eff" = "$want"
	check "privileges ($mode): CapBnd $bnd = $want" test "$bnd" = "$want"
	check "privileges ($mode): NoNewPrivs" grep -q '^NoNewPrivs:[[:space:]]*1' /proc/$EP/status
	[ $mode = nobody ] && check "privileges: runs as uid 65534" test "$uid" = 65534
	# another user's processes: a native burner and JIT code, alive until they are checked (what
	# is checked is their names under the dropped privileges; a process that ends before emberd
	# first reads it is test_proctrack's subject). env -C: the JIT's cwd is /tmp, its pid $!
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$W/burn" 60 >"$TMP/burn-$mode.out" 2>&1 &
	BP=$!; PIDS+=($BP)
	setpriv --reuid=nobody --regid=nogroup --clear-groups env -C /tmp "$W/jit" --seconds 60 \
		>"$TMP/jit-$mode.out" 2>&1 &
	JP=$!; PIDS+=($JP)
	# and time in the kernel for certain: the burners above may have none in the window (one CI
	# run named no kernel frame at all as nobody), /dev/zero's reads have it all
	setpriv --reuid=nobody --regid=nogroup --clear-groups timeout 3 dd if=/dev/zero of=/dev/null bs=1M \
		>/dev/null 2>&1 &
	PIDS+=($!)
	if [ $mode = root ]; then # [filter]: the same burner under another name is not stored
		cp "$W/burn" "$TMP/burnx"
		cp "$W/burn" "$TMP/burnc"
		# and not in a capture with its own sampler either, beside one that is (burnc): both
		# run until the capture is done (its sampler starts when the POST is answered, which
		# under load took longer than a 3 s burner lived)
		"$TMP/burnx" 60 >/dev/null 2>&1 &
		BX=$!; PIDS+=($BX)
		"$TMP/burnc" 60 >/dev/null 2>&1 &
		BC=$!; PIDS+=($BC)
		if [ -n "$CGT" ]; then # in the excluded cgroup from its first instruction
			cp "$W/burn" "$TMP/burng"
			sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" 60' sh "$CG2$CGT" "$TMP/burng" \
				>/dev/null 2>&1 &
			BG=$!; PIDS+=($BG)
		fi
		sleep 0.3
		tp=$(date +%s.%N)
		cap=$(curl -s -X POST -d "seconds=2&frequency=199" "http://127.0.0.1:$PORT/api/v1/captures" |
			python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])' 2>/dev/null)
		echo "# the capture's POST was answered in $(awk -v a="$tp" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s"
	fi
	sleep 3.3
	curl -s "http://127.0.0.1:$PORT/api/v1/folded?from=-10s" >"$TMP/folded-$mode"
	check "privileges ($mode): another user's burn stack resolves (main;rounds;burn_c)" \
		grep -q '^burn;.*main;rounds;burn_c' "$TMP/folded-$mode" || {
		grep '^burn;' "$TMP/folded-$mode" | sort -t' ' -k2 -rn | head -5 | sed 's/^/#   burn stack: /'
		stats_matching "$PORT" pid_ unresolved proc worker lag pending late
		grep -v '^$' "$TMP/priv-$mode.log" | tail -8 | sed 's/^/#   log: /'
	}
	if ! check "privileges ($mode): another user's JIT code resolves through its perf map" \
		grep -q ';jit_\(alpha\|beta\)_\[j\]' "$TMP/folded-$mode"; then
		sed 's/^/#   jit says: /' "$TMP/jit-$mode.out"
		grep '^jit;' "$TMP/folded-$mode" | sort -t' ' -k2 -rn | head -5 | sed 's/^/#   jit stack: /'
		stats_matching "$PORT" perfmap pid_ jit
	fi
	kn=$(grep -c '^dd;.*;\(ksys_read\|vfs_read\)_\[k\]' "$TMP/folded-$mode")
	check "privileges ($mode): kernel frames still named (dd's reads of /dev/zero: $kn stacks through vfs_read, $(grep -c '_\[k\]' "$TMP/folded-$mode") with kernel frames)" \
		test "$kn" -gt 0
	if [ $mode = root ]; then
		check "filter: an excluded comm is not stored" bash -c "! grep -q '^burnx;' '$TMP/folded-$mode'"
		f=$(curl -s "http://127.0.0.1:$PORT/api/v1/stats" | python3 -c \
			'import json,sys; print(json.load(sys.stdin)["service"]["filtered_samples"])')
		check "filter: excluded samples are counted on /api/v1/stats (${f:-?})" test "${f:-0}" -gt 0
		if [ -n "$CGT" ]; then
			check "filter: a process of an excluded cgroup ($CGT) is not stored, one beside it is" \
				bash -c "grep -q '^burnc;' '$TMP/folded-$mode' && ! grep -q '^burng;' '$TMP/folded-$mode'" ||
				{ grep -c '^burng;' "$TMP/folded-$mode" | sed 's/^/#   burng stacks: /'; sed 's/^/#   its cgroup: /' "/proc/$BG/cgroup"; }
		else
			skip "filter: an excluded cgroup" "no cgroup2 mount where a cgroup can be made"
		fi
		for _ in $(seq 100); do
			st=$(curl -s "http://127.0.0.1:$PORT/api/v1/captures/$cap" | python3 -c \
				'import json,sys; print(json.load(sys.stdin)["state"])' 2>/dev/null)
			[ "$st" = running ] || break
			sleep 0.2
		done
		kill "$BX" "$BC" 2>/dev/null
		if [ -n "$CGT" ]; then
			kill "$BG" 2>/dev/null; wait "$BG" 2>/dev/null
			rmdir "$CG2$CGT" 2>/dev/null
		fi
		curl -s "http://127.0.0.1:$PORT/api/v1/captures/$cap/folded" >"$TMP/capture-$mode"
		check "filter: a 199 Hz capture ($cap, $st) has a burner but not the excluded comm" \
			bash -c "grep -q '^burnc;' '$TMP/capture-$mode' && ! grep -q '^burnx;' '$TMP/capture-$mode'" ||
			awk '{ n = $NF; split($0, f, ";"); c[f[1]] += n } END { for (k in c) print "#   capture: " c[k], k }' \
				"$TMP/capture-$mode" | sort -k3 -rn | head -12
	fi
	kill $BP $JP $EP; wait $EP 2>/dev/null
	check "privileges ($mode): the drop is logged" grep -q "privileges: running as uid" "$TMP/priv-$mode.log"
done

# --- the unit's sandbox, emulated: PrivateTmp (a tmpfs on /tmp), ProtectSystem=strict (/ read-
# only), NoNewPrivileges and the unit's capability bounding set. JIT perf maps in the host's
# /tmp and other users' binaries must still resolve (through /proc/PID/root).
PORT=$(free_port)
bset=-all,+bpf,+perfmon,+sys_ptrace,+dac_read_search,+syslog,+checkpoint_restore
# the tmpfs hides /tmp: run a copy of emberd from outside it (the checkout may live in /tmp)
SBIN=$(mktemp -d /var/tmp/ember-sandbox.XXXXXX)
cp "$EMBERD" "$SBIN/emberd"
unshare --mount --propagation private -- sh -c 'mount -t tmpfs none /tmp && mount -o remount,bind,ro / &&
	exec setpriv --no-new-privs --bounding-set "$1" --inh-caps -all -- "$2" --listen "127.0.0.1:$3"' \
	sandbox "$bset" "$SBIN/emberd" "$PORT" >"$TMP/sandbox.log" 2>&1 &
EP=$!; PIDS+=($EP)
if wait_log "$TMP/sandbox.log" started; then
	check "sandbox: CapEff reduced to the kept set" test "$(awk '/^CapEff/ {print $2}' /proc/$EP/status)" = "$want"
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$W/burn" 60 >/dev/null 2>&1 &
	BP=$!; PIDS+=($BP)
	setpriv --reuid=nobody --regid=nogroup --clear-groups env -C /tmp "$W/jit" --seconds 60 >/dev/null 2>&1 &
	JP=$!; PIDS+=($JP)
	sleep 3.3
	curl -s "http://127.0.0.1:$PORT/api/v1/folded?from=-10s" >"$TMP/folded-sandbox"
	check "sandbox: another user's JIT perf map (host /tmp) resolves" \
		grep -q ';jit_\(alpha\|beta\)_\[j\]' "$TMP/folded-sandbox"
	check "sandbox: another user's binary resolves" grep -q '^burn;.*main;rounds;burn_c' "$TMP/folded-sandbox"
	kill $BP $JP $EP; wait $EP 2>/dev/null
else
	sed 's/^/# /' "$TMP/sandbox.log"
	not_ok "emberd starts in the emulated unit sandbox"
fi
rm -rf "$SBIN"
done_testing
