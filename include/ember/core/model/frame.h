/* SPDX-License-Identifier: MIT */
/*
 * frame: what one frame of a folded stack says, the one parser and the one formatter of the
 * frame text that emberd writes and every output reads (folded, samples, SVG palette, pprof,
 * OTLP, the API, the CLI).
 *
 * A frame's text is its name, then at most one suffix that says what kind of code it is
 * (flamegraph.pl's annotations, and ember's for Python), then "_[w]" on a waker's frames:
 *
 *   kind            text                               form
 *   native          "name"                             symbol
 *   kernel          "name_[k]"                         symbol
 *   JIT             "name_[j]"  (perf maps)            symbol
 *                   "name (file:line)_[j]",            symbol (Java with [hotspot] lines,
 *                   "name (file)_[j]"                  JavaScript with its script and its
 *                                                      function's line)
 *   inlined         "name_[i]"  (libdw, a callee)      symbol
 *   Python          "qual (file:line)_[py]",           symbol (line: ":?" unknown, none: no line)
 *                   "qual (file)_[py]"
 *   native/kernel   "[file]", "[module]_[k]"           file: a mapped file, no symbol found
 *   native          "file+0xOFF"                       file_offset: the offset in the file
 *   any             "[unknown]", "[truncated]",        marker: ember's own (frame_is_marker())
 *                   "[idle]_[k]", "[unknown]_[py]" ...
 *
 * Names are escaped when they are written (frame_format(), sbuf_add_frame(): ';' -> ':', control
 * bytes and bytes outside valid UTF-8 -> "\xNN"), so a frame text never holds a separator, a line
 * break or invalid UTF-8, whoever named it; the workload frames of group_by (unit, container,
 * service) and the comm are escaped the same way. Parsing never fails: any text is a frame (a
 * symbol when nothing else fits), and for a text frame_format() wrote, frame_format(frame_parse())
 * gives it back byte for byte.
 *
 * A Python or JIT frame's name and file are told apart at the FIRST " (" of a text that ends
 * with ')': a qualname is a dotted path of identifiers (with "<locals>", "<lambda>"), a Java
 * method's "pkg.Class.method" and a JavaScript function's name hold no " (", while a file path
 * may hold " (" itself. (A perf map's own name that has " (" and ends with ')' is read the same
 * way: its text is given back whole by frame_format(), only pprof and OTLP show it split.)
 *
 * libc only; thread-safe (no state).
 */
#ifndef EMBER_FRAME_H
#define EMBER_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sbuf;

enum frame_kind {
	FRAME_NATIVE = 0, /* no suffix */
	FRAME_KERNEL,	  /* "_[k]" */
	FRAME_JIT,	  /* "_[j]" */
	FRAME_INLINED,	  /* "_[i]" */
	FRAME_PYTHON,	  /* "_[py]" */
	FRAME_KIND__NR,
};

enum frame_form {
	FRAME_SYMBOL = 0,  /* a named function */
	FRAME_FILE,	   /* "[file]": in a mapped file (or kernel module), no symbol */
	FRAME_FILE_OFFSET, /* "file+0xOFF" */
	FRAME_MARKER,	   /* one of ember's markers (frame_is_marker()) */
};

#define FRAME_LINE_UNKNOWN (-1) /* a Python frame's ":?" */

#define FRAME_WAKER_SUFFIX "_[w]" /* after a waker's frames (flamegraph.pl's mark) */

/*
 * A parsed frame. Its strings point into the text parsed (borrowed, not NUL-terminated), or for
 * one to format into the caller's.
 */
struct frame {
	enum frame_kind kind;
	enum frame_form form;
	/*
	 * What pprof and OTLP show as the function's name: a symbol's name (a Python frame's
	 * qualname), a marker's "[word]", and for the file forms the text without its suffix
	 * ("[libc.so.6]", "libc.so.6+0x1a2b"). frame_format() writes it for symbols and markers.
	 */
	const char *name;
	size_t name_len;
	/* FRAME_FILE, FRAME_FILE_OFFSET: the mapped file; a Python or JIT symbol: its source file,
	 * or NULL when the frame names none */
	const char *file;
	size_t file_len;
	uint64_t offset; /* FRAME_FILE_OFFSET */
	int64_t line;	 /* Python, JIT: > 0 a line, FRAME_LINE_UNKNOWN ":?", 0: none written */
	bool waker;	 /* "_[w]": a frame of a waker's stack (off-CPU chains) */
};

/* The suffix of @kind ("" for native): "_[k]", "_[j]", "_[i]", "_[py]". */
const char *frame_kind_suffix(enum frame_kind kind);

/* A name for @kind: "native", "kernel", "jit", "inlined", "python". */
const char *frame_kind_name(enum frame_kind kind);

/* Parses the frame text @s[0..len) into @ret (pointing into @s). Never fails. */
void frame_parse(const char *s, size_t len, struct frame *ret);

/* The kind said by the suffix @s[0..len) ends with, "_[w]" not looked through ("a_[k]_[w]" is
 * native): what flamegraph.pl's palettes test with a suffix match. */
enum frame_kind frame_kind_of(const char *s, size_t len);

/*
 * @s[0..len) (without suffix) is one of ember's marker frames: "[unknown]" (an address in no
 * mapping), "[truncated]" (a user stack cut short), "[idle]" (an idle sample without its stack),
 * "[lost stack]", "[stack collision]" (a stack the sampler could not keep), "[none]" (a
 * group_by sample in no group).
 */
bool frame_is_marker(const char *s, size_t len);

/* @s[0..len) is a kernel frame ("..._[k]", a waker's too). */
bool frame_is_kernel(const char *s, size_t len);

/*
 * Appends the text of @f: its name and file escaped (sbuf_add_frame()), then the suffix of its
 * kind and "_[w]" for a waker. A marker's name is written as given (with its brackets). Errors
 * are the sbuf's (sticky -ENOMEM).
 */
void frame_format(struct sbuf *sb, const struct frame *f);

#endif
