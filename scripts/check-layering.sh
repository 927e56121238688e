#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Dependencies point one way (docs/architecture.md): core includes only core and libc, never a
# third-party header; analysis adds GSL; the CLI never includes daemon headers or libbpf/libdw/MHD.
set -u
cd "$(dirname "$0")/.."
rc=0
bad() { echo "layering: $*"; rc=1; }
for f in src/core/*.c; do
	[ -f "$f" ] || continue
	grep -nE '#include [<"](bpf/|elfutils/|libelf|gelf|microhttpd|gsl/|zlib|ember/(sampler|symbolizer|store|http|config|ksyms|procmaps|perfmap|elfsym|hotelling))' "$f" |
		while read -r l; do bad "$f: core must stay libc-only: $l"; done
done
for f in src/cli/*.c src/cli/*.h; do
	[ -f "$f" ] || continue
	grep -nE '#include [<"](bpf/|elfutils/|libelf|microhttpd|ember/(sampler|symbolizer|store|http|ksyms|procmaps|perfmap|elfsym))' "$f" |
		while read -r l; do bad "$f: the CLI must not use daemon code: $l"; done
done
# grep inside a pipeline runs in a subshell: recount
out=$(for f in src/core/*.c; do grep -lE '#include [<"](bpf/|elfutils/|libelf|gelf|microhttpd|gsl/|zlib)' "$f"; done 2>/dev/null
      for f in src/cli/*.c src/cli/*.h; do grep -lE '#include [<"](bpf/|elfutils/|libelf|microhttpd)' "$f"; done 2>/dev/null)
[ -z "$out" ] || rc=1
[ $rc -eq 0 ] && echo "layering: ok"
exit $rc
