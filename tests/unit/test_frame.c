// SPDX-License-Identifier: MIT
/*
 * The frame model: every kind of frame written by frame_format() parses back to the same fields
 * and the same text, and goes through folded, pprof and OTLP keeping its kind, name, file, line
 * and offset; names with a separator, control bytes or invalid UTF-8 never split a stack nor
 * leave a string that is not UTF-8.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gen/otlp.pb-c.h"
#include "gen/profile.pb-c.h"
#include "ember/core/base/gzip.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"
#include "ember/core/base/utf8.h"
#include "ember/core/formats/folded.h"
#include "ember/core/formats/otlp.h"
#include "ember/core/formats/pprof.h"
#include "ember/core/model/frame.h"
#include "ember/core/model/profile.h"

#define S(x) x, sizeof(x) - 1

/* One frame of every kind and form, as a writer fills it, and the text it must give. */
static const struct fcase {
	struct frame f;
	const char *text;
	const char *otlp_type; /* profile.frame.type */
	const char *fn_name;   /* what pprof and OTLP show as the function */
} cases[] = {
	{ { .kind = FRAME_NATIVE, .name = S("main") }, "main", "native", "main" },
	{ { .kind = FRAME_NATIVE, .name = S("std::vector<int>::push_back(int const&)") },
	  "std::vector<int>::push_back(int const&)", "native",
	  "std::vector<int>::push_back(int const&)" },
	{ { .kind = FRAME_KERNEL, .name = S("do_syscall_64") }, "do_syscall_64_[k]", "kernel",
	  "do_syscall_64" },
	{ { .kind = FRAME_JIT, .name = S("LInterp;::run") }, "LInterp:::run_[j]", "jit",
	  "LInterp:::run" },
	/* a Java method with [hotspot] lines, a JavaScript function with its script */
	{ { .kind = FRAME_JIT, .name = S("App$Burner.burnInstance"), .file = S("App.java"),
	    .line = 42 },
	  "App$Burner.burnInstance (App.java:42)_[j]", "jit", "App$Burner.burnInstance" },
	{ { .kind = FRAME_JIT, .name = S("App.main"), .file = S("App.java"),
	    .line = FRAME_LINE_UNKNOWN },
	  "App.main (App.java:?)_[j]", "jit", "App.main" },
	{ { .kind = FRAME_JIT, .name = S("(anonymous)"), .file = S("file:///srv/m (1).mjs") },
	  "(anonymous) (file:///srv/m (1).mjs)_[j]", "jit", "(anonymous)" },
	{ { .kind = FRAME_INLINED, .name = S("inlined_callee") }, "inlined_callee_[i]", "native",
	  "inlined_callee" },
	{ { .kind = FRAME_PYTHON, .name = S("Server.handle"), .file = S("/srv/app/server.py"),
	    .line = 42 },
	  "Server.handle (/srv/app/server.py:42)_[py]", "cpython", "Server.handle" },
	{ { .kind = FRAME_PYTHON, .name = S("<module>"), .file = S("/srv/my app (copy)/m.py"),
	    .line = FRAME_LINE_UNKNOWN },
	  "<module> (/srv/my app (copy)/m.py:?)_[py]", "cpython", "<module>" },
	{ { .kind = FRAME_PYTHON, .name = S("f.<locals>.<lambda>"), .file = S("x.py") },
	  "f.<locals>.<lambda> (x.py)_[py]", "cpython", "f.<locals>.<lambda>" },
	{ { .kind = FRAME_NATIVE, .form = FRAME_FILE, .file = S("/usr/lib/libfoo.so.1") },
	  "[/usr/lib/libfoo.so.1]", "native", "[/usr/lib/libfoo.so.1]" },
	{ { .kind = FRAME_NATIVE, .form = FRAME_FILE_OFFSET, .file = S("libc.so.6"),
	    .offset = 0x1a2b },
	  "libc.so.6+0x1a2b", "native", "libc.so.6+0x1a2b" },
	{ { .kind = FRAME_KERNEL, .form = FRAME_FILE, .file = S("nvidia") }, "[nvidia]_[k]",
	  "kernel", "[nvidia]" },
	{ { .kind = FRAME_NATIVE, .form = FRAME_MARKER, .name = S("[unknown]") }, "[unknown]",
	  "native", "[unknown]" },
	{ { .kind = FRAME_NATIVE, .form = FRAME_MARKER, .name = S("[truncated]") }, "[truncated]",
	  "native", "[truncated]" },
	{ { .kind = FRAME_KERNEL, .form = FRAME_MARKER, .name = S("[idle]") }, "[idle]_[k]",
	  "kernel", "[idle]" },
	{ { .kind = FRAME_KERNEL, .form = FRAME_MARKER, .name = S("[unknown]") },
	  "[unknown]_[k]", "kernel", "[unknown]" },
	{ { .kind = FRAME_PYTHON, .form = FRAME_MARKER, .name = S("[unknown]") },
	  "[unknown]_[py]", "cpython", "[unknown]" },
	{ { .kind = FRAME_NATIVE, .form = FRAME_MARKER, .name = S("[lost stack]") },
	  "[lost stack]", "native", "[lost stack]" },
	{ { .kind = FRAME_KERNEL, .form = FRAME_MARKER, .name = S("[stack collision]") },
	  "[stack collision]_[k]", "kernel", "[stack collision]" },
	/* a unit, container or service frame: a name like any other, escaped like any other */
	{ { .kind = FRAME_NATIVE, .name = S("evil;unit\tname\xff.service") },
	  "evil:unit\\x09name\\xff.service", "native", "evil:unit\\x09name\\xff.service" },
	/* a comm cut by the kernel in the middle of a UTF-8 sequence */
	{ { .kind = FRAME_NATIVE, .name = S("caf\xc3") }, "caf\\xc3", "native", "caf\\xc3" },
	{ { .kind = FRAME_KERNEL, .name = S("schedule"), .waker = true }, "schedule_[k]_[w]",
	  "kernel", "schedule_[k]_[w]" },
};

