// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#include "gen/otlp.pb-c.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/formats/otlp.h"

typedef Ember__Otlp__ExportProfilesServiceRequest Req;

static Req *decode(const struct sbuf *sb)
{
	Req *r = ember__otlp__export_profiles_service_request__unpack(NULL, sb->len,
								      (uint8_t *)sb->buf);

	assert_non_null(r);
	return r;
}

static const char *str(const Req *r, int32_t i)
{
	assert_true(i >= 0 && (size_t)i < r->dictionary->n_string_table);
	return r->dictionary->string_table[i];
}

/* The name of location @li's function. */
static const char *loc_name(const Req *r, int32_t li)
{
	const Ember__Otlp__ProfilesDictionary *d = r->dictionary;
	const Ember__Otlp__Location *l;

	assert_true(li > 0 && (size_t)li < d->n_location_table);
	l = d->location_table[li];
	assert_int_equal(l->n_lines, 1);
	assert_true(l->lines[0]->function_index > 0 &&
		    (size_t)l->lines[0]->function_index < d->n_function_table);
	return str(r, d->function_table[l->lines[0]->function_index]->name_strindex);
}

/* The location's profile.frame.type. */
static const char *loc_type(const Req *r, int32_t li)
{
	const Ember__Otlp__ProfilesDictionary *d = r->dictionary;
	const Ember__Otlp__Location *l = d->location_table[li];
	const Ember__Otlp__KeyValueAndUnit *a;

	assert_int_equal(l->n_attribute_indices, 1);
	a = d->attribute_table[l->attribute_indices[0]];
	assert_string_equal(str(r, a->key_strindex), "profile.frame.type");
	return a->value->string_value;
}

static const char *res_attr(const Ember__Otlp__ResourceProfiles *rp, const char *key)
{
	size_t i;

	for (i = 0; i < rp->resource->n_attributes; i++)
		if (!strcmp(rp->resource->attributes[i]->key, key))
			return rp->resource->attributes[i]->value->string_value;
	return NULL;
}

