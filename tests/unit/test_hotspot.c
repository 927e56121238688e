// SPDX-License-Identifier: MIT
/*
 * hotspot: the names Java frames get from a method's Symbols (hotspot_method_name), the
 * compressed ints of compiled methods' scopes (hotspot_read_int, against HotSpot's encoder), and which
 * JVMs' facts are taken for the BPF walk (hotspot_facts_check): Debian's OpenJDK 17 libjvm,
 * dlopen'ed here (no VM created) and its offsets resolved from this process, is accepted with
 * the frame slots of x86-64 HotSpot; Temurin 25 (when installed: not a Debian package) is
 * refused for its layout; each required item missing or out of range is refused with its reason.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ember/daemon/elf/rtintro.h"
#include "ember/daemon/unwind/hotspot.h"

#define JDK17 "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"
#define JDK25 "/usr/lib/jvm/temurin-25-jdk-amd64/lib/server/libjvm.so"

static void test_method_names(void **state)
{
	static const struct {
		const char *klass, *method, *want;
		size_t cap;
	} cases[] = {
		{ "App", "main", "App.main", 64 },
		{ "java/util/HashMap", "get", "java.util.HashMap.get", 64 },
		{ "App$Burner", "burnInstance", "App$Burner.burnInstance", 64 },
		/* hidden classes: the address suffix goes (JDK 17's "+0x", Class.getName()'s "/0x") */
		{ "App$$Lambda$14+0x0000000800c01234", "getAsInt", "App$$Lambda$14.getAsInt", 64 },
		{ "p/App$$Lambda$2/0x00007f3454000c10", "run", "p.App$$Lambda$2.run", 64 },
		/* a '+' or '/' not followed by an address stays (as '.', for '/') */
		{ "a+b", "c", "a+b.c", 64 },
		{ "x/0y", "z", "x.0y.z", 64 },
		{ "App", "<init>", "App.<init>", 64 },
		/* what a folded line cannot hold is replaced */
		{ "A;B", "m\n", "A:B.m?", 64 },
		/* bounded by the buffer */
		{ "java/lang/Object", "hashCode", "java.lan", 9 },
		{ "", "m", ".m", 64 },
	};
	char out[64];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = hotspot_method_name(cases[i].klass, strlen(cases[i].klass), cases[i].method,
					       strlen(cases[i].method), out, cases[i].cap);

		assert_string_equal(out, cases[i].want);
		assert_int_equal(n, strlen(cases[i].want));
	}
	assert_int_equal(hotspot_method_name("A", 1, "b", 1, out, 0), 0);
}

/* CompressedWriteStream::write_int() before JDK 20, the encoder HotSpot's scopes are written
 * with: the reader must give back what it wrote */
static size_t write_int(uint8_t *out, uint32_t sum)
{
	size_t n = 0;

	for (int i = 0;; i++) {
		if (sum < 192 || i == 4) {
			out[n++] = (uint8_t)sum;
			return n;
		}
		sum -= 192;
		out[n++] = (uint8_t)(192 + (sum % 64));
		sum >>= 6;
	}
}

