// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "ember/core/formats/folded.h"
#include "ember/core/base/lineread.h"
#include "ember/core/formats/pprof.h"
#include "ember/core/model/profile.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"

static struct profile *parse(struct strtab *st, const char *text)
{
	struct profile *p = profile__new(st);
	struct lineread *lr = lineread__new_mem(text, strlen(text), 0);
	struct folded_read_opts o = { .columns = FOLDED_COLUMNS_ONE, .strict = true };

	assert_non_null(p);
	assert_non_null(lr);
	assert_int_equal(folded_read(lr, p, &o, NULL, NULL), 0);
	lineread__free(lr);
	return p;
}

static char *folded_text(const struct profile *p)
{
	struct sbuf sb = SBUF_INIT;

	assert_int_equal(folded_write(p, &sb), 0);
	return sbuf_detach(&sb, NULL);
}

/* folded -> pprof -> folded gives the same text: names, order of frames, counts */
static void test_round_trip(void **state)
{
	static const char *const inputs[] = {
		"main;foo;bar 3\nmain;foo 2\nmain;baz_[k] 5\nother 1\n",
		/* inlined frames share their caller's location; JIT and kernel mappings */
		"java;Interp_[j];a_[i];b_[i];c 7\njava;a_[i] 1\nswapper;do_idle_[k] 9\n",
		/* the same frame twice in a stack, spaces, UTF-8, a big count */
		"a b;c;a b;c 1\nπ;λ 2\nx 123456789012\n",
		/* an empty stack is a sample with no locations */
		"a 1\n",
	};
	size_t i;

	for (i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
		struct strtab *st = strtab__new(), *st2 = strtab__new();
		struct profile *p = parse(st, inputs[i]), *q = profile__new(st2);
		struct sbuf gz = SBUF_INIT;
		struct pprof_info info;
		char *a, *b;

		assert_int_equal(pprof_write_profile(p, NULL, &gz), 0);
		assert_true(pprof_is_gzip(gz.buf, gz.len));
		assert_int_equal(pprof_read(gz.buf, gz.len, q, NULL, &info, NULL), 0);
		assert_string_equal(info.sample_type, "samples/count");
		assert_int_equal(info.period, 10101010); /* 1e9 / 99 Hz */
		a = folded_text(p);
		b = folded_text(q);
		assert_string_equal(a, b);
		free(a);
		free(b);
		sbuf_fini(&gz);
		profile__free(p);
		profile__free(q);
		strtab__free(st);
		strtab__free(st2);
	}
}

/* the cpu/nanoseconds value is count * period; time, duration and labels are written */
static void test_values_labels_and_time(void **state)
{
	struct pprof_opts o = { .freq_hz = 1000, .time_ns = 1700000000123456789LL,
				.duration_ns = 5000000000LL };
	struct pprof_writer *w = pprof_writer__new(&o);
	const char *const s1[] = { "main", "work" };
	struct pprof_labels lb = { .pid = 42, .tid = 43, .comm = "burn" };
	struct strtab *st = strtab__new();
	struct profile *q = profile__new(st);
	struct pprof_read_opts ro = { .sample_index = 1 };
	struct pprof_info info;
	struct sbuf gz = SBUF_INIT;
	char *text;

	assert_non_null(w);
	assert_int_equal(pprof_writer__add(w, s1, 2, 3, &lb), 0);
	assert_int_equal(pprof_writer__add(w, s1, 2, 2, &lb), 0);	/* summed */
	assert_int_equal(pprof_writer__add(w, s1, 2, 1, NULL), 0);	/* other labels */
	assert_int_equal(pprof_writer__add(w, s1, 2, 0.6, NULL), 0);	/* rounded to 1 */
	assert_int_equal(pprof_writer__add(w, s1, 2, -1, NULL), -EINVAL);
	assert_int_equal(pprof_writer__rounded(w), 1);
	assert_int_equal(pprof_writer__finish(w, &gz), 0);
	assert_int_equal(pprof_read(gz.buf, gz.len, q, &ro, &info, NULL), 0);
	assert_string_equal(info.sample_type, "cpu/nanoseconds");
	assert_int_equal(info.time_ns, 1700000000123456789LL);
	assert_int_equal(info.duration_ns, 5000000000LL);
	assert_int_equal(info.period, 1000000);
	assert_int_equal(info.samples, 2);
	text = folded_text(q);
	assert_string_equal(text, "main;work 7000000\n");
	free(text);

	/* the labels are in the string table of the decompressed message */
	{
		z_stream zs = { 0 };
		static unsigned char raw[1 << 16];

		assert_int_equal(inflateInit2(&zs, 31), Z_OK);
		zs.next_in = (unsigned char *)gz.buf;
		zs.avail_in = (unsigned)gz.len;
		zs.next_out = raw;
		zs.avail_out = sizeof(raw);
		assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
		assert_non_null(memmem(raw, zs.total_out, "burn", 4));
		assert_non_null(memmem(raw, zs.total_out, "pid", 3));
		assert_non_null(memmem(raw, zs.total_out, "tid", 3));
		assert_non_null(memmem(raw, zs.total_out, "[user]", 6));
		inflateEnd(&zs);
	}
	sbuf_fini(&gz);
	pprof_writer__free(w);
	profile__free(q);
	strtab__free(st);
}