static void test_request_shape(void **state)
{
	struct otlp_writer *w = otlp_writer__new(100);
	struct otlp_process a = { .pid = 42, .exe_name = "burn", .exe_path = "/usr/bin/burn",
				  .build_id = "abcdef", .container_id = "c0ffee",
				  .service_name = "svc", .host_name = "h" };
	struct otlp_process b = { .pid = 43, .exe_name = "python3", .host_name = "h" };
	const char *s1[] = { "main", "spin", "do_syscall_64_[k]" };
	const char *s2[] = { "<module> (/t/x.py:3)_[py]", "f (/t/x.py:10)_[py]", "burn+0x1234" };
	const Ember__Otlp__ProfilesDictionary *d;
	const Ember__Otlp__Profile *p;
	const Ember__Otlp__Stack *st;
	const Ember__Otlp__Location *l;
	struct sbuf sb = SBUF_INIT;
	size_t i, nts = 0;
	Req *r;

	(void)state;
	assert_non_null(w);
	assert_int_equal(otlp_writer__add(w, &a, 1000, 7, "burn", 1, s1, 3), 0);
	assert_int_equal(otlp_writer__add(w, &a, 2000, 7, "burn", 1, s1, 3), 0);
	assert_int_equal(otlp_writer__add(w, &a, 3000, 8, "worker", 0, s1, 3), 0);
	assert_int_equal(otlp_writer__add(w, &b, 4000, 43, "python3", UINT32_MAX, s2, 3), 0);
	assert_int_equal(otlp_writer__add(w, &a, 5000, 7, "burn", 1, s2, 3), 0);
	assert_int_equal(otlp_writer__samples(w), 5);
	assert_true(otlp_writer__size(w) > 0);
	assert_int_equal(otlp_writer__finish(w, 500, 6000, false, &sb), 0);
	assert_int_equal(otlp_writer__samples(w), 0);
	r = decode(&sb);
	d = r->dictionary;
	/* entry 0 of every table is the zero value */
	assert_string_equal(d->string_table[0], "");
	assert_int_equal(d->mapping_table[0]->filename_strindex, 0);
	assert_int_equal(d->location_table[0]->n_lines, 0);
	assert_int_equal(d->function_table[0]->name_strindex, 0);
	assert_int_equal(d->attribute_table[0]->key_strindex, 0);
	assert_null(d->attribute_table[0]->value);
	assert_int_equal(d->stack_table[0]->n_location_indices, 0);
	assert_int_equal(d->n_link_table, 1);
	/* deduplicated: one string each */
	for (i = 1; i < d->n_string_table; i++) {
		size_t j;

		for (j = 0; j < i; j++)
			assert_string_not_equal(d->string_table[i], d->string_table[j]);
	}
	assert_int_equal(r->n_resource_profiles, 2);
	assert_string_equal(res_attr(r->resource_profiles[0], "container.id"), "c0ffee");
	assert_string_equal(res_attr(r->resource_profiles[0], "service.name"), "svc");
	assert_string_equal(res_attr(r->resource_profiles[0], "process.executable.build_id.gnu"),
			    "abcdef");
	assert_null(res_attr(r->resource_profiles[1], "container.id"));
	assert_int_equal(r->resource_profiles[0]->resource->attributes[0]->value->int_value, 42);
	p = r->resource_profiles[0]->scope_profiles[0]->profiles[0];
	assert_int_equal(p->period, 10000000);
	assert_string_equal(str(r, p->sample_type->type_strindex), "samples");
	assert_string_equal(str(r, p->period_type->unit_strindex), "nanoseconds");
	assert_int_equal(p->time_unix_nano, 500);
	assert_int_equal(p->duration_nano, 5500);
	assert_int_equal(p->profile_id.len, 16);
	/* pid 42: (s1, tid 7, cpu 1) x2, (s1, tid 8) x1, (s2, tid 7) x1 */
	assert_int_equal(p->n_samples, 3);
	for (i = 0; i < p->n_samples; i++) {
		assert_int_equal(p->samples[i]->n_values, p->samples[i]->n_timestamps_unix_nano);
		nts += p->samples[i]->n_timestamps_unix_nano;
	}
	assert_int_equal(nts, 4);
	assert_int_equal(p->samples[0]->timestamps_unix_nano[0], 1000);
	assert_int_equal(p->samples[0]->timestamps_unix_nano[1], 2000);
	assert_int_equal(p->samples[0]->n_attribute_indices, 3);
	st = d->stack_table[p->samples[0]->stack_index];
	assert_int_equal(st->n_location_indices, 3);
	/* leaf first */
	assert_string_equal(loc_name(r, st->location_indices[0]), "do_syscall_64");
	assert_string_equal(loc_type(r, st->location_indices[0]), "kernel");
	assert_string_equal(loc_name(r, st->location_indices[2]), "main");
	assert_string_equal(loc_type(r, st->location_indices[2]), "native");
	/* Python: function, file and line; unresolved native: mapping + address + build id */
	st = d->stack_table[p->samples[2]->stack_index];
	assert_string_equal(loc_name(r, st->location_indices[1]), "f");
	assert_string_equal(loc_type(r, st->location_indices[1]), "cpython");
	l = d->location_table[st->location_indices[1]];
	assert_int_equal(l->lines[0]->line, 10);
	assert_string_equal(str(r, d->function_table[l->lines[0]->function_index]->filename_strindex),
			    "/t/x.py");
	l = d->location_table[st->location_indices[0]];
	assert_int_equal(l->address, 0x1234);
	assert_true(l->mapping_index > 0);
	assert_string_equal(str(r, d->mapping_table[l->mapping_index]->filename_strindex), "burn");
	assert_int_equal(d->mapping_table[l->mapping_index]->n_attribute_indices, 1);
	/* pid 43 has no build id: the same frame is another location, its mapping has none */
	p = r->resource_profiles[1]->scope_profiles[0]->profiles[0];
	st = d->stack_table[p->samples[0]->stack_index];
	l = d->location_table[st->location_indices[0]];
	assert_int_equal(d->mapping_table[l->mapping_index]->n_attribute_indices, 0);
	assert_int_equal(p->samples[0]->n_attribute_indices, 2); /* no CPU */
	ember__otlp__export_profiles_service_request__free_unpacked(r, NULL);
	sbuf_fini(&sb);
	otlp_writer__free(w);
}

