// SPDX-License-Identifier: MIT
/* ember heatmap: reading ember-samples or `perf script` text; the range's flame graph. */
#include "heatmap_input.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ember/core/formats/collapse.h"
#include "ember/core/render/flamegraph.h"
#include "ember/core/base/lineread.h"
#include "ember/core/base/log.h"
#include "ember/core/base/parse.h"
#include "ember/core/model/samples.h"
#include "ember/core/formats/samples_text.h"
#include "ember/core/base/sbuf.h"

/* Lines held while auto-detecting: comments and blank lines before the first record. */
#define DETECT_MAX_LINES 10000
#define DETECT_MAX_BYTES (4u << 20)

int heatmap_input_format_parse(const char *s, enum heatmap_input_format *ret)
{
	if (!strcmp(s, "auto"))
		*ret = HEATMAP_INPUT_AUTO;
	else if (!strcmp(s, "samples"))
		*ret = HEATMAP_INPUT_SAMPLES;
	else if (!strcmp(s, "perf"))
		*ret = HEATMAP_INPUT_PERF;
	else
		return -EINVAL;
	return 0;
}

static bool is_blank(const char *line, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
			return false;
	return true;
}

/*
 * Reads lines into @held until one tells the format (or the bound is hit). Returns the format,
 * with the deciding line appended to @held, or a negative errno (logged).
 */
static int detect(struct cli_input *in, struct sbuf *held, enum heatmap_input_format *ret)
{
	const char *line;
	size_t len;
	unsigned long n = 0;
	int r;

	for (;;) {
		r = lineread__next(in->lr, &line, &len);
		if (r == 0) {
			*ret = HEATMAP_INPUT_SAMPLES; /* nothing but comments: an empty sample set */
			return 0;
		}
		if (r == -E2BIG) {
			sbuf_adds(held, "\n"); /* keeps line numbers; the readers see a blank line */
			log_warn("%s:%lu: line too long, skipping", in->name,
				 lineread__lineno(in->lr));
			continue;
		}
		if (r < 0)
			return log_errno(r, "reading '%s' failed", in->name);
		sbuf_add(held, line, len);
		sbuf_addc(held, '\n');
		if (sbuf_error(held))
			return log_errno(-ENOMEM, "reading '%s' failed", in->name);
		if (len >= 15 && !memcmp(line, "# ember-samples", 15)) {
			*ret = HEATMAP_INPUT_SAMPLES;
			return 0;
		}
		if (is_blank(line, len) || line[0] == '#') {
			if (++n < DETECT_MAX_LINES && held->len < DETECT_MAX_BYTES)
				continue;
			*ret = HEATMAP_INPUT_PERF;
			return 0;
		}
		*ret = samples_detect(line, len) ? HEATMAP_INPUT_SAMPLES : HEATMAP_INPUT_PERF;
		return 0;
	}
}

static int read_samples(struct cli_input *in, struct lineread *head, struct samples *s,
			const struct heatmap_input_opts *o)
{
	struct cli_skips sk = { 0 };
	struct parse_error perr = { 0 };
	struct samples_read_opts ro = {
		.strict = o->strict,
		.on_skip = cli_report_skip,
		.on_skip_ctx = &sk,
		.name = in->name,
	};
	struct samples_read_stats stats = { 0 };
	int err = 0;

	if (head)
		err = samples_read(head, s, &ro, &stats, &perr);
	if (!err)
		err = samples_read(in->lr, s, &ro, &stats, &perr);
	if (err == -EINVAL)
		log_error("%s:%lu:%u: %s", in->name, perr.line, perr.col, perr.reason);
	else if (err)
		log_errno(err, "reading '%s' failed", in->name);
	cli_report_skip_total(in->name, &sk);
	return err;
}

struct perf_ctx {
	struct samples *s;
	unsigned long long no_time, bad_time;
};

static int on_perf_sample(const struct collapse_sample *cs, void *ctx)
{
	struct perf_ctx *pc = ctx;
	uint64_t ns;
	int id;

	if (!cs->time_len) {
		pc->no_time++;
		return 0;
	}
	/* from the text, to the nanosecond (a double of the seconds is not exact) */
	if (parse_time_ns(cs->time_str, cs->time_len, &ns)) {
		pc->bad_time++;
		return 0;
	}
	id = samples__intern_folded(pc->s, cs->stack, cs->stack_len);
	if (id < 0)
		return id;
	/* the heat map counts samples (events), not perf's period */
	return samples__add(pc->s, ns, (uint32_t)id, 1);
}

