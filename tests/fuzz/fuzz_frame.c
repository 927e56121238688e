// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the one rule for bytes outside UTF-8 and the frame model. Any bytes, escaped
 * as a frame name, hold no separator, no control byte and only valid UTF-8, and escaping again
 * changes nothing; the text parses and formats back byte for byte; and as a frame, an
 * executable's name and a thread's name, the bytes raw give pprof and OTLP string tables that
 * are valid UTF-8 (the writers apply the rule themselves).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gen/otlp.pb-c.h"
#include "gen/profile.pb-c.h"
#include "ember/core/base/gzip.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/utf8.h"
#include "ember/core/formats/otlp.h"
#include "ember/core/formats/pprof.h"
#include "ember/core/model/frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok)
{
	if (!ok)
		abort();
}

static void check_pprof(const char *raw, const char *frame)
{
	struct pprof_labels lb = { .pid = 1, .tid = 1, .comm = raw };
	struct pprof_writer *w = pprof_writer__new(NULL);
	struct sbuf gz = SBUF_INIT, plain = SBUF_INIT;
	const char *frames[3] = { raw, frame, raw };
	Ember__Pprof__Profile *pr;
	size_t k;

	if (!w)
		return;
	if (!pprof_writer__add(w, frames, 3, 1, &lb) && !pprof_writer__finish(w, &gz) &&
	    !gzip_inflate(gz.buf, gz.len, 1 << 26, &plain, NULL)) {
		pr = ember__pprof__profile__unpack(NULL, plain.len, (const uint8_t *)plain.buf);
		check(pr != NULL);
		for (k = 0; k < pr->n_string_table; k++)
			check(utf8_valid(pr->string_table[k], strlen(pr->string_table[k])));
		ember__pprof__profile__free_unpacked(pr, NULL);
	}
	sbuf_fini(&gz);
	sbuf_fini(&plain);
	pprof_writer__free(w);
}

static void check_otlp(const char *raw, const char *frame)
{
	const struct otlp_process proc = {
		.pid = 1, .exe_name = raw, .exe_path = raw, .unit = raw, .service_name = raw
	};
	struct otlp_writer *w = otlp_writer__new(99);
	const char *frames[3] = { raw, frame, raw };
	Ember__Otlp__ExportProfilesServiceRequest *r;
	struct sbuf out = SBUF_INIT;
	size_t k;

	if (!w)
		return;
	if (!otlp_writer__add(w, &proc, 1, 1, raw, 0, frames, 3) &&
	    !otlp_writer__finish(w, 0, 2, false, &out)) {
		r = ember__otlp__export_profiles_service_request__unpack(NULL, out.len,
									 (uint8_t *)out.buf);
		check(r != NULL);
		for (k = 0; k < r->dictionary->n_string_table; k++)
			check(utf8_valid(r->dictionary->string_table[k],
					 strlen(r->dictionary->string_table[k])));
		ember__otlp__export_profiles_service_request__free_unpacked(r, NULL);
	}
	sbuf_fini(&out);
	otlp_writer__free(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sbuf esc = SBUF_INIT, again = SBUF_INIT, u8 = SBUF_INIT;
	const char *s = (const char *)data;
	struct frame f;
	char *raw;
	size_t i;

	if (size > 4096)
		return 0;
	/* the UTF-8 rule alone: valid, idempotent, valid input copied as is */
	sbuf_add_utf8(&u8, s, size);
	check(!sbuf_error(&u8) && utf8_valid(u8.buf ? u8.buf : "", u8.len));
	check(sbuf_add_utf8(&again, u8.buf ? u8.buf : "", u8.len) == 0);
	check(utf8_valid(s, size) == (u8.len == size));
	/* a frame name: no separator, no control byte, valid UTF-8, idempotent */
	sbuf_add_frame(&esc, s, size);
	check(!sbuf_error(&esc));
	for (i = 0; i < esc.len; i++)
		check(esc.buf[i] != ';' && (unsigned char)esc.buf[i] >= 0x20 && esc.buf[i] != 0x7f);
	check(utf8_valid(esc.buf ? esc.buf : "", esc.len));
	sbuf_reset(&again);
	check(sbuf_add_frame(&again, esc.buf ? esc.buf : "", esc.len) == 0);
	/* parse and format: the same text */
	frame_parse(esc.buf ? esc.buf : "", esc.len, &f);
	sbuf_reset(&again);
	frame_format(&again, &f);
	check(!sbuf_error(&again) && again.len == esc.len &&
	      (!esc.len || !memcmp(again.buf, esc.buf, esc.len)));
	check(frame_kind_of(esc.buf ? esc.buf : "", esc.len) == f.kind || f.waker);
	/* pprof and OTLP strings: valid UTF-8 whatever they were given */
	raw = malloc(size + 1);
	if (raw) {
		memcpy(raw, data, size);
		raw[size] = '\0';
		check_pprof(raw, esc.buf ? esc.buf : "");
		check_otlp(raw, esc.buf ? esc.buf : "");
		free(raw);
	}
	sbuf_fini(&esc);
	sbuf_fini(&again);
	sbuf_fini(&u8);
	return 0;
}