#define NCASES (sizeof(cases) / sizeof(cases[0]))

static void format_case(const struct fcase *c, struct sbuf *sb)
{
	sbuf_reset(sb);
	frame_format(sb, &c->f);
	assert_false(sbuf_error(sb));
}

static void assert_mem(const char *a, size_t alen, const char *b, size_t blen)
{
	assert_int_equal(alen, blen);
	assert_memory_equal(a, b, alen);
}

/* The text a frame formats to, parsed: the same fields; formatted again: the same text. */
static void test_parse_format(void **state)
{
	struct sbuf sb = SBUF_INIT, again = SBUF_INIT;
	struct frame p;
	size_t i;

	for (i = 0; i < NCASES; i++) {
		const struct fcase *c = &cases[i];

		format_case(c, &sb);
		assert_string_equal(sb.buf, c->text);
		assert_true(utf8_valid(sb.buf, sb.len));
		assert_null(memchr(sb.buf, '\t', sb.len));
		frame_parse(sb.buf, sb.len, &p);
		assert_int_equal(p.kind, c->f.kind);
		assert_int_equal(p.form, c->f.form);
		assert_int_equal(p.waker, c->f.waker);
		if (c->f.form == FRAME_SYMBOL && c->f.file &&
		    (c->f.kind == FRAME_PYTHON || c->f.kind == FRAME_JIT)) {
			assert_mem(p.name, p.name_len, c->f.name, c->f.name_len);
			assert_mem(p.file, p.file_len, c->f.file, c->f.file_len);
			assert_int_equal(p.line, c->f.line);
		}
		if (c->f.form == FRAME_FILE || c->f.form == FRAME_FILE_OFFSET)
			assert_mem(p.file, p.file_len, c->f.file, c->f.file_len);
		if (c->f.form == FRAME_FILE_OFFSET)
			assert_int_equal(p.offset, c->f.offset);
		if (c->f.form == FRAME_MARKER)
			assert_mem(p.name, p.name_len, c->f.name, c->f.name_len);
		sbuf_reset(&again);
		frame_format(&again, &p);
		assert_mem(again.buf, again.len, sb.buf, sb.len);
		assert_int_equal(frame_is_kernel(sb.buf, sb.len), c->f.kind == FRAME_KERNEL);
	}
	sbuf_fini(&sb);
	sbuf_fini(&again);
}

