// SPDX-License-Identifier: MIT
/*
 * ember collapse's parsers at work over its inputs: one parser for every file in order, or perf
 * input on a pool of threads (collapse_run.h).
 *
 * --jobs N splits perf input into chunks at line boundaries and parses them on N threads, each
 * with its own parser and table; the main thread merges the chunks in input order. A chunk's
 * result is only kept when it is what one sequential parser would have produced: when the
 * previous chunk ended inside a record, or the chunk chose a different default event than the
 * stream before it, the main thread re-parses it in sequence (rare: chunks end at blank lines).
 */
#include "collapse_run.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "ember/core/formats/collapse.h"
#include "ember/core/base/lineread.h"
#include "ember/core/base/log.h"
#include "ember/core/formats/samples_text.h"
#include "ember/core/base/sbuf.h"
#include "cli.h"

#define BATCH_BYTES (64u << 20)	/* mapped input is parsed in windows this big */
#define CHUNK_MIN (1u << 20)
#define MAP_WINDOW (4u << 20)	/* one parser over a mapped file: pages dropped per window */

/* Where one parser's records go: a table, or timestamped lines; skips are kept for in-order
 * reporting when a worker thread produced them. */
struct skip_note {
	unsigned long line;
	const char *reason;
};

struct sink {
	struct collapse_agg *agg;	/* aggregate mode */
	struct sbuf ts;			/* timestamps mode: lines not written yet */
	bool timestamps;
	unsigned long long no_time;	/* timestamps mode: samples without a time */
	/* deferred skip reports (worker threads), relative line numbers */
	struct skip_note notes[CLI_SKIPS_SHOWN_MAX];
	size_t nnotes;
	unsigned long long nskips;
	bool defer;
	const char *name;
	unsigned long line_base;
	struct cli_skips *sk;		/* direct reporting (main thread) */
	struct collapse **parser;	/* to tell bpftrace records (printed as they come) */
};

/* "SECONDS.FRACTION" as perf prints it -> ns, exactly (digits past 9 are dropped). */
static int time_ns(const char *s, size_t n, uint64_t *ret)
{
	uint64_t sec = 0, frac = 0;
	size_t i = 0, d = 0;

	for (; i < n && s[i] != '.'; i++) {
		if (s[i] < '0' || s[i] > '9' || sec > (UINT64_MAX / 1000000000ULL - 10) / 10)
			return -EINVAL;
		sec = sec * 10 + (uint64_t)(s[i] - '0');
	}
	if (i < n)
		i++;
	for (; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		if (d++ < 9)
			frac = frac * 10 + (uint64_t)(s[i] - '0');
	}
	for (; d < 9; d++)
		frac *= 10;
	*ret = sec * 1000000000ULL + frac;
	return 0;
}

static int sink_sample(const struct collapse_sample *s, void *ctx)
{
	struct sink *k = ctx;
	uint64_t t_ns;

	if (!k->timestamps && k->parser && *k->parser &&
	    collapse__format(*k->parser) == COLLAPSE_FORMAT_BPFTRACE) {
		/* stackcollapse-bpftrace.pl prints each record as it comes, without summing */
		sbuf_add(&k->ts, s->stack, s->stack_len);
		sbuf_addc(&k->ts, ' ');
		sbuf_addu(&k->ts, s->count);
		sbuf_addc(&k->ts, '\n');
		return sbuf_error(&k->ts);
	}
	if (!k->timestamps)
		return collapse_agg__add_sample(k->agg, s);
	if (!s->time_len || time_ns(s->time_str, s->time_len, &t_ns)) {
		k->no_time++;
		return 0;
	}
	/* ember-samples counts samples, not perf's period (docs/formats.md) */
	samples_format_line(&k->ts, t_ns, s->stack, s->stack_len, 1);
	return sbuf_error(&k->ts);
}

static void sink_skip(const char *name, const struct parse_error *err, void *ctx)
{
	struct sink *k = ctx;
	struct parse_error e = *err;

	if (!k->defer) {
		e.line += k->line_base;
		cli_report_skip(k->name ? k->name : name, &e, k->sk);
		return;
	}
	if (k->nnotes < CLI_SKIPS_SHOWN_MAX)
		k->notes[k->nnotes++] = (struct skip_note){ .line = err->line, .reason = err->reason };
	k->nskips++;
}

