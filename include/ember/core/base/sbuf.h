/* SPDX-License-Identifier: MIT */
/*
 * sbuf: a growable byte buffer with a sticky error. Every renderer writes into one; the first
 * allocation failure is remembered and later appends become no-ops, so a caller checks once at
 * the end with sbuf_error(). The buffer is always NUL-terminated (when it has memory at all).
 */
#ifndef EMBER_SBUF_H
#define EMBER_SBUF_H

#include <stdarg.h>
#include <stddef.h>

struct sbuf_watch;

struct sbuf {
	char *buf;	/* owned; NULL until the first append */
	size_t len;	/* bytes used, not counting the NUL */
	size_t cap;	/* bytes allocated */
	int err;	/* 0 or -ENOMEM (or a watch's error), sticky */
	const struct sbuf_watch *watch; /* borrowed; NULL: none (sbuf_set_watch()) */
	size_t watch_at;		/* the next periodic call of the watch, in bytes */
};

#define SBUF_INIT                                                                                  \
	{                                                                                          \
		.buf = NULL, .len = 0, .cap = 0, .err = 0, .watch = NULL, .watch_at = 0            \
	}

/*
 * An observer of an sbuf's growth, for renders that must stay within a memory budget or stop
 * when nobody waits for them any more (emberd's HTTP responses): @fn is called before the buffer
 * grows (@new_cap > sb->cap: the allocation it is about to make) and, without growth
 * (@new_cap == sb->cap), each time another SBUF_WATCH_BYTES have been appended. @need is the
 * content's size after the append, NUL included. 0 lets the append go on; a negative errno
 * fails it and becomes the sticky error, so that every later append is a no-op (the renderer
 * carries on cheaply and its caller finds the error with sbuf_error()).
 */
#define SBUF_WATCH_BYTES (64u << 10)

struct sbuf_watch {
	int (*fn)(struct sbuf *sb, size_t need, size_t new_cap, void *ctx);
	void *ctx;
};

/* Sets (or with NULL, removes) @sb's watch; borrowed, it must outlive its use by @sb.
 * sbuf_fini() and sbuf_detach() remove it. */
void sbuf_set_watch(struct sbuf *sb, const struct sbuf_watch *w);

void sbuf_init(struct sbuf *sb);
/* Frees the memory; the sbuf is empty and reusable afterwards. */
void sbuf_fini(struct sbuf *sb);
/* Keeps the memory, drops the content and the error. */
void sbuf_reset(struct sbuf *sb);

/* Makes room for @extra more bytes. 0 or -ENOMEM, or the watch's error (also made sticky). */
int sbuf_grow(struct sbuf *sb, size_t extra);

void sbuf_add(struct sbuf *sb, const void *data, size_t len);
void sbuf_addc(struct sbuf *sb, char c);
void sbuf_adds(struct sbuf *sb, const char *s);
void sbuf_addf(struct sbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sbuf_vaddf(struct sbuf *sb, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* Appends an unsigned decimal number; faster than sbuf_addf() on hot paths. */
void sbuf_addu(struct sbuf *sb, unsigned long long v);
/* Appends @v the way folded files write counts: integers without a fraction, others with the
 * fewest fractional digits that read back to the same double; never an exponent. */
void sbuf_add_count(struct sbuf *sb, double v);
/* Appends @s (len bytes) escaped for XML text and attributes: & < > " ' are entities, control
 * characters become '?' (a TAB a space: XML 1.0 forbids them even as references) and a byte
 * outside valid UTF-8 "\xNN" (utf8.h, the rule of every output). */
void sbuf_add_xml(struct sbuf *sb, const char *s, size_t len);
/* Appends @s escaped for a JSON string body (no quotes added); a byte outside valid UTF-8 becomes
 * "\xNN" (utf8.h; in JSON "\\xNN"), as in every output. */
void sbuf_add_json(struct sbuf *sb, const char *s, size_t len);

/*
 * Appends @s (len bytes) tidied as a folded frame name: ';' (the frame separator) becomes ':',
 * control bytes (line breaks, tabs, ESC...), DEL and bytes outside valid UTF-8 become "\xNN"
 * escapes (utf8.h); other bytes are kept. Every name that enters emberd's outputs goes through it
 * (frame.h's frame_format() writes with it), so the outputs agree and hold valid UTF-8.
 * Returns how many bytes were changed (0: @s was already a valid frame name).
 */
size_t sbuf_add_frame(struct sbuf *sb, const char *s, size_t len);

/* 0 or the sticky -ENOMEM. */
static inline int sbuf_error(const struct sbuf *sb)
{
	return sb->err;
}

/*
 * Takes the content: returns a malloc'ed NUL-terminated buffer the caller frees with free(),
 * its length in @ret_len (may be NULL), and leaves the sbuf empty. Returns NULL (errno=ENOMEM) if
 * the sbuf has a sticky error, after freeing its memory.
 */
char *sbuf_detach(struct sbuf *sb, size_t *ret_len);

/* Writes the whole content to @fd, retrying short writes. 0 or -errno (incl. the sticky one). */
int sbuf_write_fd(const struct sbuf *sb, int fd);

#endif
