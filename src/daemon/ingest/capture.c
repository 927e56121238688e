// SPDX-License-Identifier: MIT
/* capture: second samplers for ad hoc captures (see include/ember/daemon/ingest/capture.h). */
#include "ember/daemon/ingest/capture.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ember/daemon/service/config.h"
#include "ember/core/base/log.h"
#include "ember/core/model/recording.h"
#include "ember/daemon/sample/sampler.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"
#include "ember/daemon/ingest/ingest.h"
#include "ember/daemon/unwind/runtime.h"
#include "ember/daemon/symbols/symbolizer.h"
#include "ember/daemon/unwind/unwind.h"
#include "ember/core/base/clock.h"

#define NSEC 1000000000LL

enum cap_state { CAP_RUNNING, CAP_DONE, CAP_FAILED };

struct cap_ent {
	int handle;
	enum cap_state state;
	struct sampler *s;	/* owned while running */
	struct recording *rec;	/* owned until taken */
	int64_t start_ns, end_ns; /* Unix time: samples outside are not kept */
	bool truncated;		/* the memory cap was reached */
	char err[96];
	struct cap_ent *next;
};

struct capture_mgr {
	const struct ember_config *cfg;
	struct ingest *in; /* the daemon's: names the stacks, applies [filter] */
	struct symbolizer *sym;
	const struct sampler *live;	/* the daemon's: its unwind tables serve the captures too */
	pthread_mutex_t lock;	/* guards the list; held by the tick while draining */
	struct cap_ent *list;
	int next_handle;

	/* drain scratch (main thread, under lock) */
	struct cap_ent *cur;
	int64_t real_off_ns;	/* CLOCK_REALTIME - CLOCK_MONOTONIC for this drain */
	struct sbuf stack;
};

static void ent_free(struct cap_ent *e)
{
	if (!e)
		return;
	sampler__free(e->s);
	recording__free(e->rec);
	free(e);
}

/* The ingest's sink: the stack as folded text, root first (comm, user frames, kernel frames, as
 * the store's), one recording sample per sample in the capture's window. */
static int put_stack(const struct ingest_stack *st, void *ctx)
{
	struct capture_mgr *m = ctx;
	struct cap_ent *e = m->cur;
	const struct strtab *names = ingest__names(m->in);
	const struct sampler_group *g = st->g;
	size_t i, total = g->nr_times + g->untimed;
	int64_t now_real = (int64_t)real_ns(), t;
	size_t comm_len;
	char comm[64]; /* the comm as the stack's root frame has it (tidied) */
	int r;

	sbuf_reset(&m->stack);
	if (g->comm[0])
		sbuf_add_frame(&m->stack, g->comm, strnlen(g->comm, sizeof(g->comm)));
	else
		sbuf_adds(&m->stack, "[unknown]");
	comm_len = g->comm[0] ? m->stack.len : 0;
	for (i = 0; i < st->nr_frames; i++) {
		sbuf_addc(&m->stack, ';');
		sbuf_add(&m->stack, strtab__str(names, st->frames[i]),
			 strtab__len(names, st->frames[i]));
	}
	if (sbuf_error(&m->stack))
		return -ENOMEM;
	snprintf(comm, sizeof(comm), "%.*s", (int)comm_len, m->stack.buf);
	for (i = 0; i < total; i++) {
		t = i < g->nr_times ? (int64_t)g->times_ns[i] + m->real_off_ns : now_real;
		if (t < e->start_ns || t >= e->end_ns)
			continue; /* the tick stops the sampler a little after the window */
		r = recording__add(e->rec, t, (int32_t)g->pid, (int32_t)g->tid, comm,
				   m->stack.buf, m->stack.len, 1);
		if (r == -E2BIG) {
			e->truncated = true;
			return 0;
		}
		if (r < 0)
			return r;
	}
	return 0;
}