/* Reports a worker's deferred skips with absolute line numbers. */
static void sink_flush_skips(struct sink *k)
{
	size_t i;

	for (i = 0; i < k->nnotes; i++) {
		struct parse_error e = { .line = k->notes[i].line + k->line_base,
					 .reason = k->notes[i].reason };

		cli_report_skip(k->name, &e, k->sk);
	}
	if (k->nskips > k->nnotes)
		k->sk->total += k->nskips - k->nnotes;
	k->nnotes = 0;
	k->nskips = 0;
}

int collapse_write_out(const void *buf, size_t len)
{
	if (len && fwrite(buf, 1, len, stdout) != len)
		return log_errno(-EIO, "writing the output failed");
	return 0;
}

static void add_stats(struct collapse_stats *dst, const struct collapse_stats *s,
		      const struct collapse_stats *already)
{
	dst->lines += s->lines - already->lines;
	dst->samples += s->samples - already->samples;
	dst->skipped += s->skipped - already->skipped;
	dst->long_lines += s->long_lines - already->long_lines;
	dst->filtered += s->filtered - already->filtered;
	dst->incomplete += s->incomplete - already->incomplete;
	dst->no_time += s->no_time - already->no_time;
	dst->weighted += s->weighted - already->weighted;
}

static int set_str(char **dst, const char *s)
{
	char *n = strdup(s);

	if (!n)
		return -ENOMEM;
	free(*dst);
	*dst = n;
	return 0;
}

int collapse_run_init(struct collapse_run *r, const struct collapse_args *args)
{
	*r = (struct collapse_run){ .args = args };
	r->event = strdup(args->opts.event_filter ? args->opts.event_filter : "");
	r->other_event = strdup("");
	r->agg = collapse_agg__new();
	if (!r->event || !r->other_event || !r->agg)
		return log_errno(-ENOMEM, "out of memory");
	return 0;
}

void collapse_run_fini(struct collapse_run *r)
{
	collapse_agg__free(r->agg);
	free(r->event);
	free(r->other_event);
}

/* Input parsed per round of threads. */
static size_t batch_bytes(const struct collapse_args *args)
{
	return args->chunk_bytes ? args->chunk_bytes * args->jobs * 4 : BATCH_BYTES;
}

/* ---- parallel perf parsing ---- */

struct chunk {
	const char *buf;
	size_t len;
	struct collapse *c;		/* the worker's parser */
	struct sink sink;
	unsigned long lines;		/* '\n'-terminated lines (or a last partial one) */
	bool preset;			/* the worker got the stream's event */
	int err;
};

struct pool {
	struct chunk **chunks;
	size_t n;
	size_t next;			/* next chunk to take */
	pthread_mutex_t lock;
	const struct collapse_args *args;
	const char *event;		/* the stream's event when the batch started, or NULL */
	bool event_defaulted;
};

static int feed_mem(struct collapse *c, const char *buf, size_t len, unsigned long base,
		    unsigned long *ret_lines)
{
	const char *p = buf, *end = buf + len, *nl;
	unsigned long lineno = base;
	int err;

	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		if ((size_t)(nl - p) > LINEREAD_DEFAULT_MAX) {
			collapse__feed_long(c, ++lineno); /* as the line reader does */
			p = nl + 1;
			continue;
		}
		err = collapse__feed(c, p, (size_t)(nl - p), ++lineno);
		if (err)
			return err;
		p = nl + 1;
	}
	if (ret_lines)
		*ret_lines = lineno - base;
	return 0;
}

/* Feeds a whole mapped file in windows, dropping each window's pages once parsed. */
static int feed_mapped(struct collapse *c, const char *m, size_t size)
{
	unsigned long lines = 0, n;
	size_t off = 0;
	int err = 0;

	while (off < size && !err) {
		size_t end = off + MAP_WINDOW < size ? off + MAP_WINDOW : size;
		const char *nl;

		if (end < size) {
			nl = memchr(m + end, '\n', size - end);
			end = nl ? (size_t)(nl - m) + 1 : size;
		}
		err = feed_mem(c, m + off, end - off, lines, &n);
		lines += n;
		(void)madvise((char *)m + (off & ~(size_t)4095), end - (off & ~(size_t)4095),
			      MADV_DONTNEED);
		off = end;
	}
	return err;
}

