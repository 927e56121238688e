/* SPDX-License-Identifier: MIT */
/*
 * strtab: interns frame names. Each distinct byte string gets a stable id (0, 1, 2, ... in order
 * of first appearance); the table owns the bytes. Names may hold any bytes except NUL.
 * Not thread-safe.
 */
#ifndef EMBER_STRTAB_H
#define EMBER_STRTAB_H

#include <stddef.h>
#include <stdint.h>

struct strtab; /* opaque */

/* NULL + errno=ENOMEM; free with strtab__free(). */
struct strtab *strtab__new(void);
/* NULL is a no-op. */
void strtab__free(struct strtab *st);

/* Interns @len bytes at @s (need not be NUL-terminated). Returns id >= 0 or -ENOMEM. */
int strtab__intern(struct strtab *st, const char *s, size_t len);
/* The id of @s if it was interned, or -ENOENT. */
int strtab__find(const struct strtab *st, const char *s, size_t len);

/* Borrowed, NUL-terminated: valid until strtab__free(). @id must be valid. */
const char *strtab__str(const struct strtab *st, uint32_t id);
size_t strtab__len(const struct strtab *st, uint32_t id);
/* Number of interned strings. */
size_t strtab__count(const struct strtab *st);
/* Bytes of memory held (strings, index), for /stats and benchmarks. */
size_t strtab__mem_bytes(const struct strtab *st);
/*
 * Adds @st's memory to *@counter (atomically) now and as it grows, and takes it off when @st is
 * freed; profiles made on @st (profile__new) charge theirs there too: what a render holds, for a
 * heap's accounting. @counter is borrowed: it must outlive @st and its profiles. Once, before use.
 */
void strtab__charge_to(struct strtab *st, uint64_t *counter);
/* The counter @st charges (NULL: none, or @st NULL). */
uint64_t *strtab__charge(const struct strtab *st);

#endif