/* hand-made protobuf: the reader validates every reference */
static void put_varint(struct sbuf *sb, uint64_t v)
{
	do {
		unsigned char c = v & 0x7f;

		v >>= 7;
		sbuf_addc(sb, (char)(c | (v ? 0x80 : 0)));
	} while (v);
}

static void put_bytes(struct sbuf *sb, int field, const struct sbuf *msg)
{
	put_varint(sb, (uint64_t)field << 3 | 2);
	put_varint(sb, msg->len);
	sbuf_add(sb, msg->buf, msg->len);
}

static void put_uint(struct sbuf *sb, int field, uint64_t v)
{
	put_varint(sb, (uint64_t)field << 3);
	put_varint(sb, v);
}

static void put_str(struct sbuf *sb, int field, const char *s)
{
	put_varint(sb, (uint64_t)field << 3 | 2);
	put_varint(sb, strlen(s));
	sbuf_adds(sb, s);
}

/* A Go-style profile: sparse ids, a location without lines, and a bad reference if @broken. */
static void make_profile(struct sbuf *out, int broken)
{
	struct sbuf vt = SBUF_INIT, smp = SBUF_INIT, loc = SBUF_INIT, line = SBUF_INIT,
		    fn = SBUF_INIT;

	put_uint(&vt, 1, 1);	/* samples */
	put_uint(&vt, 2, 2);	/* count */
	put_bytes(out, 1, &vt);
	/* sample: locations 900 (leaf), 7; value 4 */
	put_uint(&smp, 1, 900);
	put_uint(&smp, 1, broken == 1 ? 8 : 7);
	put_uint(&smp, 2, 4);
	put_bytes(out, 2, &smp);
	/* location 7 -> function 1000 */
	put_uint(&loc, 1, 7);
	put_uint(&line, 1, broken == 2 ? 1001 : 1000);
	put_bytes(&loc, 4, &line);
	put_bytes(out, 4, &loc);
	/* location 900: address only */
	sbuf_reset(&loc);
	put_uint(&loc, 1, 900);
	put_uint(&loc, 3, 0x4a1f20);
	put_bytes(out, 4, &loc);
	put_uint(&fn, 1, 1000);
	put_uint(&fn, 2, broken == 3 ? 99 : 3);
	put_bytes(out, 5, &fn);
	put_str(out, 6, "");
	put_str(out, 6, "samples");
	put_str(out, 6, "count");
	put_str(out, 6, "main;x");	/* a ';' in a name must not split the frame */
	sbuf_fini(&vt);
	sbuf_fini(&smp);
	sbuf_fini(&loc);
	sbuf_fini(&line);
	sbuf_fini(&fn);
}

static void test_foreign_and_invalid(void **state)
{
	int broken;

	for (broken = 0; broken <= 3; broken++) {
		struct strtab *st = strtab__new();
		struct profile *p = profile__new(st);
		struct parse_error perr = { 0 };
		struct sbuf pb = SBUF_INIT;
		int r;

		make_profile(&pb, broken);
		r = pprof_read(pb.buf, pb.len, p, NULL, NULL, &perr);
		if (!broken) {
			char *t = folded_text(p);

			assert_int_equal(r, 0);
			assert_string_equal(t, "main:x;0x4a1f20 4\n");
			free(t);
		} else {
			assert_int_equal(r, -EINVAL);
			assert_non_null(perr.reason);
		}
		sbuf_fini(&pb);
		profile__free(p);
		strtab__free(st);
	}
}