static struct collapse *new_parser(const struct collapse_args *args, const char *event,
				   bool defaulted, struct sink *k)
{
	struct collapse_opts o = args->opts;

	if (event && event[0]) {
		o.event_filter = event;
		o.event_defaulted = defaulted;
	}
	o.format = COLLAPSE_FORMAT_PERF;
	o.on_skip = sink_skip;
	o.on_skip_ctx = k;
	return collapse__new(&o, sink_sample, k);
}

#ifdef MADV_POPULATE_READ
#define EMBER_MADV_POPULATE_READ MADV_POPULATE_READ
#else
#define EMBER_MADV_POPULATE_READ 22 /* <linux/mman.h>, Linux 5.14 */
#endif

static void *worker(void *arg)
{
	struct pool *pl = arg;
	struct chunk *ch;

	for (;;) {
		pthread_mutex_lock(&pl->lock);
		ch = pl->next < pl->n ? pl->chunks[pl->next++] : NULL;
		pthread_mutex_unlock(&pl->lock);
		if (!ch)
			return NULL;
		ch->preset = pl->event != NULL;
		ch->c = new_parser(pl->args, pl->event, pl->event_defaulted, &ch->sink);
		if (!ch->c) {
			ch->err = -ENOMEM;
			continue;
		}
		/* map the chunk's pages in one call rather than a fault per few pages (two threads
		 * faulting on one mapping contend; Linux >= 5.14, harmless where unknown) */
		if (ch->len >= (1u << 20)) {
			uintptr_t lo = (uintptr_t)ch->buf & ~(uintptr_t)4095;

			(void)madvise((void *)lo, (uintptr_t)ch->buf + ch->len - lo,
				      EMBER_MADV_POPULATE_READ);
		}
		ch->err = feed_mem(ch->c, ch->buf, ch->len, 0, &ch->lines);
	}
}

static int sink_init(struct sink *k, const struct collapse_args *args, struct collapse_run *r,
		     const char *name)
{
	*k = (struct sink){ .timestamps = args->timestamps, .defer = true, .name = name,
			    .sk = &r->sk };
	if (!args->timestamps) {
		k->agg = collapse_agg__new();
		if (!k->agg)
			return -ENOMEM;
	}
	return 0;
}

static void sink_fini(struct sink *k)
{
	collapse_agg__free(k->agg);
	sbuf_fini(&k->ts);
}

/* Moves a sink's results into the run (and stdout). */
static int sink_drain(struct sink *k, struct collapse_run *r)
{
	int err = 0;

	sink_flush_skips(k);
	if (k->agg) {
		err = collapse_agg__merge(r->agg, k->agg);
		collapse_agg__free(k->agg);
		k->agg = collapse_agg__new();
		if (err || !k->agg)
			return log_errno(-ENOMEM, "out of memory");
	} else {
		if (sbuf_error(&k->ts))
			return log_errno(-ENOMEM, "out of memory");
		err = collapse_write_out(k->ts.buf, k->ts.len);
		sbuf_reset(&k->ts);
	}
	r->no_time += k->no_time;
	k->no_time = 0;
	return err;
}

/*
 * State carried between chunks: the parser that read the last merged chunk (its own chunk's
 * sink), when it ended inside a record.
 */
struct carry {
	struct collapse *c;
	struct sink *sink;
	struct collapse_stats taken;
	struct chunk *owner;	/* whose parser and sink these are */
};

static void chunk_free(struct chunk *ch);

static void note_parser(struct collapse_run *r, struct collapse *c)
{
	if (!r->event[0] && collapse__event(c)[0]) {
		if (!set_str(&r->event, collapse__event(c)))
			r->event_defaulted = collapse__event_defaulted(c);
	}
	if (!r->other_event[0] && collapse__other_event(c)[0])
		(void)set_str(&r->other_event, collapse__other_event(c));
}