/* Inflates a gzip body of ours and decodes it. */
static Req *decode_gz(const struct sbuf *gz)
{
	struct sbuf raw = SBUF_INIT;
	z_stream zs = { 0 };
	Req *r;

	assert_int_equal(inflateInit2(&zs, 15 + 32), Z_OK);
	assert_int_equal(sbuf_grow(&raw, 1 << 20), 0);
	zs.next_in = (uint8_t *)gz->buf;
	zs.avail_in = (uInt)gz->len;
	zs.next_out = (uint8_t *)raw.buf;
	zs.avail_out = 1 << 20;
	assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
	raw.len = zs.total_out;
	inflateEnd(&zs);
	r = decode(&raw);
	sbuf_fini(&raw);
	return r;
}

/* Each sample of @r: its leaf frame is "f<pid>" and its thread attribute in range. Returns the
 * number of distinct strings. */
static size_t check_half(const Req *r)
{
	char want[32];
	size_t i, j;

	for (i = 0; i < r->n_resource_profiles; i++) {
		const Ember__Otlp__ResourceProfiles *rp = r->resource_profiles[i];
		const Ember__Otlp__Profile *p = rp->scope_profiles[0]->profiles[0];

		snprintf(want, sizeof(want), "f%lld",
			 (long long)rp->resource->attributes[0]->value->int_value);
		assert_string_equal(str(r, p->sample_type->type_strindex), "samples");
		for (j = 0; j < p->n_samples; j++) {
			const Ember__Otlp__Stack *st;

			assert_true(p->samples[j]->stack_index > 0 &&
				    (size_t)p->samples[j]->stack_index < r->dictionary->n_stack_table);
			st = r->dictionary->stack_table[p->samples[j]->stack_index];
			assert_string_equal(loc_name(r, st->location_indices[0]), want);
			assert_true((size_t)p->samples[j]->attribute_indices[0] <
				    r->dictionary->n_attribute_table);
		}
	}
	assert_string_equal(r->dictionary->string_table[0], "");
	assert_int_equal(r->dictionary->location_table[0]->n_lines, 0);
	return r->dictionary->n_string_table;
}