/* Without samples/count, the value read is the default sample type (a string index), else the
 * last one, as pprof does. */
static void test_default_sample_type(void **state)
{
	int with_default;

	for (with_default = 0; with_default <= 1; with_default++) {
		struct sbuf pb = SBUF_INIT, vt = SBUF_INIT, smp = SBUF_INIT;
		struct strtab *st = strtab__new();
		struct profile *p = profile__new(st);
		struct pprof_info info;
		static const char *const strs[] = { "", "alloc", "count", "cpu", "nanoseconds",
						    "wall", "f" };
		size_t i;
		char *t;

		for (i = 0; i < 3; i++) { /* alloc/count, cpu/nanoseconds, wall/nanoseconds */
			sbuf_reset(&vt);
			put_uint(&vt, 1, i == 0 ? 1 : i == 1 ? 3 : 5);
			put_uint(&vt, 2, i == 0 ? 2 : 4);
			put_bytes(&pb, 1, &vt);
		}
		put_uint(&smp, 1, 1);
		put_uint(&smp, 2, 10);
		put_uint(&smp, 2, 20);
		put_uint(&smp, 2, 30);
		put_bytes(&pb, 2, &smp);
		sbuf_reset(&vt); /* location 1 -> function 1 named "f" */
		{
			struct sbuf loc = SBUF_INIT, line = SBUF_INIT, fn = SBUF_INIT;

			put_uint(&loc, 1, 1);
			put_uint(&line, 1, 1);
			put_bytes(&loc, 4, &line);
			put_bytes(&pb, 4, &loc);
			put_uint(&fn, 1, 1);
			put_uint(&fn, 2, 6);
			put_bytes(&pb, 5, &fn);
			sbuf_fini(&loc);
			sbuf_fini(&line);
			sbuf_fini(&fn);
		}
		for (i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
			put_str(&pb, 6, strs[i]);
		if (with_default)
			put_uint(&pb, 14, 3); /* "cpu" */
		assert_int_equal(pprof_read(pb.buf, pb.len, p, NULL, &info, NULL), 0);
		assert_int_equal(info.sample_index, with_default ? 1 : 2);
		t = folded_text(p);
		assert_string_equal(t, with_default ? "f 20\n" : "f 30\n");
		free(t);
		sbuf_fini(&pb);
		sbuf_fini(&vt);
		sbuf_fini(&smp);
		profile__free(p);
		strtab__free(st);
	}
}

static void test_garbage_and_limits(void **state)
{
	struct strtab *st = strtab__new();
	struct profile *p = profile__new(st);
	struct parse_error perr = { 0 };
	struct pprof_read_opts o = PPROF_READ_OPTS_DEFAULT;
	struct sbuf gz = SBUF_INIT;
	struct profile *src;
	static const unsigned char bad_gz[] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0xff, 0xff };

	assert_int_equal(pprof_read("hello world", 11, p, NULL, NULL, &perr), -EINVAL);
	assert_int_equal(pprof_read(bad_gz, sizeof(bad_gz), p, NULL, NULL, &perr), -EINVAL);
	assert_int_equal(pprof_read("", 0, p, NULL, NULL, &perr), -EINVAL); /* no string table */
	src = parse(st, "a;b 1\n");
	assert_int_equal(pprof_write_profile(src, NULL, &gz), 0);
	/* count * period past 2^63 */
	{
		struct profile *big = parse(st, "a 9007199254740992\n");
		struct sbuf tmp = SBUF_INIT;

		assert_int_equal(pprof_write_profile(big, NULL, &tmp), -EOVERFLOW);
		sbuf_fini(&tmp);
		profile__free(big);
	}
	o.max_bytes = 16;
	assert_int_equal(pprof_read(gz.buf, gz.len, p, &o, NULL, &perr), -E2BIG);
	o = PPROF_READ_OPTS_DEFAULT;
	o.sample_index = 2;
	assert_int_equal(pprof_read(gz.buf, gz.len, p, &o, NULL, &perr), -EINVAL);
	/* truncated gzip */
	assert_int_equal(pprof_read(gz.buf, gz.len - 6, p, NULL, NULL, &perr), -EINVAL);
	sbuf_fini(&gz);
	profile__free(src);
	profile__free(p);
	strtab__free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_values_labels_and_time),
		cmocka_unit_test(test_foreign_and_invalid),
		cmocka_unit_test(test_default_sample_type),
		cmocka_unit_test(test_garbage_and_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