static int on_group(const struct sampler_group *g, void *ctx)
{
	struct capture_mgr *m = ctx;

	if (m->cur->truncated)
		return 0; /* full: the rest is counted by the sampler as delivered, not kept */
	/* the same naming, markers and [filter] as the live store's (counted in filtered) */
	return ingest__group(m->in, g, put_stack, m);
}

/* A sampled process seen for the first time: capture its mappings (as the live sampler does). */
static void on_new_pid(uint32_t pid, bool exec_follows, const uint64_t *ips, size_t n, void *ctx)
{
	struct capture_mgr *m = ctx;

	if (exec_follows) { /* the image before the exec: as emberd_on_new_pid() */
		symbolizer__note_pid_before_exec(m->sym, pid);
		return;
	}
	symbolizer__note_pid(m->sym, pid);
	unwinder__note_pid(ingest__unwinder(m->in), pid); /* the tables its walk reads */
	unwinder__reached(ingest__unwinder(m->in), pid, ips, n, 0);
	runtime_set_noted(ingest__runtimes(m->in), pid); /* e.g. a CPython's map entry */
}

static void ent_fail(struct cap_ent *e, int err, const char *what)
{
	snprintf(e->err, sizeof(e->err), "%s: %s", what, strerror(-err));
	e->state = CAP_FAILED;
	sampler__free(e->s);
	e->s = NULL;
	recording__free(e->rec);
	e->rec = NULL;
	log_warn("capture sampler %d %s", e->handle, e->err);
}

static int drain(struct capture_mgr *m, struct cap_ent *e)
{
	m->cur = e;
	m->real_off_ns = real_minus_mono_ns();
	return sampler__drain(e->s, on_group, m);
}

void capture_mgr__tick(struct capture_mgr *m)
{
	struct cap_ent *e;
	int r;

	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	for (e = m->list; e; e = e->next) {
		if (e->state != CAP_RUNNING)
			continue;
		r = drain(m, e);
		if (r < 0) {
			ent_fail(e, r, "drain failed");
			continue;
		}
		if ((int64_t)clock_ns(CLOCK_REALTIME) < e->end_ns)
			continue;
		/* time is up: no more samples, then both generations */
		sampler__stop(e->s);
		r = drain(m, e);
		if (r >= 0)
			r = drain(m, e);
		if (r >= 0)
			r = recording__freeze(e->rec);
		if (r < 0) {
			ent_fail(e, r, "final drain failed");
			continue;
		}
		sampler__free(e->s);
		e->s = NULL;
		e->state = CAP_DONE;
		log_info("capture sampler %d done: %zu samples%s", e->handle,
			 recording__nr_samples(e->rec), e->truncated ? " (memory cap reached)" : "");
	}
	m->cur = NULL;
	pthread_mutex_unlock(&m->lock);
}

