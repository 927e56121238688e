#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# lane: beside (light: series names and labels pushed to a receiver; bounds of its own: the burner's lag, /healthz)
# Pyroscope label injection: nobody runs a program named `nginx,service_name=payments}<b>`
# beside a root burner, emberd pushing to a Pyroscope receiver. Every series name emberd sends
# parses, by Pyroscope's rules (segment.ParseKey: the app name of [a-zA-Z0-9_.-] up to '{',
# values to the next ',' or '}'), to the labels emberd gives (service_name, container_id,
# pod_uid, hostname) and no other, the attacker's service named with its bytes kept inside one
# value. Before: `nginx,service_name=payments}<b>.cpu{service_name=nginx,service_name=payments}
# <b>,hostname=vm}`: a second service_name, and a series key Pyroscope refuses.
. "$(dirname "$0")/../lib.sh"
require_live_emberd
W=$OUTPUT/workloads
[ -x "$W/burn" ] || skip_all "workloads not built"
for t in setpriv python3; do command -v $t >/dev/null || skip_all "no $t"; done
. "$(dirname "$0")/faults.sh"
. "$(dirname "$0")/hostile2.sh"
att_dir
trap 'stop_all; rm -rf "$ATT"; cleanup_tmp' EXIT

EVIL='nginx,service_name=payments}<b>'
cp "$W/burn" "$ATT/$EVIL"
chown -R 65534:65534 "$ATT"
mkdir "$TMP/rx"
echo ok >"$TMP/rx/mode"
RPORT=$(free_port)
python3 "$(dirname "$0")/export_receiver.py" "$RPORT" "$TMP/rx" &
PIDS+=($!)
for _ in $(seq 50); do (echo >/dev/tcp/127.0.0.1/$RPORT) 2>/dev/null && break; sleep 0.1; done

burn_start 120
emberd_serve --frequency 99 -o sampling.tick_ms=250 \
	-o "export.pyroscope_url=http://127.0.0.1:$RPORT" -o export.pyroscope_interval=2s ||
	{ not_ok "emberd starts"; done_testing; }
ok "emberd starts"
sleep 8
mem_base
watch_start
"${AS_NOBODY[@]}" "$ATT/$EVIL" 15 >/dev/null &
EV=$!
PIDS+=($EV)
wait "$EV"
sleep 5 # the last round
watch_stop
check "the attacker ran as nobody, named $EVIL" test -e "$ATT/$EVIL"

check "every series name parses to emberd's labels only, the attacker's inside one value" python3 - "$TMP/rx" <<'PY'
import glob, json, sys, urllib.parse

def parse_key(s):  # Pyroscope's segment.ParseKey, as its source reads
    labels, st, key, val = {}, "app", "", ""
    for c in s + "{":
        if st == "app":
            if c == "{":
                app = val.strip()
                assert app and all(ch.isascii() and (ch.isalnum() or ch in "_.-") for ch in app), \
                    "app name refused: %r" % app
                labels["__name__"], st, val = app, "key", ""
            else:
                val += c
        elif st == "key":
            if c == "}":
                st = "done"
            elif c == "=":
                st, val = "value", ""
            else:
                key += c
        elif st == "value":
            if c in ",}":
                k = key.strip()
                assert k and all(ch.isascii() and (ch.isalnum() or ch == "_") for ch in k), k
                labels[k], key, st = val.strip(), "", "key"
                if c == "}":
                    st = "done"  # ParseKey goes back to keys, where '{' is just a byte
            else:
                val += c
    return labels

names = set()
for m in glob.glob(sys.argv[1] + "/*.meta"):
    q = urllib.parse.urlparse(json.load(open(m))["path"]).query
    names.update(urllib.parse.parse_qs(q).get("name", []))
assert names, "no Pyroscope request"
evil = None
for n in names:
    l = parse_key(n)
    assert set(l) <= {"__name__", "service_name", "container_id", "pod_uid", "hostname"}, (n, l)
    assert l["__name__"].endswith(".cpu") and "service_name" in l, (n, l)
    if "payments" in n:
        evil = l
print("# %d series; the attacker's: %s" % (len(names), evil))
assert evil and evil["service_name"] == "nginx_service_name_payments__b_", evil
assert evil["__name__"] == "nginx_service_name_payments__b_.cpu", evil
PY
bounds_check "a program named $EVIL"
mem_back_check "the attacker gone"
emberd_stop_check "after the attack"
done_testing
