/* SPDX-License-Identifier: MIT */
/*
 * utf8: the one rule for text that is not valid UTF-8, in every output of emberd and ember.
 *
 * Names come from what a process controls (its executable's name, its comm, symbols, perf maps,
 * Python strings, its cgroup's unit name) and may hold any bytes. Every output shows a byte that
 * is not part of a valid UTF-8 sequence the same way: as the four characters "\xNN" (lower-case
 * hex), the escape folded frames already use for control bytes. Valid UTF-8 (overlong forms,
 * surrogates U+D800..U+DFFF and code points above U+10FFFF are not) passes unchanged, so the
 * rule is idempotent: text it wrote goes through it again unchanged, and pprof and OTLP string
 * tables, whose protobuf `string` fields must be UTF-8, always are.
 *
 * The escape is not reversible on purpose (a literal "\x41" in a name stays as it is): it is for
 * people and collectors, never parsed back into bytes. libc only, thread-safe.
 */
#ifndef EMBER_UTF8_H
#define EMBER_UTF8_H

#include <stdbool.h>
#include <stddef.h>

struct sbuf;

/* The length (1..4) of the valid UTF-8 sequence at @s (@left > 0 bytes), or 0 if its first byte
 * starts none (invalid, overlong, a surrogate, past U+10FFFF, or cut short). */
size_t utf8_seq(const unsigned char *s, size_t left);

/* @s[0..len) is valid UTF-8 (NUL bytes allowed). */
bool utf8_valid(const char *s, size_t len);

/* Writes the escape of the byte @c ("\xNN", 4 characters) at @out. */
void utf8_escape_byte(char out[4], unsigned char c);

/*
 * Appends @s[0..len) with each byte outside a valid sequence as "\xNN". Returns how many bytes
 * were escaped (0: @s was valid and was copied as is).
 */
size_t sbuf_add_utf8(struct sbuf *sb, const char *s, size_t len);

#endif