/* Texts nobody wrote still parse, and what looks like a form only when it is exactly one. */
static void test_parse_edges(void **state)
{
	static const struct {
		const char *s;
		enum frame_kind kind;
		enum frame_form form;
	} e[] = {
		{ "", FRAME_NATIVE, FRAME_SYMBOL },
		{ "_[k]", FRAME_KERNEL, FRAME_SYMBOL },
		{ "[]", FRAME_NATIVE, FRAME_SYMBOL },
		{ "[a b]", FRAME_NATIVE, FRAME_SYMBOL }, /* a space: not a file */
		{ "operator+", FRAME_NATIVE, FRAME_SYMBOL },
		{ "a+0x", FRAME_NATIVE, FRAME_SYMBOL },
		{ "a+0xAB", FRAME_NATIVE, FRAME_SYMBOL },   /* upper case: not ours */
		{ "a+0x0ab", FRAME_NATIVE, FRAME_SYMBOL },  /* leading zero: not ours */
		{ "a+0x0", FRAME_NATIVE, FRAME_FILE_OFFSET },
		{ "+0x10", FRAME_NATIVE, FRAME_SYMBOL },
		{ "a b+0x10", FRAME_NATIVE, FRAME_SYMBOL },
		{ "x (", FRAME_NATIVE, FRAME_SYMBOL },
		{ " (f:1)_[py]", FRAME_PYTHON, FRAME_SYMBOL },
		{ "[unknown]_[j]", FRAME_JIT, FRAME_MARKER },
		{ "f_[w]", FRAME_NATIVE, FRAME_SYMBOL },
		{ "_[w]_[w]", FRAME_NATIVE, FRAME_SYMBOL },
	};
	struct sbuf sb = SBUF_INIT;
	struct frame f;
	size_t i;

	for (i = 0; i < sizeof(e) / sizeof(e[0]); i++) {
		frame_parse(e[i].s, strlen(e[i].s), &f);
		assert_int_equal(f.kind, e[i].kind);
		assert_int_equal(f.form, e[i].form);
		sbuf_reset(&sb);
		frame_format(&sb, &f);
		assert_string_equal(sb.buf ? sb.buf : "", e[i].s);
	}
	/* a Python frame without a line, a file with a colon: the file keeps it */
	frame_parse(S("q (C:x)_[py]"), &f);
	assert_mem(f.file, f.file_len, "C:x", 3);
	assert_int_equal(f.line, 0);
	frame_parse(S("q (f:1234567890)_[py]"), &f); /* too long for a line */
	assert_int_equal(f.line, 0);
	sbuf_fini(&sb);
}

/* folded: a stack of every case reads back frame by frame */
static void test_folded(void **state)
{
	struct strtab *st = strtab__new();
	struct profile *p = profile__new(st);
	struct sbuf line = SBUF_INIT, fr = SBUF_INIT;
	const uint32_t *ids;
	size_t i, depth;

	assert_non_null(p);
	sbuf_adds(&line, "root");
	for (i = 0; i < NCASES; i++) {
		format_case(&cases[i], &fr);
		sbuf_addc(&line, ';');
		sbuf_add(&line, fr.buf, fr.len);
	}
	assert_int_equal(folded_add_stack(p, line.buf, line.len, 1, 0, false, 0), 0);
	ids = profile__stack(p, 0, &depth);
	assert_int_equal(depth, NCASES + 1);
	for (i = 0; i < NCASES; i++)
		assert_string_equal(strtab__str(st, (int)ids[i + 1]), cases[i].text);
	sbuf_fini(&line);
	sbuf_fini(&fr);
	profile__free(p);
	strtab__free(st);
}

static Ember__Pprof__Profile *pprof_decode(const struct sbuf *gz)
{
	struct sbuf raw = SBUF_INIT;
	Ember__Pprof__Profile *pr;

	assert_int_equal(gzip_inflate(gz->buf, gz->len, 1 << 24, &raw, NULL), 0);
	pr = ember__pprof__profile__unpack(NULL, raw.len, (const uint8_t *)raw.buf);
	assert_non_null(pr);
	sbuf_fini(&raw);
	return pr;
}

