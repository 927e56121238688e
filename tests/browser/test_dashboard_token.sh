#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The dashboard with a bearer token (http.auth_token_file) in headless Chromium
# (test_dashboard_token.mjs), against emberd --replay: the page and its files load without the
# token, the API answers 401 until the page is given it, then the heat map, a flame graph and a
# download work, and the copied curl command reads the token from the environment.
. "$(dirname "$0")/../lib.sh"
require_browser
[ -x "$EMBERD" ] || skip_all "no $EMBERD"
zcat "$SHARED/corpus/examples/example-perf-stacks.txt.gz" >"$TMP/perf.txt" || skip_all "no shared corpus"
trap 'stop_all; cleanup_tmp' EXIT
TOKEN=$(head -c 24 /dev/urandom | base64 | tr -d '/+=')
printf '%s\n' "$TOKEN" >"$TMP/token"
chmod 600 "$TMP/token"
replay_start "$TMP/perf.txt" -o http.auth_token_file="$TMP/token" ||
	{ not_ok "emberd --replay with a token starts"; sed 's/^/# /' "$TMP/emberd.log"; done_testing; }
# what the page will draw, through the API with the token
SAMPLES=$(curl -s -H "Authorization: Bearer $TOKEN" "$URL/api/v1/folded?from=7628263&to=7628268" |
	awk '{ s += $NF } END { print s + 0 }')
URL=$URL TOKEN=$TOKEN SAMPLES=$SAMPLES DOWNLOAD_DIR=$TMP node "$SRCDIR/tests/browser/test_dashboard_token.mjs"