/* Merges chunk @ch in order; @line_base is its first line's number minus one. */
static int merge_chunk(struct collapse_run *r, struct chunk *ch, struct carry *cy, unsigned long line_base,
		       const struct collapse_args *args)
{
	struct collapse_stats zero = { 0 };
	int err;

	if (ch->err)
		return log_errno(ch->err, "parsing failed");
	if (cy->c && !collapse__clean(cy->c)) {
		/* the previous chunk ended inside a record: continue it with this chunk */
		if (collapse__set_event(cy->c, r->event, r->event_defaulted))
			return log_errno(-ENOMEM, "out of memory");
		cy->sink->defer = false;
		cy->sink->line_base = line_base;
		cy->sink->name = ch->sink.name;
		err = feed_mem(cy->c, ch->buf, ch->len, 0, NULL);
		if (!err)
			err = sink_drain(cy->sink, r);
		if (err)
			return err;
		add_stats(&r->stats, collapse__stats(cy->c), &cy->taken);
		cy->taken = *collapse__stats(cy->c);
		note_parser(r, cy->c);
		return 0;
	}
	if (!ch->preset && r->event[0] && collapse__event(ch->c)[0] &&
	    strcmp(r->event, collapse__event(ch->c))) {
		/* the chunk picked its own first event; the stream had chosen another */
		collapse__free(ch->c);
		sink_fini(&ch->sink);
		err = sink_init(&ch->sink, args, r, ch->sink.name);
		ch->c = err ? NULL : new_parser(args, r->event, r->event_defaulted, &ch->sink);
		if (!ch->c)
			return log_errno(-ENOMEM, "out of memory");
		ch->sink.defer = false;
		ch->sink.line_base = line_base;
		err = feed_mem(ch->c, ch->buf, ch->len, 0, NULL);
		if (err)
			return log_errno(err, "parsing failed");
	}
	ch->sink.line_base = line_base;
	err = sink_drain(&ch->sink, r);
	if (err)
		return err;
	add_stats(&r->stats, collapse__stats(ch->c), &zero);
	note_parser(r, ch->c);
	if (cy->owner && !cy->owner->buf)
		chunk_free(cy->owner); /* kept from an earlier batch, no longer needed */
	cy->c = ch->c;
	cy->sink = &ch->sink;
	cy->taken = *collapse__stats(ch->c);
	cy->owner = ch;
	return 0;
}

/* Cuts @buf into at most @n chunks ending at '\n' (the last one may end anywhere). */
static size_t cut_chunks(const char *buf, size_t len, size_t n, size_t min, struct chunk **out)
{
	size_t want = len / n + 1, off = 0, k = 0;

	if (want < min)
		want = min;
	while (off < len && k < n) {
		size_t end = off + want < len && k + 1 < n ? off + want : len;
		const char *nl;

		if (end < len) {
			/* prefer a record boundary (a blank line) shortly after the cut */
			size_t look = len - end > min ? min : len - end;
			const char *bl = memmem(buf + end, look, "\n\n", 2);

			if (bl) {
				end = (size_t)(bl - buf) + 2;
			} else {
				nl = memchr(buf + end, '\n', len - end);
				end = nl ? (size_t)(nl - buf) + 1 : len;
			}
		}
		*out[k++] = (struct chunk){ .buf = buf + off, .len = end - off };
		off = end;
	}
	return k;
}

static void chunk_free(struct chunk *ch)
{
	if (!ch)
		return;
	collapse__free(ch->c);
	sink_fini(&ch->sink);
	free(ch);
}

/* One in-memory batch being parsed by a round of threads. */
struct batch {
	struct chunk **chunks;
	size_t nmax, n;
	pthread_t th[COLLAPSE_MAX_JOBS];
	size_t nth;
	struct pool pl;
	int err;
};

static void batch_free(struct batch *b, struct carry *cy)
{
	size_t i;

	for (i = 0; b->chunks && i < b->nmax; i++) {
		if (b->chunks[i] && cy->owner == b->chunks[i]) {
			/* the carry's parser outlives its batch; its buffer does not */
			b->chunks[i]->buf = NULL;
			continue;
		}
		chunk_free(b->chunks[i]);
	}
	free(b->chunks);
	free(b);
}