static void test_read_int(void **state)
{
	static const struct {
		uint8_t in[6];
		size_t len;
		int ret;
		int32_t val;
		size_t pos;
	} cases[] = {
		{ { 0 }, 1, 0, 0, 1 },
		{ { 191 }, 1, 0, 191, 1 },
		{ { 192, 0 }, 2, 0, 192, 2 },
		{ { 232, 12 }, 2, 0, 1000, 2 },		/* 232 + (12 << 6) */
		{ { 255, 255, 255, 255, 255 }, 5, 0,	/* five bytes at most: the fifth ends it */
		  (int32_t)(255u + (255u << 6) + (255u << 12) + (255u << 18) + (255u << 24)), 5 },
		{ { 200 }, 1, -EINVAL, 0, 1 },		/* cut short */
		{ { 200, 200 }, 2, -EINVAL, 0, 2 },
		{ { 0 }, 0, -EINVAL, 0, 0 },
	};
	uint8_t buf[16];
	size_t pos;
	int32_t v;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pos = 0;
		v = 0;
		assert_int_equal(hotspot_read_int(cases[i].in, cases[i].len, &pos, &v), cases[i].ret);
		if (!cases[i].ret)
			assert_int_equal(v, cases[i].val);
		assert_int_equal(pos, cases[i].pos);
	}
	/* round trips, and three in a row as a scope's header is (sender, method, bci) */
	for (uint32_t x = 0; x < 3000000; x += 997) {
		size_t n = write_int(buf, x);

		n += write_int(buf + n, x / 3);
		n += write_int(buf + n, 0);
		pos = 0;
		assert_int_equal(hotspot_read_int(buf, n, &pos, &v), 0);
		assert_int_equal(v, (int32_t)x);
		assert_int_equal(hotspot_read_int(buf, n, &pos, &v), 0);
		assert_int_equal(v, (int32_t)(x / 3));
		assert_int_equal(hotspot_read_int(buf, n, &pos, &v), 0);
		assert_int_equal(v, 0);
		assert_int_equal(pos, n);
	}
}

/* A method's line number table as javac's LineNumberTable becomes in ConstMethod (before JDK
 * 20): one byte per small step, 0xff and two zigzag ints for the others, 0 at the end. */
static void test_line_at(void **state)
{
	/* bci 0 line 10 (escaped: a line step of 10), bci 4 line 11, bci 9 line 13, bci 40 line
	 * 120 (escaped: 31, 107 -> 62, 214 as "d6 00"), bci 42 line 20 (escaped: 2, -100 -> 4,
	 * 199 as "c7 00"), the end */
	static const uint8_t tab[] = { 0xff, 0x00, 0x14, 0x21, 0x2a, 0xff, 0x3e, 0xd6, 0x00,
				       0xff, 0x04, 0xc7, 0x00, 0x00 };
	static const struct {
		uint32_t bci;
		int line;
	} q[] = { { 0, 10 },  { 3, 10 },  { 4, 11 },  { 6, 11 },  { 9, 13 },
		  { 39, 13 }, { 40, 120 }, { 41, 120 }, { 42, 20 }, { 9000, 20 } };
	static const uint8_t empty[] = { 0 }, forged[] = { 0xff, 0xfe, 0xff, 0xff, 0xff, 0x0f,
							    0x00, 0x00 };
	uint8_t buf[64];
	size_t n;

	(void)state;
	for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++)
		assert_int_equal(hotspot_line_at(tab, sizeof(tab), q[i].bci), q[i].line);
	/* no end within the bytes read, cut inside an escape: not known */
	assert_int_equal(hotspot_line_at(tab, sizeof(tab) - 1, 100), -EINVAL);
	assert_int_equal(hotspot_line_at(tab, 2, 0), -EINVAL);
	assert_int_equal(hotspot_line_at(tab, 0, 0), -EINVAL);
	/* a method without lines; a forged step past any method's bytecode */
	assert_int_equal(hotspot_line_at(empty, sizeof(empty), 5), 0);
	assert_int_equal(hotspot_line_at(forged, sizeof(forged), 5), -EINVAL);
	/* the table as the test's own writer makes it: every line found again */
	n = 0;
	for (uint32_t k = 0, prev_b = 0, prev_l = 0; k < 12; k++) {
		uint32_t b = k * 5, l = 1000 + k * 37 % 11;
		int32_t db = (int32_t)(b - prev_b), dl = (int32_t)(l - prev_l);

		if (db >= 0 && db <= 31 && dl >= 0 && dl <= 7 && ((db << 3) | dl) != 0xff &&
		    (db || dl)) {
			buf[n++] = (uint8_t)(db << 3 | dl);
		} else {
			buf[n++] = 0xff;
			/* zigzag: 0, -1, 1, -2, ... as 0, 1, 2, 3, ... */
			n += write_int(buf + n, db < 0 ? ~((uint32_t)db << 1) : (uint32_t)db << 1);
			n += write_int(buf + n, dl < 0 ? ~((uint32_t)dl << 1) : (uint32_t)dl << 1);
		}
		prev_b = b;
		prev_l = l;
	}
	buf[n++] = 0;
	for (uint32_t k = 0; k < 12; k++)
		assert_int_equal(hotspot_line_at(buf, n, k * 5), 1000 + k * 37 % 11);
}