static void test_split(void **state)
{
	struct otlp_writer *w = otlp_writer__new(99);
	struct otlp_process a = { .pid = 1, .exe_name = "a" };
	char leaf[32];
	const char *s[] = { "x", leaf };
	struct sbuf sb = SBUF_INIT, h1 = SBUF_INIT, h2 = SBUF_INIT, q1 = SBUF_INIT, q2 = SBUF_INIT;
	size_t nr, ns, nr1, ns1, nr2, ns2;
	uint32_t i;

	(void)state;
	for (i = 0; i < 100; i++) {
		a.pid = 1 + i % 3;
		snprintf(leaf, sizeof(leaf), "f%u", a.pid);
		assert_int_equal(otlp_writer__add(w, &a, 1000 + i, i % 10, "t", i % 2, s, 2), 0);
	}
	assert_int_equal(otlp_writer__finish(w, 0, 0, true, &sb), 0);
	assert_int_equal(otlp_count(sb.buf, sb.len, &nr, &ns), 0);
	assert_int_equal(nr, 3);
	assert_int_equal(ns, 100);
	assert_int_equal(otlp_split(sb.buf, sb.len, &h1, &h2), 0);
	assert_int_equal(otlp_count(h1.buf, h1.len, &nr1, &ns1), 0);
	assert_int_equal(otlp_count(h2.buf, h2.len, &nr2, &ns2), 0);
	assert_int_equal(nr1 + nr2, 3);
	assert_int_equal(ns1 + ns2, 100);
	{ /* each half keeps only its own dictionary entries */
		Req *whole = decode_gz(&sb), *x = decode_gz(&h1), *y = decode_gz(&h2);
		size_t n1 = check_half(x), n2 = check_half(y), n = check_half(whole);

		assert_true(n1 < n && n2 < n);
		ember__otlp__export_profiles_service_request__free_unpacked(whole, NULL);
		ember__otlp__export_profiles_service_request__free_unpacked(x, NULL);
		ember__otlp__export_profiles_service_request__free_unpacked(y, NULL);
	}
	/* one resource: split by Samples */
	assert_int_equal(otlp_split(h1.buf, h1.len, &q1, &q2), 0);
	assert_int_equal(otlp_count(q1.buf, q1.len, &nr1, &ns1), 0);
	assert_int_equal(otlp_count(q2.buf, q2.len, &nr2, &ns2), 0);
	assert_int_equal(nr1, 1);
	assert_int_equal(nr2, 1);
	assert_true(ns1 > 0 && ns2 > 0);
	assert_int_equal(otlp_count("garbage", 7, &nr, &ns), -EINVAL);
	sbuf_fini(&sb);
	sbuf_fini(&h1);
	sbuf_fini(&h2);
	sbuf_fini(&q1);
	sbuf_fini(&q2);
	otlp_writer__free(w);
}

/* Symbolized native frames with a location: a Mapping of their file with its build id, the
 * offset as address; the same name in two files is two locations; no location, no Mapping. */
static void test_frame_locs(void **state)
{
	struct otlp_writer *w = otlp_writer__new(99);
	struct otlp_process proc = { .pid = 7, .exe_name = "app", .service_name = "app" };
	const char *frames[] = { "main", "work", "memcpy", "do_syscall_64_[k]" };
	struct otlp_frame_loc a[] = { { "/bin/app", "aa11", 0x1100 }, { "/bin/app", "aa11", 0x1200 },
				      { "/lib/libc.so.6", "", 0x9900 }, { "/x", "bb", 1 } };
	struct otlp_frame_loc b[] = { { "/bin/app2", "cc22", 0x500 }, { NULL, NULL, 0 },
				      { NULL, NULL, 0 }, { NULL, NULL, 0 } };
	const Ember__Otlp__ProfilesDictionary *d;
	const Ember__Otlp__Location *l;
	const Ember__Otlp__Mapping *m;
	const Ember__Otlp__Stack *st;
	struct sbuf sb = SBUF_INIT;
	uint32_t h;
	Req *r;

	(void)state;
	assert_non_null(w);
	/* first without any: a name's location without a mapping is cached, and must not stay */
	assert_int_equal(otlp_writer__add_locs(w, &proc, 500, 7, "app", 1, frames, NULL, 4, &h), 0);
	assert_int_equal(otlp_writer__add_locs(w, &proc, 1000, 7, "app", 0, frames, a, 4, &h), 0);
	assert_int_equal(otlp_writer__add_locs(w, &proc, 2000, 7, "app", 0, frames, b, 4, &h), 0);
	assert_int_equal(otlp_writer__finish(w, 0, 3000, false, &sb), 0);
	r = decode(&sb);
	d = r->dictionary;
	st = d->stack_table[r->resource_profiles[0]->scope_profiles[0]->profiles[0]->samples[1]
				    ->stack_index];
	assert_int_equal(st->n_location_indices, 4);
	/* leaf first: the kernel frame has no mapping whatever it is given */
	assert_int_equal(d->location_table[st->location_indices[0]]->mapping_index, 0);
	l = d->location_table[st->location_indices[1]]; /* memcpy: libc, no build id */
	assert_string_equal(loc_name(r, st->location_indices[1]), "memcpy");
	assert_int_equal(l->address, 0x9900);
	m = d->mapping_table[l->mapping_index];
	assert_string_equal(str(r, m->filename_strindex), "/lib/libc.so.6");
	assert_int_equal(m->n_attribute_indices, 0);
	l = d->location_table[st->location_indices[3]]; /* main: the executable's, build id */
	assert_int_equal(l->address, 0x1100);
	m = d->mapping_table[l->mapping_index];
	assert_string_equal(str(r, m->filename_strindex), "/bin/app");
	assert_int_equal(m->n_attribute_indices, 1);
	assert_string_equal(
		d->attribute_table[m->attribute_indices[0]]->value->string_value, "aa11");
	assert_int_equal(d->location_table[st->location_indices[2]]->mapping_index,
			 l->mapping_index); /* work: the same file, the same mapping */
	/* the second stack: main of another file, work and memcpy without any */
	st = d->stack_table[r->resource_profiles[0]->scope_profiles[0]->profiles[0]->samples[2]
				    ->stack_index];
	l = d->location_table[st->location_indices[3]];
	assert_int_equal(l->address, 0x500);
	assert_string_equal(str(r, d->mapping_table[l->mapping_index]->filename_strindex),
			    "/bin/app2");
	assert_int_equal(d->location_table[st->location_indices[2]]->mapping_index, 0);
	assert_int_equal(d->location_table[st->location_indices[1]]->mapping_index, 0);
	ember__otlp__export_profiles_service_request__free_unpacked(r, NULL);
	sbuf_fini(&sb);
	otlp_writer__free(w);
}

