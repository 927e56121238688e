#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `ember diff --both` in headless Chromium: both graphs load and a hovered frame is highlighted
# in the other graph (matched by stack path); see test_diff_both.mjs.
. "$(dirname "$0")/../lib.sh"
require_browser
printf 'main;a;b 10\nmain;a;c 5\nmain;gone;deep 7\n' >"$TMP/a.folded"
printf 'main;a;b 12\nmain;a;c 2\nmain;new 4\n' >"$TMP/b.folded"
"$EMBER" diff --both "$TMP/a.folded" "$TMP/b.folded" >"$TMP/both.html" || { not_ok "ember diff --both"; done_testing; }
cat >"$TMP/expect.json" <<'EOT'
{"hover": [
 {"from": "g2", "key": "all;main;a;b", "present": true},
 {"from": "g1", "key": "all;main;a;c", "present": true},
 {"from": "g1", "key": "all;main;gone;deep", "present": false},
 {"from": "g2", "key": "all;main;new", "present": false}
]}
EOT
PAGE=$TMP/both.html EXPECT=$TMP/expect.json node "$SRCDIR/tests/browser/test_diff_both.mjs"