int capture_mgr__start(struct capture_mgr *m, uint64_t frequency_hz, int64_t pid,
		       int64_t duration_ns, size_t max_bytes, uint64_t *ret_frequency_hz,
		       int64_t *ret_start_ns)
{
	const struct ember_config *cfg = m->cfg;
	uint64_t max_hz = cfg->frequency_hz > CAPTURE_MAX_HZ ? cfg->frequency_hz : CAPTURE_MAX_HZ;
	struct sampler_opts so = {
		.freq_hz = frequency_hz ? frequency_hz : cfg->frequency_hz,
		.include_idle = pid < 0 && cfg->include_idle,
		.idle_stacks = cfg->idle_stacks,
		.pid = pid > 0 ? (uint32_t)pid : 0,
		.hardware_event = cfg->hardware_event,
		.tick_ms = (uint32_t)cfg->tick_ms,
		.ringbuf_bytes = (uint32_t)cfg->ringbuf_bytes,
		.unwind_from = m->live,
	};
	struct cap_ent *e, *x;
	unsigned int running = 0;
	char err[256];
	int r;

	if (so.freq_hz > max_hz)
		so.freq_hz = max_hz;
	pthread_mutex_lock(&m->lock);
	for (x = m->list; x; x = x->next)
		running += x->state == CAP_RUNNING;
	pthread_mutex_unlock(&m->lock);
	if (running >= CAPTURE_MAX_SAMPLERS)
		return -EBUSY;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->rec = recording__new(max_bytes);
	if (!e->rec) {
		free(e);
		return -ENOMEM;
	}
	/* loaded and attached outside the lock: the tick goes on meanwhile */
	r = sampler__new(&so, &e->s, err, sizeof(err));
	if (r) {
		log_warn("capture sampler (%llu Hz, pid %lld): %s", (unsigned long long)so.freq_hz,
			 (long long)pid, err);
		ent_free(e);
		return r;
	}
	sampler__set_pid_fn(e->s, on_new_pid, m);
	e->state = CAP_RUNNING;
	e->start_ns = (int64_t)clock_ns(CLOCK_REALTIME);
	e->end_ns = e->start_ns + duration_ns;
	pthread_mutex_lock(&m->lock);
	e->handle = m->next_handle++;
	if (m->next_handle < 0)
		m->next_handle = 0;
	e->next = m->list;
	m->list = e;
	pthread_mutex_unlock(&m->lock);
	log_info("capture sampler %d: %llu Hz, pid %lld (-1: every process), %.1f s", e->handle,
		 (unsigned long long)so.freq_hz, (long long)pid, (double)duration_ns / NSEC);
	*ret_frequency_hz = so.freq_hz;
	*ret_start_ns = e->start_ns;
	return e->handle;
}

/* Unlinks the entry of @handle (under lock); NULL if none. */
static struct cap_ent *unlink_locked(struct capture_mgr *m, int handle)
{
	struct cap_ent **pp, *e;

	for (pp = &m->list; *pp; pp = &(*pp)->next) {
		if ((*pp)->handle == handle) {
			e = *pp;
			*pp = e->next;
			e->next = NULL;
			return e;
		}
	}
	return NULL;
}

int capture_mgr__take(struct capture_mgr *m, int handle, struct recording **ret,
		      bool *ret_truncated, char *err, size_t errlen)
{
	struct cap_ent *e;
	int r = 0;

	pthread_mutex_lock(&m->lock);
	for (e = m->list; e && e->handle != handle; e = e->next)
		;
	if (e && e->state == CAP_RUNNING) {
		pthread_mutex_unlock(&m->lock);
		return -EAGAIN;
	}
	e = unlink_locked(m, handle);
	pthread_mutex_unlock(&m->lock);
	if (!e) {
		snprintf(err, errlen, "capture sampler %d is gone", handle);
		return -ENOENT;
	}
	if (e->state == CAP_DONE) {
		*ret = e->rec;
		*ret_truncated = e->truncated;
		e->rec = NULL;
	} else {
		snprintf(err, errlen, "%s", e->err);
		r = -EIO;
	}
	ent_free(e);
	return r;
}

void capture_mgr__stop(struct capture_mgr *m, int handle)
{
	struct cap_ent *e;

	pthread_mutex_lock(&m->lock);
	e = unlink_locked(m, handle);
	pthread_mutex_unlock(&m->lock);
	ent_free(e); /* detaches and frees the sampler if it still runs */
}

struct capture_mgr *capture_mgr__new(const struct ember_config *cfg, struct ingest *in,
				     struct symbolizer *sym, const struct sampler *live)
{
	struct capture_mgr *m = calloc(1, sizeof(*m));

	if (!m) {
		errno = ENOMEM;
		return NULL;
	}
	m->cfg = cfg;
	m->in = in;
	m->sym = sym;
	m->live = live;
	sbuf_init(&m->stack);
	pthread_mutex_init(&m->lock, NULL);
	return m;
}

void capture_mgr__free(struct capture_mgr *m)
{
	struct cap_ent *e;

	if (!m)
		return;
	while ((e = m->list)) {
		m->list = e->next;
		ent_free(e);
	}
	sbuf_fini(&m->stack);
	pthread_mutex_destroy(&m->lock);
	free(m);
}