/*
 * Starts parsing @buf of @name in parallel (threads running when it returns); NULL + logged
 * error. The stream's event is the one known now: a chunk that picks another is parsed again
 * when merged.
 */
static struct batch *batch_start(struct collapse_run *r, const char *name, const char *buf, size_t len,
				 struct carry *cy)
{
	const struct collapse_args *args = r->args;
	struct batch *b = calloc(1, sizeof(*b));
	size_t i;
	int err;

	if (!b) {
		log_errno(-ENOMEM, "out of memory");
		return NULL;
	}
	b->nmax = args->jobs * 4;
	b->chunks = calloc(b->nmax, sizeof(*b->chunks));
	if (!b->chunks)
		goto enomem;
	for (i = 0; i < b->nmax; i++) {
		b->chunks[i] = calloc(1, sizeof(**b->chunks));
		if (!b->chunks[i])
			goto enomem;
	}
	b->n = cut_chunks(buf, len, b->nmax, args->chunk_bytes ? args->chunk_bytes : CHUNK_MIN,
			  b->chunks);
	for (i = 0; i < b->n; i++) {
		err = sink_init(&b->chunks[i]->sink, args, r, name);
		if (err)
			goto enomem;
	}
	b->pl = (struct pool){ .args = args, .chunks = b->chunks, .n = b->n,
			       .event = r->event[0] ? r->event : NULL,
			       .event_defaulted = r->event_defaulted };
	pthread_mutex_init(&b->pl.lock, NULL);
	for (i = 0; i < args->jobs && i < b->n; i++)
		if (!pthread_create(&b->th[b->nth], NULL, worker, &b->pl))
			b->nth++;
	if (!b->nth)
		worker(&b->pl); /* no thread could start: do it here */
	return b;

enomem:
	log_errno(-ENOMEM, "out of memory");
	batch_free(b, cy);
	return NULL;
}

/*
 * Waits for @b's threads, merges its chunks in order (the carry persists) unless @skip (an
 * earlier error: only wait and drop), and frees it.
 */
static int batch_finish(struct collapse_run *r, struct batch *b, struct carry *cy, unsigned long *line_base,
			bool skip)
{
	size_t i;
	int err = 0;

	for (i = 0; i < b->nth; i++)
		pthread_join(b->th[i], NULL);
	pthread_mutex_destroy(&b->pl.lock);
	for (i = 0; i < b->n && !err && !skip; i++) {
		err = merge_chunk(r, b->chunks[i], cy, *line_base, r->args);
		*line_base += b->chunks[i]->lines;
	}
	batch_free(b, cy);
	return err;
}

/* Parses one in-memory batch of @name in parallel and merges it; the carry persists. */
static int run_batch(struct collapse_run *r, const char *name, const char *buf, size_t len,
		     struct carry *cy, unsigned long *line_base)
{
	struct batch *b = batch_start(r, name, buf, len, cy);

	return b ? batch_finish(r, b, cy, line_base, false) : -ENOMEM;
}

/* Reports a line over the bound met while cutting read batches. */
static void long_line(struct collapse_run *r, const char *name, unsigned long lineno)
{
	struct parse_error e = { .line = lineno, .reason = "line too long" };

	r->stats.lines++;
	r->stats.long_lines++;
	cli_report_skip(name, &e, &r->sk);
}

/*
 * Maps @path when it is a regular, non-empty, uncompressed file: the mapping (munmap it), or
 * NULL with *ret_err 0 (read it as a stream instead) or an error (logged).
 */
static char *map_plain_file(const char *path, size_t *ret_size, int *ret_err)
{
	unsigned char magic[2];
	struct stat st;
	char *m = NULL;
	int fd;

	*ret_err = 0;
	if (!path || !strcmp(path, "-"))
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*ret_err = log_errno(-errno, "cannot open '%s'", path);
		return NULL;
	}
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size > 2 &&
	    pread(fd, magic, 2, 0) == 2 && !(magic[0] == 0x1f && magic[1] == 0x8b)) {
		m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED) {
			m = NULL;
		} else {
			(void)madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
			*ret_size = (size_t)st.st_size;
		}
	}
	close(fd);
	return m;
}