/* A JVM's facts as a resolved JDK 17 would have them: every item, small offsets. */
static void facts_ok(struct rtintro_hotspot *h)
{
	memset(h, 0, sizeof(*h));
	for (unsigned int i = 0; i < RTI_HS__COUNT; i++) {
		h->have[i] = true;
		h->val[i] = 8 * (i + 1);
	}
	h->have[RTI_HS_NMETHOD_IMMUTABLE] = false; /* JDK 23+ */
	h->have[RTI_HS_FRAME_INTERP_METHOD] = false;
	h->have[RTI_HS_FRAME_INTERP_BCP] = false;
	h->have[RTI_HS_FRAME_INTERP_SENDER_SP] = false;
	h->major = 17;
	h->offsets_resolved = true;
}

static void test_facts_check(void **state)
{
	struct rtintro_hotspot h;
	struct ember_hs_proc p;
	int why = -1;

	(void)state;
	facts_ok(&h);
	assert_true(hotspot_facts_check(&h, &p, &why));
	assert_int_equal(why, RTI_OK);
	assert_int_equal(p.blob_frame_size, h.val[RTI_HS_CODEBLOB_FRAME_SIZE]);
	assert_int_equal(p.interp_method, -3);
	assert_int_equal(p.interp_bcp, -8);
	assert_int_equal(p.interp_sender_sp, -1);

	/* versions whose code blobs hold offsets, or older than the walker knows */
	facts_ok(&h);
	h.major = 23;
	assert_false(hotspot_facts_check(&h, &p, &why));
	assert_int_equal(why, RTI__REASONS);
	facts_ok(&h);
	h.have[RTI_HS_NMETHOD_IMMUTABLE] = true;
	assert_false(hotspot_facts_check(&h, &p, &why));
	assert_int_equal(why, RTI__REASONS);
	facts_ok(&h);
	h.major = 0; /* unknown: not guessed */
	assert_false(hotspot_facts_check(&h, &p, &why));
	assert_int_equal(why, RTI__REASONS);

	/* an item missing, an offset out of range */
	facts_ok(&h);
	h.have[RTI_HS_KLASS_NAME] = false;
	assert_false(hotspot_facts_check(&h, &p, &why));
	assert_int_equal(why, RTI_MISSING);
	facts_ok(&h);
	h.val[RTI_HS_CODEBLOB_FRAME_SIZE] = 65536;
	assert_false(hotspot_facts_check(&h, &p, &why));
	assert_int_equal(why, RTI_BAD_VALUE);

	/* frame slots the VM states: taken when below rbp and distinct */
	facts_ok(&h);
	h.have[RTI_HS_FRAME_INTERP_METHOD] = true;
	h.val[RTI_HS_FRAME_INTERP_METHOD] = (uint64_t)-4;
	assert_true(hotspot_facts_check(&h, &p, &why));
	assert_int_equal(p.interp_method, -4);
	h.val[RTI_HS_FRAME_INTERP_METHOD] = 3;
	assert_false(hotspot_facts_check(&h, &p, &why));
	assert_int_equal(why, RTI_BAD_VALUE);
	h.val[RTI_HS_FRAME_INTERP_METHOD] = (uint64_t)-8; /* the bcp's */
	assert_false(hotspot_facts_check(&h, &p, &why));
	assert_int_equal(why, RTI_BAD_VALUE);
}

static bool self_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	memcpy(buf, (const void *)(uintptr_t)addr, len);
	return true;
}

