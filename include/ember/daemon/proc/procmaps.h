/* SPDX-License-Identifier: MIT */
/*
 * procmaps: the /proc/PID/maps parser. Pure functions on text (fuzzed): no file access here; the
 * process tracker (proctrack.h) reads the file and hands the text over.
 *
 *   55d0c2a00000-55d0c2a21000 r-xp 00002000 fd:01 1835012     /usr/bin/burn
 *   7f1c2a000000-7f1c2a021000 rwxp 00000000 00:00 0           (anonymous: JIT code)
 *   7f1c2b000000-7f1c2b001000 r-xp 00000000 08:01 42          /tmp/x (deleted)
 */
#ifndef EMBER_PROCMAPS_H
#define EMBER_PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct parse_error;

enum procmaps_kind {
	PROCMAPS_FILE = 0,	/* a path: an ELF file, maybe */
	PROCMAPS_ANON,		/* no path, or "[anon:...]", "//anon": JIT code lives here */
	PROCMAPS_VDSO,		/* "[vdso]" */
	PROCMAPS_SPECIAL,	/* other "[...]": [stack], [heap], [vsyscall], [uprobes] ... */
};

struct procmaps_entry {
	uint64_t start, end;	/* [start, end) */
	uint64_t pgoff;		/* file offset of start */
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	bool r, w, x, shared;	/* permissions; shared is 's' rather than 'p' */
	bool deleted;		/* the path ended with " (deleted)" (removed from the name) */
	bool exec_image;	/* not parsed: an exec's executable as the kernel told it
				   (proctrack.h); the path is the one exec was given */
	enum procmaps_kind kind;
	const char *path;	/* borrowed from the parsed line, NOT NUL-terminated */
	size_t path_len;	/* 0 for anonymous mappings */
};

/*
 * Parses one line (without its '\n'; need not be NUL-terminated). Returns 0, or -EINVAL with
 * @reterr (may be NULL) saying where. ret->path points into @line.
 */
int procmaps_parse_line(const char *line, size_t len, struct procmaps_entry *ret,
			struct parse_error *reterr);

/* Called for each good entry by procmaps_parse(); nonzero stops the walk and is returned. */
typedef int (*procmaps_entry_fn)(const struct procmaps_entry *e, void *ctx);

/*
 * Parses a whole maps text (lines separated by '\n'; a last line without one counts). Calls @fn
 * for every well-formed line in order; malformed lines are skipped and counted in
 * *@ret_bad (may be NULL). Returns 0, or @fn's nonzero value.
 */
int procmaps_parse(const char *text, size_t len, procmaps_entry_fn fn, void *ctx,
		   unsigned long *ret_bad);

/*
 * Sets @e's kind, deleted, path and path_len from a mapping's name as the kernel shows it
 * (@path, @len: "" for none, " (deleted)" removed): the one rule for /proc/PID/maps lines and
 * PROCMAP_QUERY answers. e->path points into @path.
 */
void procmaps_classify(const char *path, size_t len, struct procmaps_entry *e);

/* The base name of the mapping's path ("libc.so.6"), borrowed; *@ret_len set. "" for anon. */
const char *procmaps_basename(const struct procmaps_entry *e, size_t *ret_len);

/* Whether @e maps the dynamic loader (ld-linux*, ld-musl*, ld.so*), a shared object (".so" or
 * ".so." in its path) other than the loader. A process whose file mappings have the loader and
 * no other shared object was read before the loader mapped its libraries (or links none). */
bool procmaps_is_loader(const struct procmaps_entry *e);
bool procmaps_is_shared_object(const struct procmaps_entry *e);

#endif
