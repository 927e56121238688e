/* SPDX-License-Identifier: MIT */
/*
 * demangle: display names for symbols, the way `perf report` shows them by default: C++ (Itanium
 * ABI, via __cxa_demangle from libstdc++) without the parameter list; Rust legacy names with their
 * "::h<16 hex>" hash trimmed and $..$ escapes decoded. Rust v0 ("_R...") names and anything that
 * does not demangle are kept as they are. Non-logging, thread-safe.
 */
#ifndef EMBER_DEMANGLE_H
#define EMBER_DEMANGLE_H

#include <stdbool.h>
#include <stddef.h>

struct sbuf;

/* Appends the display name of @raw to @sb (sticky -ENOMEM as every sbuf). True when it changed. */
bool demangle_append(struct sbuf *sb, const char *raw);

/* The length of @s (@len bytes) without its trailing parameter list: "ns::f(int) const" -> 6. */
size_t demangle_strip_params(const char *s, size_t len);

#endif
