// SPDX-License-Identifier: MIT
#include "ember/core/model/frame.h"

#include <string.h>

#include "ember/core/base/sbuf.h"

static const char *const suffixes[FRAME_KIND__NR] = {
	[FRAME_NATIVE] = "",	  [FRAME_KERNEL] = "_[k]",  [FRAME_JIT] = "_[j]",
	[FRAME_INLINED] = "_[i]", [FRAME_PYTHON] = "_[py]",
};

static const char *const kind_names[FRAME_KIND__NR] = {
	[FRAME_NATIVE] = "native",   [FRAME_KERNEL] = "kernel", [FRAME_JIT] = "jit",
	[FRAME_INLINED] = "inlined", [FRAME_PYTHON] = "python",
};

static const char *const markers[] = { "unknown",    "truncated",	"idle",
				       "lost stack", "stack collision", "none" };

const char *frame_kind_suffix(enum frame_kind kind)
{
	return (unsigned)kind < FRAME_KIND__NR ? suffixes[kind] : "";
}

const char *frame_kind_name(enum frame_kind kind)
{
	return (unsigned)kind < FRAME_KIND__NR ? kind_names[kind] : "native";
}

static bool cut_suffix(const char *s, size_t *len, const char *suf)
{
	size_t n = strlen(suf);

	if (!n || *len < n || memcmp(s + *len - n, suf, n))
		return false;
	*len -= n;
	return true;
}

enum frame_kind frame_kind_of(const char *s, size_t len)
{
	int k;

	for (k = FRAME_KERNEL; k < FRAME_KIND__NR; k++) {
		size_t n = len;

		if (cut_suffix(s, &n, suffixes[k]))
			return (enum frame_kind)k;
	}
	return FRAME_NATIVE;
}

bool frame_is_kernel(const char *s, size_t len)
{
	cut_suffix(s, &len, FRAME_WAKER_SUFFIX);
	return frame_kind_of(s, len) == FRAME_KERNEL;
}

bool frame_is_marker(const char *s, size_t len)
{
	size_t i;

	if (len < 3 || s[0] != '[' || s[len - 1] != ']')
		return false;
	for (i = 0; i < sizeof(markers) / sizeof(markers[0]); i++)
		if (strlen(markers[i]) == len - 2 && !memcmp(s + 1, markers[i], len - 2))
			return true;
	return false;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* "file+0xOFF": the last '+', then "0x" and 1..16 lower-case hex digits to the end (as
 * frame_format() writes them, without leading zeros), no space in the file. */
static bool parse_file_offset(const char *s, size_t len, struct frame *f)
{
	const char *plus = NULL, *p;
	uint64_t v = 0;
	size_t nd;

	for (p = s + len; p > s; p--)
		if (p[-1] == '+') {
			plus = p - 1;
			break;
		}
	if (!plus || plus == s || memchr(s, ' ', (size_t)(plus - s)))
		return false;
	nd = (size_t)(s + len - plus) - 3;
	if (s + len - plus < 4 || plus[1] != '0' || plus[2] != 'x' || nd > 16 ||
	    (nd > 1 && plus[3] == '0'))
		return false;
	for (p = plus + 3; p < s + len; p++) {
		int d = hexval(*p);

		if (d < 0)
			return false;
		v = v << 4 | (uint64_t)d;
	}
	f->form = FRAME_FILE_OFFSET;
	f->file = s;
	f->file_len = (size_t)(plus - s);
	f->offset = v;
	return true;
}

/* "qual (file:line)", "qual (file:?)", "qual (file)": the first " (" and the closing ')'. */
static void parse_source(const char *s, size_t len, struct frame *f)
{
	const char *open = NULL, *in, *end, *colon, *p;
	size_t i;

	if (len < 4 || s[len - 1] != ')')
		return;
	for (i = 1; i + 1 < len; i++)
		if (s[i] == '(' && s[i - 1] == ' ') {
			open = s + i;
			break;
		}
	if (!open || open - 1 == s)
		return;
	in = open + 1;
	end = s + len - 1;
	f->name_len = (size_t)(open - 1 - s);
	f->file = in;
	f->file_len = (size_t)(end - in);
	colon = memrchr(in, ':', (size_t)(end - in));
	if (!colon || colon == in)
		return;
	if (end - colon == 2 && colon[1] == '?') {
		f->line = FRAME_LINE_UNKNOWN;
		f->file_len = (size_t)(colon - in);
		return;
	}
	if (end - colon < 2 || end - colon > 10 || colon[1] == '0')
		return;
	for (p = colon + 1; p < end; p++)
		if (*p < '0' || *p > '9')
			return;
	for (p = colon + 1; p < end; p++)
		f->line = f->line * 10 + (*p - '0');
	f->file_len = (size_t)(colon - in);
}

void frame_parse(const char *s, size_t len, struct frame *ret)
{
	struct frame f = { .kind = FRAME_NATIVE, .form = FRAME_SYMBOL, .name = s };

	f.waker = cut_suffix(s, &len, FRAME_WAKER_SUFFIX);
	f.kind = frame_kind_of(s, len);
	cut_suffix(s, &len, suffixes[f.kind]);
	f.name_len = len;
	if (frame_is_marker(s, len)) {
		f.form = FRAME_MARKER;
	} else if (f.kind == FRAME_PYTHON || f.kind == FRAME_JIT) {
		parse_source(s, len, &f);
	} else if (len > 2 && s[0] == '[' && s[len - 1] == ']' && !memchr(s, ' ', len)) {
		f.form = FRAME_FILE;
		f.file = s + 1;
		f.file_len = len - 2;
	} else {
		parse_file_offset(s, len, &f);
	}
	*ret = f;
}

void frame_format(struct sbuf *sb, const struct frame *f)
{
	switch (f->form) {
	case FRAME_MARKER:
		sbuf_add(sb, f->name, f->name_len);
		break;
	case FRAME_FILE:
		sbuf_addc(sb, '[');
		sbuf_add_frame(sb, f->file, f->file_len);
		sbuf_addc(sb, ']');
		break;
	case FRAME_FILE_OFFSET:
		sbuf_add_frame(sb, f->file, f->file_len);
		sbuf_addf(sb, "+0x%llx", (unsigned long long)f->offset);
		break;
	case FRAME_SYMBOL:
	default:
		sbuf_add_frame(sb, f->name, f->name_len);
		if ((f->kind == FRAME_PYTHON || f->kind == FRAME_JIT) && f->file) {
			sbuf_add(sb, " (", 2);
			sbuf_add_frame(sb, f->file, f->file_len);
			if (f->line > 0)
				sbuf_addf(sb, ":%lld", (long long)f->line);
			else if (f->line == FRAME_LINE_UNKNOWN)
				sbuf_add(sb, ":?", 2);
			sbuf_addc(sb, ')');
		}
		break;
	}
	sbuf_adds(sb, frame_kind_suffix(f->kind));
	if (f->waker)
		sbuf_adds(sb, FRAME_WAKER_SUFFIX);
}
