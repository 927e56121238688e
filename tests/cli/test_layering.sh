#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The dependency rules of docs/architecture.md hold (make check-layering).
. "$(dirname "$0")/../lib.sh"
check "module layering" "$SRCDIR/scripts/check-layering.sh"
check "ember does not link daemon libraries" bash -c "! ldd '$EMBER' | grep -qE 'libbpf|libdw|libelf|microhttpd'"
done_testing