static int run_parallel_file(struct collapse_run *r, const char *path, struct carry *cy)
{
	struct cli_input in;
	unsigned long line_base = 0;
	char *buf = NULL, *m;
	size_t cap = LINEREAD_DEFAULT_MAX + 2, have = 0; /* lines up to the reader's bound fit */
	size_t size = 0;
	bool skipping = false;
	int err = 0;

	/* a plain regular file is mapped and parsed in windows; anything else is read */
	m = map_plain_file(path, &size, &err);
	if (err)
		return err;
	if (m) {
		/*
		 * Pipelined: the threads parse batch k+1 while this thread merges batch k (the
		 * merge is serial; without the overlap it left the other cores idle for about
		 * half the run).
		 */
		struct batch *prev = NULL;
		size_t off = 0, prev_off = 0, prev_end = 0;

		while (off < size && !err) {
			size_t bb = batch_bytes(r->args);
			size_t end = off + bb < size ? off + bb : size;
			struct batch *cur;
			const char *nl;

			if (end < size) {
				nl = memchr(m + end, '\n', size - end);
				end = nl ? (size_t)(nl - m) + 1 : size;
			}
			cur = batch_start(r, path, m + off, end - off, cy);
			if (!cur)
				err = -ENOMEM;
			if (prev) {
				int e = batch_finish(r, prev, cy, &line_base, false);

				err = err ? err : e;
				/* done with these pages: keep the resident set small */
				(void)madvise(m + (prev_off & ~(size_t)4095),
					      prev_end - (prev_off & ~(size_t)4095), MADV_DONTNEED);
			}
			prev = cur;
			prev_off = off;
			prev_end = end;
			off = end;
		}
		if (prev) {
			int e = batch_finish(r, prev, cy, &line_base, err != 0);

			err = err ? err : e;
		}
		munmap(m, size);
		return err;
	}
	err = cli_input_open(&in, path);
	if (err)
		return err;
	buf = malloc(cap);
	if (!buf) {
		cli_input_close(&in);
		return log_errno(-ENOMEM, "out of memory");
	}
	for (;;) {
		int n = gzread(in.gz, buf + have, (unsigned int)(cap - have));
		size_t cut;
		const char *nl;

		if (n < 0) {
			int errnum;
			const char *msg = gzerror(in.gz, &errnum);

			err = -EIO;
			log_error("'%s': %s", in.name, msg);
			break;
		}
		have += (size_t)n;
		if (skipping) {
			/* inside a line longer than the buffer: drop it up to its end */
			nl = memchr(buf, '\n', have);
			if (!nl && n > 0) {
				have = 0;
				continue;
			}
			cut = nl ? (size_t)(nl - buf) + 1 : have;
			memmove(buf, buf + cut, have - cut);
			have -= cut;
			skipping = false;
			long_line(r, in.name, ++line_base);
			if (n > 0)
				continue;
		}
		if (n > 0 && have < cap)
			continue;
		/* a full buffer: parse up to its last line end; at the end: everything */
		if (n == 0) {
			cut = have;
		} else {
			nl = memrchr(buf, '\n', have);
			cut = nl ? (size_t)(nl - buf) + 1 : 0;
			if (!cut) {
				skipping = true;
				have = 0;
				continue;
			}
		}
		if (cut) {
			err = run_batch(r, in.name, buf, cut, cy, &line_base);
			if (err)
				break;
		}
		memmove(buf, buf + cut, have - cut);
		have -= cut;
		if (n == 0)
			break;
	}
	if (!err) {
		int errnum = Z_OK;

		(void)gzerror(in.gz, &errnum);
		if (errnum == Z_BUF_ERROR)
			log_warn("%s: truncated gzip input; what was there is used", in.name);
	}
	free(buf);
	cli_input_close(&in);
	return err;
}