static int read_perf(struct cli_input *in, struct lineread *head, struct samples *s,
		     const struct heatmap_input_opts *o)
{
	struct cli_skips sk = { 0 };
	struct perf_ctx pc = { .s = s };
	struct collapse_opts co = {
		.format = COLLAPSE_FORMAT_PERF,
		.pid = o->pid && !o->tid,
		.tid = o->tid,
		.on_skip = cli_report_skip,
		.on_skip_ctx = &sk,
	};
	const struct collapse_stats *cst;
	struct collapse *c;
	int err;

	c = collapse__new(&co, on_perf_sample, &pc);
	if (!c)
		return log_errno(-errno, "cannot create the perf script parser");
	collapse__set_name(c, in->name);
	err = head ? collapse__read(c, head, in->name) : 0;
	if (!err)
		err = collapse__read(c, in->lr, in->name);
	if (!err)
		err = collapse__finish(c);
	cst = collapse__stats(c);
	if (err == -EINVAL)
		log_error("'%s': not recognized as perf script output", in->name);
	else if (err)
		log_errno(err, "reading '%s' failed", in->name);
	cli_report_skip_total(in->name, &sk);
	if (!err && o->strict && cst->skipped) {
		log_error("'%s': malformed lines (--strict)", in->name);
		err = -EINVAL;
	}
	if (cst->filtered)
		log_info("'%s': %llu records of other events than '%s' left out", in->name,
			 cst->filtered, collapse__event(c));
	if (cst->incomplete)
		log_warn("'%s': %llu record%s cut off by the end of input, skipped", in->name,
			 cst->incomplete, cst->incomplete == 1 ? "" : "s");
	if (pc.no_time)
		log_warn("'%s': %llu record%s without a time (perf script -F ...,time), skipped",
			 in->name, pc.no_time, pc.no_time == 1 ? "" : "s");
	if (pc.bad_time)
		log_warn("'%s': %llu record%s with an out-of-range time, skipped", in->name,
			 pc.bad_time, pc.bad_time == 1 ? "" : "s");
	collapse__free(c);
	if (!err) {
		err = samples__sort(s);
		if (err)
			log_errno(err, "sorting the samples failed");
	}
	return err;
}

int heatmap_input_read(const char *path, struct samples *s, const struct heatmap_input_opts *o)
{
	enum heatmap_input_format fmt = o->format;
	struct sbuf held = SBUF_INIT;
	struct lineread *head = NULL;
	struct cli_input in;
	int err;

	err = cli_input_open(&in, path);
	if (err)
		return err;
	if (fmt == HEATMAP_INPUT_AUTO) {
		err = detect(&in, &held, &fmt);
		if (err)
			goto out;
		head = lineread__new_mem(held.buf ? held.buf : "", held.len, 0);
		if (!head) {
			err = log_errno(-ENOMEM, "reading '%s' failed", in.name);
			goto out;
		}
	}
	if (fmt == HEATMAP_INPUT_SAMPLES)
		err = read_samples(&in, head, s, o);
	else
		err = read_perf(&in, head, s, o);
out:
	lineread__free(head);
	sbuf_fini(&held);
	cli_input_close(&in);
	return err;
}

int heatmap_render_flamegraph(const struct profile *p, const struct heatmap_fg_opt *kv, size_t n,
			      struct sbuf *out)
{
	struct flamegraph_opts fo;
	size_t i;
	int err = 0;

	flamegraph_opts_init(&fo);
	for (i = 0; i < n && !err; i++) {
		err = flamegraph_opts_set(&fo, kv[i].key, kv[i].value);
		if (err == -EINVAL)
			log_error("bad flame graph option --%s%s%s", kv[i].key,
				  kv[i].value ? " " : "", kv[i].value ? kv[i].value : "");
		else if (err)
			log_errno(err, "flame graph option --%s", kv[i].key);
	}
	if (!err) {
		err = flamegraph_render(p, &fo, out);
		if (err == -ENODATA)
			err = 0; /* flamegraph.pl's "No valid input" SVG, already warned about */
		else if (err)
			log_errno(err, "rendering the flame graph failed");
	}
	flamegraph_opts_fini(&fo);
	return err;
}
