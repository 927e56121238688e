/* SPDX-License-Identifier: MIT */
/*
 * ksyms: the kernel's symbol table from /proc/kallsyms, sorted for binary search.
 *
 *   ffffffff810a1b20 T schedule
 *   ffffffffc0a01000 t ext4_fill_super	[ext4]
 *
 * Only text symbols (t, T, w, W) are kept; at one address the best alias is kept (global before
 * local, fewer leading underscores, then the longer name). A symbol ends where the next one starts;
 * the last one of the kernel or of a module ends at most KSYMS_MAX_TAIL bytes later, and a module
 * symbol at most KSYMS_MAX_MODULE_SPAN after its start (beyond: the module's, see ksyms__lookup). When every
 * address reads as zero (kernel.kptr_restrict, or not root), the table is empty and
 * ksyms__restricted() says why. The parser is a pure function on text (fuzzed). Not thread-safe.
 */
#ifndef EMBER_KSYMS_H
#define EMBER_KSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct parse_error;

#define KSYMS_MAX_TAIL 4096u
#define KSYMS_MAX_MODULE_SPAN (256u << 10) /* a module symbol ends at most this far */

struct kallsyms_line {
	uint64_t addr;
	char type;		/* 't', 'T', 'd', ... */
	const char *name;	/* borrowed from the line, NOT NUL-terminated */
	size_t name_len;
	const char *module;	/* without brackets, borrowed; NULL for the kernel itself */
	size_t module_len;
};

/* One line without '\n'. 0 or -EINVAL (+ @reterr, may be NULL). Pointers point into @line. */
int kallsyms_parse_line(const char *line, size_t len, struct kallsyms_line *ret,
			struct parse_error *reterr);

struct ksyms; /* opaque */

/* Builds a table from kallsyms text. Malformed lines are added to *@ret_bad (may be NULL).
 * NULL + errno=ENOMEM; free with ksyms__free(). */
struct ksyms *ksyms__from_text(const char *text, size_t len, unsigned long *ret_bad);
/* Reads @path (e.g. "/proc/kallsyms"). NULL + errno (ENOENT, EACCES, ENOMEM, EFBIG over 256 MiB). */
struct ksyms *ksyms__load(const char *path, unsigned long *ret_bad);
void ksyms__free(struct ksyms *k); /* NULL is a no-op */

/*
 * Index of the symbol containing @addr, or -ENOENT. When not found, *@ret_module (may be NULL) is
 * set to the module whose symbols surround @addr (borrowed, NUL-terminated) or NULL.
 */
int ksyms__lookup(const struct ksyms *k, uint64_t addr, const char **ret_module);

/* Borrowed, NUL-terminated, valid until ksyms__free(). */
const char *ksyms__name(const struct ksyms *k, int idx);
const char *ksyms__module(const struct ksyms *k, int idx); /* NULL for the kernel itself */
uint64_t ksyms__addr(const struct ksyms *k, int idx);
/* A caller's value attached to symbol @idx (0 until set). */
uint32_t ksyms__cookie(const struct ksyms *k, int idx);
void ksyms__set_cookie(struct ksyms *k, int idx, uint32_t cookie);
/* Every symbol's value back to 0 (the values the caller attached mean nothing any more). */
void ksyms__clear_cookies(struct ksyms *k);

size_t ksyms__count(const struct ksyms *k);
size_t ksyms__nr_module_syms(const struct ksyms *k);
/* True when the text had symbol lines but every address was zero. */
bool ksyms__restricted(const struct ksyms *k);
size_t ksyms__mem_bytes(const struct ksyms *k);

#endif