int collapse_run_parallel(struct collapse_run *r, char **files, int nfiles)
{
	struct carry cy = { 0 };
	int i, err = 0;

	for (i = 0; i < (nfiles ? nfiles : 1) && !err; i++)
		err = run_parallel_file(r, nfiles ? files[i] : "-", &cy);
	if (!err && cy.c && !collapse__clean(cy.c)) {
		(void)collapse__finish(cy.c);
		add_stats(&r->stats, collapse__stats(cy.c), &cy.taken);
	}
	r->fmt = COLLAPSE_FORMAT_PERF;
	chunk_free(cy.owner);
	return err;
}

/* ---- sequential parsing (every format) ---- */

/* Writes timestamped (or bpftrace) lines out as they come in the sequential path. */
static int ts_stream_cb(const struct collapse_sample *s, void *ctx)
{
	struct sink *k = ctx;
	int err = sink_sample(s, ctx);

	if (!err && k->ts.len >= (1u << 20)) {
		err = collapse_write_out(k->ts.buf, k->ts.len);
		sbuf_reset(&k->ts);
	}
	return err;
}

static int run_sequential(struct collapse_run *r, char **files, int nfiles, struct collapse **ret_c,
			  struct sink *k)
{
	const struct collapse_args *args = r->args;
	struct collapse_opts o = args->opts;
	struct collapse *c;
	struct cli_input in;
	int i, err = 0;

	o.on_skip = sink_skip;
	o.on_skip_ctx = k;
	c = collapse__new(&o, ts_stream_cb, k);
	if (!c)
		return log_errno(-errno, "cannot create the parser");
	*ret_c = c;
	k->parser = ret_c;
	for (i = 0; i < (nfiles ? nfiles : 1) && !err; i++) {
		size_t size;
		char *m = map_plain_file(nfiles ? files[i] : "-", &size, &err);

		if (err)
			return err;
		if (m) {
			/* a plain file is parsed in place: no copy through a read buffer */
			k->name = files[i];
			collapse__set_name(c, files[i]);
			err = feed_mapped(c, m, size);
			munmap(m, size);
			if (err == -EINVAL && collapse__format(c) == COLLAPSE_FORMAT_AUTO)
				log_error("%s: cannot tell the input format from its first lines; "
					  "name it: ember collapse perf|dtrace|bpftrace", files[i]);
			else if (err)
				log_errno(err, "parsing '%s' failed", files[i]);
			continue;
		}
		err = cli_input_open(&in, nfiles ? files[i] : "-");
		if (err)
			return err;
		k->name = in.name;
		err = collapse__read(c, in.lr, in.name);
		if (!err) {
			int errnum = Z_OK;

			(void)gzerror(in.gz, &errnum);
			if (errnum == Z_BUF_ERROR)
				log_warn("%s: truncated gzip input; what was there is used", in.name);
		}
		if (err == -EINVAL && collapse__format(c) == COLLAPSE_FORMAT_AUTO)
			log_error("%s: cannot tell the input format from its first lines; name it: "
				  "ember collapse perf|dtrace|bpftrace", in.name);
		else if (err)
			log_errno(err, "reading '%s' failed", in.name);
		cli_input_close(&in);
	}
	if (!err) {
		err = collapse__finish(c);
		if (err == -EINVAL)
			log_error("%s: cannot tell the input format (perf script, DTrace or bpftrace "
				  "output?); name it: ember collapse perf|dtrace|bpftrace",
				  nfiles ? files[nfiles - 1] : "<stdin>");
		else if (err)
			log_errno(err, "parsing failed");
	}
	return err;
}

int collapse_run_sequential(struct collapse_run *r, char **files, int nfiles)
{
	struct sink k = { .timestamps = r->args->timestamps, .agg = r->agg, .sk = &r->sk };
	struct collapse *c = NULL;
	int err;

	err = run_sequential(r, files, nfiles, &c, &k);
	if (c) {
		r->stats = *collapse__stats(c);
		r->fmt = collapse__format(c);
		if (collapse__event(c)[0] && !set_str(&r->event, collapse__event(c)))
			r->event_defaulted = collapse__event_defaulted(c);
		(void)set_str(&r->other_event, collapse__other_event(c));
		r->no_time = k.no_time;
	}
	if (!err) {
		err = collapse_write_out(k.ts.buf, k.ts.len);
		sbuf_reset(&k.ts);
	}
	sbuf_fini(&k.ts);
	collapse__free(c);
	return err;
}