/* pprof: each frame's function has the name, file and line; read back, the same folded text */
static void test_pprof(void **state)
{
	size_t i, k;

	for (i = 0; i < NCASES; i++) {
		const struct fcase *c = &cases[i];
		struct sbuf fr = SBUF_INIT, gz = SBUF_INIT, back = SBUF_INIT, want = SBUF_INIT;
		struct pprof_writer *w = pprof_writer__new(NULL);
		struct strtab *st = strtab__new();
		struct profile *q = profile__new(st);
		Ember__Pprof__Profile *pr;
		const char *frames[2] = { "root", NULL };
		bool found = false;

		format_case(c, &fr);
		frames[1] = fr.buf;
		assert_int_equal(pprof_writer__add(w, frames, 2, 1, NULL), 0);
		assert_int_equal(pprof_writer__finish(w, &gz), 0);
		pr = pprof_decode(&gz);
		for (k = 0; k < pr->n_string_table; k++)
			assert_true(utf8_valid(pr->string_table[k], strlen(pr->string_table[k])));
		for (k = 0; k < pr->n_function; k++) {
			const Ember__Pprof__Function *fn = pr->function[k];
			const char *sys = pr->string_table[fn->system_name ? fn->system_name : fn->name];

			if (strcmp(sys, c->text))
				continue;
			found = true;
			assert_string_equal(pr->string_table[fn->name], c->fn_name);
			if ((c->f.kind == FRAME_PYTHON || c->f.kind == FRAME_JIT) &&
			    c->f.form == FRAME_SYMBOL && c->f.file) {
				assert_int_equal(strlen(pr->string_table[fn->filename]),
						 c->f.file_len);
				assert_memory_equal(pr->string_table[fn->filename], c->f.file,
						    c->f.file_len);
				assert_int_equal(fn->start_line, c->f.line > 0 ? c->f.line : 0);
			}
		}
		assert_true(found);
		ember__pprof__profile__free_unpacked(pr, NULL);
		assert_int_equal(pprof_read(gz.buf, gz.len, q, NULL, NULL, NULL), 0);
		assert_int_equal(folded_write(q, &back), 0);
		sbuf_addf(&want, "root;%s 1\n", c->text);
		assert_string_equal(back.buf, want.buf);
		sbuf_fini(&fr);
		sbuf_fini(&gz);
		sbuf_fini(&back);
		sbuf_fini(&want);
		pprof_writer__free(w);
		profile__free(q);
		strtab__free(st);
	}
}

/* OTLP: the location's type, the function's name, file and line, the mapping and address */
static void test_otlp(void **state)
{
	const struct otlp_process proc = { .pid = 7, .exe_name = "app\xff;x", .exe_path = "/a" };
	size_t i, k;

	for (i = 0; i < NCASES; i++) {
		const struct fcase *c = &cases[i];
		struct otlp_writer *w = otlp_writer__new(99);
		struct sbuf fr = SBUF_INIT, out = SBUF_INIT;
		Ember__Otlp__ExportProfilesServiceRequest *r;
		const Ember__Otlp__ProfilesDictionary *d;
		const Ember__Otlp__Location *l;
		const Ember__Otlp__Function *fn;
		const Ember__Otlp__KeyValueAndUnit *a;
		const char *frames[1];

		assert_non_null(w);
		format_case(c, &fr);
		frames[0] = fr.buf;
		assert_int_equal(otlp_writer__add(w, &proc, 1000, 7, "t\xfe", 0, frames, 1), 0);
		assert_int_equal(otlp_writer__finish(w, 0, 2000, false, &out), 0);
		r = ember__otlp__export_profiles_service_request__unpack(NULL, out.len,
									 (uint8_t *)out.buf);
		assert_non_null(r);
		d = r->dictionary;
		for (k = 0; k < d->n_string_table; k++)
			assert_true(utf8_valid(d->string_table[k], strlen(d->string_table[k])));
		assert_int_equal(d->n_location_table, 2); /* entry 0 is the zero value */
		l = d->location_table[1];
		assert_int_equal(l->n_lines, 1);
		fn = d->function_table[l->lines[0]->function_index];
		assert_string_equal(d->string_table[fn->name_strindex], c->fn_name);
		a = d->attribute_table[l->attribute_indices[0]];
		assert_string_equal(a->value->string_value, c->otlp_type);
		if ((c->f.kind == FRAME_PYTHON || c->f.kind == FRAME_JIT) &&
		    c->f.form == FRAME_SYMBOL && c->f.file) {
			const char *file = d->string_table[fn->filename_strindex];

			assert_int_equal(strlen(file), c->f.file_len);
			assert_memory_equal(file, c->f.file, c->f.file_len);
			assert_int_equal(l->lines[0]->line, c->f.line > 0 ? c->f.line : 0);
		} else {
			assert_int_equal(fn->filename_strindex, 0);
		}
		if ((c->f.form == FRAME_FILE || c->f.form == FRAME_FILE_OFFSET) &&
		    c->f.kind == FRAME_NATIVE) {
			const char *mf;

			assert_true(l->mapping_index > 0);
			mf = d->string_table[d->mapping_table[l->mapping_index]->filename_strindex];
			assert_int_equal(strlen(mf), c->f.file_len);
			assert_memory_equal(mf, c->f.file, c->f.file_len);
			assert_int_equal(l->address, c->f.form == FRAME_FILE_OFFSET ? c->f.offset : 0);
		} else {
			assert_int_equal(l->mapping_index, 0);
		}
		ember__otlp__export_profiles_service_request__free_unpacked(r, NULL);
		sbuf_fini(&fr);
		sbuf_fini(&out);
		otlp_writer__free(w);
	}
}

