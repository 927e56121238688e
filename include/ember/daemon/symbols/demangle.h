/* SPDX-License-Identifier: MIT */
/*
 * demangle: display names for symbols, the way `perf report` shows them (compared on the same
 * binaries with Debian's perf 6.1): libiberty's cplus_demangle() without DMGL_PARAMS. C++ (Itanium ABI) without
 * the parameter list, return type or clone suffixes (`.cold`, `.constprop.0`, `.isra.0`,
 * `.part.0`: "ns::heavy"), Rust legacy names with the "::h<16 hex>" hash dropped and $LT$-style
 * escapes decoded, Rust v0 ("_R...") names, and any of them with LLVM's ".llvm.<digits>" suffix
 * stripped. Anything else is kept as it is. Non-logging, thread-safe.
 */
#ifndef EMBER_DEMANGLE_H
#define EMBER_DEMANGLE_H

#include <stdbool.h>

struct sbuf;

/* Appends the display name of @raw to @sb (sticky -ENOMEM as every sbuf). True when it changed. */
bool demangle_append(struct sbuf *sb, const char *raw);

#endif