static bool jdk_missing(const char *path)
{
	if (access(path, R_OK) == 0)
		return false;
	if (!strcmp(path, JDK17) && getenv("CI") && !strcmp(getenv("CI"), "true"))
		fail_msg("%s missing under CI (openjdk-17-jdk-headless)", path);
	print_message("no %s: skipped\n", path);
	return true;
}

static void test_debian_jdk17(void **state)
{
	struct rtintro_stats st = { 0 };
	struct rtintro_hotspot h;
	struct ember_hs_proc p;
	struct link_map *lm;
	void *dl;
	int fd, why = -1;

	(void)state;
	if (jdk_missing(JDK17))
		return;
	fd = open(JDK17, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(rtintro_hotspot_read(fd, &h, &st), 0);
	close(fd);
	assert_int_equal(h.missing_required, 0);
	dl = dlopen(JDK17, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(dl);
	assert_int_equal(dlinfo(dl, RTLD_DI_LINKMAP, &lm), 0);
	assert_int_equal(rtintro_hotspot_resolve(&h, lm->l_addr, self_read, NULL, &st), 0);
	assert_int_equal(h.major, 17);
	assert_true(hotspot_facts_check(&h, &p, &why));
	assert_int_equal(why, RTI_OK);
	/* x86-64 frame_x86.hpp: Method* and bcp below rbp, the sender's sp right below it */
	assert_int_equal(p.interp_method, -3);
	assert_int_equal(p.interp_bcp, -8);
	assert_int_equal(p.interp_sender_sp, -1);
	/* what [hotspot] lines reads: the flags' bit, the source file's index */
	assert_true(h.have[RTI_HS_CONSTMETHOD_FLAGS]);
	assert_true(h.have[RTI_HS_CONSTMETHOD_CODE_SIZE]);
	assert_true(h.have[RTI_HS_CONSTMETHOD_HAS_LINES]);
	assert_int_equal(h.val[RTI_HS_CONSTMETHOD_HAS_LINES], 1);
	assert_true(h.have[RTI_HS_CPOOL_SOURCE_FILE] || h.have[RTI_HS_IKLASS_SOURCE_FILE]);
	/* a HeapBlock header (length, used), then the blob whose frame size is an int in it */
	assert_int_equal(p.heapblock_size, 16);
	assert_true(p.blob_frame_size < h.val[RTI_HS_CODEBLOB_SIZEOF]);
	assert_true(p.blob_code_begin < h.val[RTI_HS_CODEBLOB_SIZEOF]);
	print_message("JDK 17 '%s': blob name %u frame size %u complete %u code %u; method "
		      "constMethod %u; ConstMethod %u bytes\n",
		      h.release, p.blob_name, p.blob_frame_size, p.blob_frame_complete,
		      p.blob_code_begin, p.method_constmethod, p.constmethod_size);
	/* dlclose is not attempted: libjvm registers atexit handlers */
}

static void test_temurin_jdk25(void **state)
{
	struct rtintro_stats st = { 0 };
	struct rtintro_hotspot h;
	struct ember_hs_proc p;
	int fd, why = -1;

	(void)state;
	if (jdk_missing(JDK25))
		return;
	fd = open(JDK25, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(rtintro_hotspot_read(fd, &h, &st), 0);
	close(fd);
	/* code blobs of offsets and immutable data: a layout the walker does not read, refused
	 * by version, never walked as if it were 17's */
	assert_int_equal(h.major, 25);
	/* its flags' constant under JDK 21's name is found all the same */
	assert_true(h.have[RTI_HS_CONSTMETHOD_HAS_LINES]);
	assert_false(hotspot_facts_check(&h, &p, &why));
	assert_int_equal(why, RTI__REASONS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_method_names),
		cmocka_unit_test(test_facts_check),
		cmocka_unit_test(test_read_int),
		cmocka_unit_test(test_line_at),
		cmocka_unit_test(test_debian_jdk17),
		cmocka_unit_test(test_temurin_jdk25),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
