#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The long variants of the HTTP attack tests (part of `make soak`): the connection floods
# (2000 idle, 70 slow-loris, 70 half-open TLS: /healthz probed all along) and the samples
# readers at 999 Hz, each for ATTACK_SECONDS (default 300) instead of ~15 s. Same checks and
# bounds as tests/integration/test_attack_conn.sh and test_attack_store.sh (needs root for the
# second); prints their TAP lines, exits 1 when one fails.
#   ATTACK_SECONDS=300 tests/bench/bench_attack.sh
set -u
: "${OUTPUT:?}" "${SRCDIR:?}"
export ATTACK_SECONDS=${ATTACK_SECONDS:-300}
rc=0
for t in test_attack_conn test_attack_store; do
	echo "== $t, ${ATTACK_SECONDS} s per attack"
	bash "$SRCDIR/tests/integration/$t.sh" || rc=1
done
exit $rc