/* The one rule: escaped bytes, the same in the frame text, JSON and XML; valid text untouched. */
static void test_utf8_rule(void **state)
{
	static const struct {
		const char *in;
		size_t len;
		const char *frame, *json, *xml, *plain;
	} u[] = {
		{ S("caf\xc3\xa9"), "caf\xc3\xa9", "caf\xc3\xa9", "caf\xc3\xa9", "caf\xc3\xa9" },
		{ S("a\xff"), "a\\xff", "a\\\\xff", "a\\xff", "a\\xff" },
		{ S("\xed\xa0\x80"), "\\xed\\xa0\\x80", "\\\\xed\\\\xa0\\\\x80", "\\xed\\xa0\\x80",
		  "\\xed\\xa0\\x80" }, /* a surrogate */
		{ S("\xc0\xaf"), "\\xc0\\xaf", "\\\\xc0\\\\xaf", "\\xc0\\xaf", "\\xc0\\xaf" },
		{ S("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80", "\\\\xf4\\\\x90\\\\x80\\\\x80",
		  "\\xf4\\x90\\x80\\x80", "\\xf4\\x90\\x80\\x80" }, /* past U+10FFFF */
		{ S("a;b\n"), "a:b\\x0a", "a;b\\u000a", "a;b?", "a;b\n" },
	};
	struct sbuf sb = SBUF_INIT, again = SBUF_INIT;
	size_t i;

	for (i = 0; i < sizeof(u) / sizeof(u[0]); i++) {
		sbuf_reset(&sb);
		sbuf_add_frame(&sb, u[i].in, u[i].len);
		assert_string_equal(sb.buf, u[i].frame);
		sbuf_reset(&sb);
		sbuf_add_json(&sb, u[i].in, u[i].len);
		assert_string_equal(sb.buf, u[i].json);
		sbuf_reset(&sb);
		sbuf_add_xml(&sb, u[i].in, u[i].len);
		assert_string_equal(sb.buf, u[i].xml);
		sbuf_reset(&sb);
		sbuf_add_utf8(&sb, u[i].in, u[i].len);
		assert_string_equal(sb.buf, u[i].plain);
		assert_true(utf8_valid(sb.buf, sb.len));
		/* idempotent: what the rule wrote goes through it unchanged */
		sbuf_reset(&again);
		assert_int_equal(sbuf_add_utf8(&again, sb.buf, sb.len), 0);
		assert_string_equal(again.buf, sb.buf);
	}
	sbuf_fini(&sb);
	sbuf_fini(&again);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_format), cmocka_unit_test(test_parse_edges),
		cmocka_unit_test(test_folded),	     cmocka_unit_test(test_pprof),
		cmocka_unit_test(test_otlp),	     cmocka_unit_test(test_utf8_rule),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