/* A memory or I/O kind's profiles: their own period type and the quantum as period. */
static void test_set_type(void **state)
{
	struct otlp_writer *w = otlp_writer__new(99);
	struct otlp_process a = { .pid = 42, .exe_name = "memio", .host_name = "h" };
	const char *s[] = { "[page fault]", "main", "fault_a" };
	const Ember__Otlp__Profile *p;
	struct sbuf sb = SBUF_INIT;
	Req *r;
	int i;

	(void)state;
	assert_non_null(w);
	assert_int_equal(otlp_writer__set_type(w, "", "pages", 16), -EINVAL);
	assert_int_equal(otlp_writer__set_type(w, "page_faults", "pages", 0), -EINVAL);
	assert_int_equal(otlp_writer__set_type(w, "page_faults", "pages", 16), 0);
	assert_int_equal(otlp_writer__add(w, &a, 1000, 7, "memio", 0, s, 3), 0);
	/* samples added: too late */
	assert_int_equal(otlp_writer__set_type(w, "malloc", "bytes", 1), -EINVAL);
	/* kept across a finish (the writer starts afresh) */
	for (i = 0; i < 2; i++) {
		sbuf_reset(&sb);
		if (i)
			assert_int_equal(otlp_writer__add(w, &a, 2000, 7, "memio", 0, s, 3), 0);
		assert_int_equal(otlp_writer__finish(w, 500, 3000, false, &sb), 0);
		r = decode(&sb);
		p = r->resource_profiles[0]->scope_profiles[0]->profiles[0];
		assert_int_equal(p->period, 16);
		assert_string_equal(str(r, p->sample_type->type_strindex), "samples");
		assert_string_equal(str(r, p->sample_type->unit_strindex), "count");
		assert_string_equal(str(r, p->period_type->type_strindex), "page_faults");
		assert_string_equal(str(r, p->period_type->unit_strindex), "pages");
		ember__otlp__export_profiles_service_request__free_unpacked(r, NULL);
	}
	sbuf_fini(&sb);
	otlp_writer__free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_shape),
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_frame_locs),
		cmocka_unit_test(test_set_type),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
