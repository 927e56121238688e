// SPDX-License-Identifier: MIT
#include "ember/daemon/sample/sampler.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <linux/types.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "ember/daemon/sample/bpf_shared.h"
#include "ember/core/base/hash.h"
#include "ember/core/base/array.h"
#include "ember/core/base/clock.h"
#include "ember/core/base/errbuf.h"
#include "memio_internal.h"
#include "sampler.skel.h"

#define NSEC 1000000000ULL

struct sampler;
struct sampler_opts;
struct kernel_btf;
static void offcpu_setup(struct sampler *s, const struct sampler_opts *o, struct kernel_btf *kb);
static void task_pid_offsets(const struct btf *b, __u32 *ret_pid, __u32 *ret_tgid, __u32 *ret_nvcsw,
			     __u32 *ret_nivcsw);
static int offcpu_attach(struct sampler *s);

struct sampler {
	struct sampler_opts o;
	struct sampler_bpf *skel;
	struct bpf_program *prog;	/* do_sample, or do_sample_fp (o.fp_only) */
	struct ring_buffer *rb;
	int nr_cpus;			/* possible CPUs */
	struct bpf_link **links;	/* per possible CPU; NULL: not attached */
	bool hw;			/* using the hardware cycles event */
	bool stopped;			/* sampler__stop(): no re-attach */
	uint64_t last_cpu_check_ns;
	int64_t task_fsbase_off;	/* task_struct.thread.fsbase (-1: not read) */
	int hs_walk_err;		/* the load with the HotSpot step: how it failed (0: it
					   did not, or was not tried) */

	/* what was read since the last sampler__take(): records and process events */
	struct sampler_batch *cur;
	/* when the process events read are due to the worker (CLOCK_MONOTONIC; 0: none
	 * that wants it): a new process's first sample at once, an exec exec_batch_ns after it
	 * happened (its exit may come meanwhile: then nothing is read for it) */
	uint64_t ev_due_ns;
	uint64_t ev_check_ns;		/* ... a read of the ring then (execs not woken for) */
	size_t pend_max;		/* bytes of records read and not yet delivered (lost beyond) */
	size_t pend_bytes;		/* ... now, over every batch taken and not freed (atomic) */
	uint64_t rate_t0_ns, rate_calls0;	/* the bpf() call rate's window */

	/* delivery scratch (the thread that delivers): the groups' times and CPUs */
	uint64_t *times;
	uint32_t *cpus;
	size_t times_cap, cpus_cap;
	int online_fd;			/* /sys/devices/system/cpu/online, kept open */

	sampler_pid_fn pid_fn;
	void *pid_ctx;
	uint32_t recent[1024];		/* direct-mapped cache of pids passed to pid_fn */
	sampler_exec_fn exec_fn;
	void *exec_ctx;
	struct bpf_link *exec_link;	/* sched_process_exec; NULL: not attached */
	sampler_exit_fn exit_fn;
	void *exit_ctx;
	struct bpf_link *exit_link;	/* sched_process_exit; NULL: not attached */
	sampler_fork_fn fork_fn;
	void *fork_ctx;
	struct bpf_link *fork_link;	/* sched_process_fork; NULL: not attached */
	struct bpf_link *offcpu_links[4]; /* sched_switch, sys_exit, sched_waking, sched_wakeup */
	struct memio *memio;		/* memory and I/O events' links (memio.c); NULL: none */
	bool pmc;			/* the kernel offers hardware counters (sampler_pmc_probe) */
	int run_stats_fd;		/* bpf_enable_stats(): run time counted while open; -1 */
	uint32_t *row_keys;		/* scratch: indices for batch writes of rows */
	bool rows_unmappable;		/* the rows array could not be mapped: batch writes */
	sampler_pyname_fn pyname_fn; /* Python code objects' names */
	void *pyname_ctx;

	uint64_t newest_ns;		/* the newest sample record read (CLOCK_MONOTONIC) */
	pthread_mutex_t st_lock;	/* st: the reading and the delivering thread count in it */
	struct sampler_stats st;
};

/* A process event or a code object's names, kept in read order with the batch. */
struct batch_event {
	uint32_t kind;			/* EV_* */
	uint32_t pid;
	uint64_t time_ns;
	struct ember_py_name_rec *name;	/* EV_PYNAME; owned */
	uint32_t parent;		/* EV_FORK: the parent's pid */
	uint64_t *ips;			/* EV_NEW_PID: its first record's user frames; owned */
	uint32_t nr_ips;
	struct sampler_image img;	/* EV_EXEC: its executable, as the kernel told it */
};

enum { EV_NEW_PID, EV_EXEC, EV_EXIT, EV_PYNAME, EV_FORK };

struct sampler_batch {
	char *recs;			/* the records, 8-byte aligned, as the ring buffer had them */
	size_t len, cap;
	size_t *off;			/* each record's offset in recs */
	size_t nr, off_cap;
	struct batch_event *ev;
	size_t nr_ev, ev_cap;
};

enum { BC_COUNTERS, BC_ROWS, BC_LISTS };

/* Files with a table the walk can find through the kernel's mapping (unwind_files): more are
 * left to the lists. */
#define UNWIND_FILES_MAX 8192

static bool vma_offsets(struct sampler_bpf *skel, const struct btf *b);
static void vma_offsets_copy(struct sampler_bpf *dst, const struct sampler_bpf *src);
static int64_t task_fsbase_offset(const struct btf *b);
static bool exec_image_offsets(struct sampler_bpf *skel, const struct btf *b);
/* The kernel's BTF, parsed at the first call of a sampler's set-up (~6 MB: ~70 ms of CPU with a
 * fresh heap), for every offset the programs read; NULL when it cannot be (asked once). */
struct kernel_btf {
	struct btf *b;
	bool tried;
};
static const struct btf *kernel_btf(struct kernel_btf *k);

/* @n bpf() map calls of kind BC_* (each one: a window in which the kernel skips the sampling
 * program on that CPU) */
#define BPF_CALLS(s, kind, n)                                                                  \
	do {                                                                                   \
		pthread_mutex_lock(&(s)->st_lock);                                             \
		(s)->st.bpf_calls += (n);                                                      \
		(s)->st.bpf_calls_by[kind] += (n);                                             \
		pthread_mutex_unlock(&(s)->st_lock);                                           \
	} while (0)

#define STAT_ADD(s, field, v)                                                                  \
	do {                                                                                   \
		pthread_mutex_lock(&(s)->st_lock);                                             \
		(s)->st.field += (v);                                                          \
		pthread_mutex_unlock(&(s)->st_lock);                                           \
	} while (0)

static int read_sysctl(const char *path, long *ret)
{
	char buf[64];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	*ret = strtol(buf, NULL, 10);
	return 0;
}

/* Parses a sysfs CPU list ("0-3,5,7-8\n") into @mask[0..n). 0 or -EINVAL. */
static int parse_cpulist(const char *s, bool *mask, size_t n)
{
	memset(mask, 0, n * sizeof(*mask));
	while (*s && *s != '\n') {
		char *end;
		unsigned long a, b, i;

		if (*s < '0' || *s > '9')
			return -EINVAL;
		a = strtoul(s, &end, 10);
		b = a;
		s = end;
		if (*s == '-') {
			s++;
			if (*s < '0' || *s > '9')
				return -EINVAL;
			b = strtoul(s, &end, 10);
			s = end;
		}
		if (b < a || b > 1 << 20)
			return -EINVAL;
		for (i = a; i <= b && i < n; i++)
			mask[i] = true;
		if (*s == ',')
			s++;
		else if (*s && *s != '\n')
			return -EINVAL;
	}
	return 0;
}

/* @fdp keeps the file open between calls: sysfs regenerates it on each read at offset 0, and
 * the check runs every second (an open is a path walk). */
static int online_cpus(int *fdp, bool *mask, size_t n)
{
	char buf[4096];
	ssize_t len;

	if (*fdp < 0)
		*fdp = open("/sys/devices/system/cpu/online", O_RDONLY | O_CLOEXEC);
	if (*fdp < 0)
		return -errno;
	len = pread(*fdp, buf, sizeof(buf) - 1, 0);
	if (len <= 0) {
		close(*fdp);
		*fdp = -1;
		return -EIO;
	}
	buf[len] = '\0';
	return parse_cpulist(buf, mask, n);
}

static int perf_open(struct sampler *s, int cpu, bool hw)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = hw ? PERF_TYPE_HARDWARE : PERF_TYPE_SOFTWARE,
		.config = hw ? PERF_COUNT_HW_CPU_CYCLES : PERF_COUNT_SW_CPU_CLOCK,
		.freq = 1,
		.sample_freq = s->o.freq_hz,
	};
	int fd = (int)syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

static int attach_cpu(struct sampler *s, int cpu)
{
	struct bpf_link *link;
	int fd, err;

	fd = perf_open(s, cpu, s->hw);
	if (fd < 0)
		return fd;
	link = bpf_program__attach_perf_event(s->prog, fd);
	if (!link) {
		err = -errno;
		close(fd); /* the link owns fd only on success */
		return err;
	}
	s->links[cpu] = link;
	if (s->last_cpu_check_ns) /* a CPU back online, not the start's attach */
		STAT_ADD(s, cpu_attaches, 1);
	return 0;
}

int sampler__update_cpus(struct sampler *s)
{
	bool *mask = calloc((size_t)s->nr_cpus, sizeof(*mask));
	int cpu, r, n = 0;

	if (!mask)
		return -ENOMEM;
	r = online_cpus(&s->online_fd, mask, (size_t)s->nr_cpus);
	if (r) {
		free(mask);
		return r;
	}
	for (cpu = 0; cpu < s->nr_cpus; cpu++) {
		if (mask[cpu] && !s->links[cpu]) {
			r = attach_cpu(s, cpu);
			/* ENODEV: went offline since we read the mask; next check retries */
			if (r && r != -ENODEV) {
				free(mask);
				return r;
			}
		} else if (!mask[cpu] && s->links[cpu]) {
			/* events of an offlined CPU do not come back: detach, re-attach when online */
			bpf_link__destroy(s->links[cpu]);
			s->links[cpu] = NULL;
			STAT_ADD(s, cpu_detaches, 1);
		}
		n += s->links[cpu] != NULL;
	}
	memio_update_cpus(s->memio, mask);
	free(mask);
	pthread_mutex_lock(&s->st_lock);
	s->st.cpus_attached = (uint64_t)n;
	pthread_mutex_unlock(&s->st_lock);
	s->last_cpu_check_ns = mono_ns();
	return n;
}

/* The words of a record, and its size as its header says (0: does not add up). */
static size_t rec_size(const struct ember_sample_rec *r)
{
	size_t nw = (size_t)r->nr_user + r->nr_py + r->nr_kernel +
		    (r->kind == EMBER_KIND_WAKEUP ? EMBER_WAKEE_WORDS : 0);

	if (r->nr_user > EMBER_MAX_STACK_DEPTH || r->nr_kernel > EMBER_MAX_STACK_DEPTH ||
	    r->nr_py > EMBER_PY_WORDS * EMBER_PY_MAX_FRAMES || nw > EMBER_SAMPLE_WORDS)
		return 0;
	return sizeof(*r) + nw * sizeof(uint64_t);
}

/* The batch being filled (NULL: out of memory, and *@lost set). */
static struct sampler_batch *cur_batch(struct sampler *s)
{
	if (!s->cur)
		s->cur = calloc(1, sizeof(*s->cur));
	return s->cur;
}

/*
 * How long an exec waits for the worker (sampler_opts.exec_batch_ns), plus what its record may
 * take to be committed after the BPF program read the clock: a read of the ring at the end of
 * a window sees every exec that did not wake it.
 */
#define EXEC_COMMIT_NS 100000ull

static uint64_t exec_batch_ns(const struct sampler *s)
{
	return s->o.exec_batch_ns ? s->o.exec_batch_ns + EXEC_COMMIT_NS : 0;
}

/* @timed: a new process's, an exec's or a fork's event that sets when the events are due (a
 * seeded exec of a process not sampled does not: it goes with the next batch) */
static int add_event(struct sampler *s, uint32_t kind, uint32_t pid, uint64_t time_ns, bool timed,
		     const struct ember_py_name_rec *name)
{
	struct sampler_batch *b = cur_batch(s);
	struct batch_event *e;

	if (!b || array_grow((void **)&b->ev, &b->ev_cap, b->nr_ev + 1, sizeof(*b->ev), 64))
		goto lost;
	e = &b->ev[b->nr_ev];
	*e = (struct batch_event){ .kind = kind, .pid = pid, .time_ns = time_ns };
	if (timed && (kind == EV_NEW_PID || kind == EV_EXEC || kind == EV_FORK)) {
		/* a new process's first sample at once; an exec with its burst (its list is
		 * needed within a short life); a fork with the next batch (the BPF program
		 * listed it): its exec or exit meanwhile supersedes it */
		uint64_t due = kind == EV_NEW_PID ? 1
			       : kind == EV_FORK && s->o.drain_period_ns
				       ? time_ns + s->o.drain_period_ns
				       : time_ns + exec_batch_ns(s);
		uint64_t end = __atomic_load_n(&s->skel->bss->exec_wake_ns, __ATOMIC_RELAXED) +
			       exec_batch_ns(s);

		/* in the window an earlier exec's wake-up opened: its burst is that window,
		 * handed over at its end (with no window, end is the wake-up: never after it) */
		if (kind != EV_NEW_PID && time_ns + exec_batch_ns(s) > end && time_ns < end &&
		    end < due)
			due = end;

		if (!s->ev_due_ns || due < s->ev_due_ns)
			s->ev_due_ns = due;
	}
	if (name) {
		e->name = malloc(sizeof(*name));
		if (!e->name)
			goto lost;
		memcpy(e->name, name, sizeof(*name));
	}
	b->nr_ev++;
	return 0;
lost:
	STAT_ADD(s, events_lost, 1);
	return -ENOMEM;
}

/* Read on the thread that reads the ring: kept in the batch, nothing else (no file, no map). */
static int on_record(void *ctx, void *data, size_t size)
{
	struct sampler *s = ctx;
	const struct ember_sample_rec *r = data;
	struct sampler_batch *b;
	uint32_t *slot;

	if (size == sizeof(struct ember_fork_rec)) {
		const struct ember_fork_rec *x = data;

		/* a new process with the pid: its next sample is noted again */
		slot = &s->recent[x->pid & 1023];
		if (__atomic_load_n(slot, __ATOMIC_RELAXED) == x->pid)
			__atomic_store_n(slot, 0, __ATOMIC_RELAXED);
		if (!add_event(s, EV_FORK, x->pid, x->time_ns, true, NULL))
			s->cur->ev[s->cur->nr_ev - 1].parent = x->parent;
		return 0;
	}
	if (size == sizeof(struct ember_exec_img_rec)) {
		const struct ember_exec_img_rec *x = data;
		/* seeded, not sampled: its walks need no list, its first sample wakes */
		bool quiet = (x->kind & EMBER_REC_SEEDED) && !(x->kind & EMBER_REC_SAMPLED);

		slot = &s->recent[x->pid & 1023];
		if (__atomic_load_n(slot, __ATOMIC_RELAXED) == x->pid)
			__atomic_store_n(slot, 0, __ATOMIC_RELAXED);
		if (!add_event(s, EV_EXEC, x->pid, x->time_ns, !quiet, NULL)) {
			struct sampler_image *im = &s->cur->ev[s->cur->nr_ev - 1].img;

			/* a mapping the kernel made: page-aligned, not empty */
			if (x->ino && x->end > x->start && !(x->start & 4095) && !(x->end & 4095)) {
				*im = (struct sampler_image){ .start = x->start, .end = x->end,
							      .pgoff = x->pgoff << 12,
							      .ino = x->ino,
							      .dev_major = x->dev >> 20,
							      .dev_minor = x->dev & 0xfffff,
							      .seeded = !!(x->kind &
									   EMBER_REC_SEEDED) };
			}
			if (x->kind & EMBER_REC_SAMPLED)
				s->ev_due_ns = 1;
		}
		return 0;
	}
	if (size == sizeof(struct ember_exec_rec)) {
		const struct ember_exec_rec *x = data;

		/* the next sample of the new image (or of a new process with the pid) is a new
		 * process's: noted again */
		slot = &s->recent[x->pid & 1023];
		if (__atomic_load_n(slot, __ATOMIC_RELAXED) == x->pid)
			__atomic_store_n(slot, 0, __ATOMIC_RELAXED);
		/* a sampled process's exec is due at once (its record woke us), others with
		 * their burst */
		if (!add_event(s, (x->kind & EMBER_REC_KIND_MASK) == EMBER_REC_EXIT ? EV_EXIT : EV_EXEC,
			       x->pid, x->time_ns, true, NULL) &&
		    (x->kind & EMBER_REC_SAMPLED))
			s->ev_due_ns = 1;
		return 0;
	}
	if (size < sizeof(*r) || rec_size(r) != size) {
		pthread_mutex_lock(&s->st_lock);
		s->st.bad_records++;
		s->st.lost++;
		pthread_mutex_unlock(&s->st_lock);
		return 0;
	}
	if (r->time_ns > s->newest_ns)
		s->newest_ns = r->time_ns;
	/* kept until delivered, bounded: beyond it (a delivery that does not come), lost */
	b = cur_batch(s);
	if (!b || __atomic_load_n(&s->pend_bytes, __ATOMIC_RELAXED) + size > s->pend_max ||
	    array_grow((void **)&b->recs, &b->cap, b->len + size + 8, 1, 65536) ||
	    array_grow((void **)&b->off, &b->off_cap, b->nr + 1, sizeof(*b->off), 1024)) {
		pthread_mutex_lock(&s->st_lock);
		s->st.pending_drops++;
		s->st.lost++;
		pthread_mutex_unlock(&s->st_lock);
	} else {
		memcpy(b->recs + b->len, r, size);
		b->off[b->nr++] = b->len;
		size = (size + 7) & ~(size_t)7; /* records stay 8-byte aligned */
		b->len += size;
		__atomic_fetch_add(&s->pend_bytes, size, __ATOMIC_RELAXED);
	}
	/* a sample without a user stack (kernel thread, or in the kernel on behalf of no user
	 * context) needs no mappings: its process is captured at its first sample with one */
	slot = &s->recent[r->pid & 1023];
	if (s->pid_fn && r->pid && r->user_err != -EFAULT &&
	    __atomic_load_n(slot, __ATOMIC_RELAXED) != r->pid) {
		__atomic_store_n(slot, r->pid, __ATOMIC_RELAXED);
		if (!add_event(s, EV_NEW_PID, r->pid, r->time_ns, true, NULL) && !r->user_err &&
		    r->nr_user) {
			/* the files its walk reached: their tables asked for with the event, not
			 * a tick later (a process living 30 ms is gone by then) */
			struct batch_event *e = &s->cur->ev[s->cur->nr_ev - 1];
			uint32_t n = r->nr_user < SAMPLER_FIRST_IPS ? r->nr_user : SAMPLER_FIRST_IPS;

			e->ips = malloc(n * sizeof(*e->ips));
			if (e->ips) {
				memcpy(e->ips, (const uint64_t *)(r + 1), n * sizeof(*e->ips));
				e->nr_ips = n;
			}
		}
	}
	return 0;
}

/* A code object's names (py_names ring buffer). */
static int on_pyname(void *ctx, void *data, size_t size)
{
	struct sampler *s = ctx;

	if (size >= sizeof(struct ember_py_name_rec) && s->pyname_fn)
		(void)add_event(s, EV_PYNAME, 0, 0, false, data);
	return 0;
}

void sampler__stop(struct sampler *s)
{
	int cpu;

	s->stopped = true;
	for (cpu = 0; cpu < s->nr_cpus; cpu++) {
		if (s->links[cpu]) {
			bpf_link__destroy(s->links[cpu]);
			s->links[cpu] = NULL;
		}
	}
	/* no new off-CPU periods either (the resume side ends those open) */
	bpf_link__destroy(s->offcpu_links[0]);
	s->offcpu_links[0] = NULL;
}

int sampler__epoll_fd(struct sampler *s)
{
	return ring_buffer__epoll_fd(s->rb);
}

uint64_t sampler__newest_ns(const struct sampler *s, uint64_t *ret_cpus)
{
	*ret_cpus = s->st.cpus_attached; /* written on this thread only */
	return s->newest_ns;
}

int sampler__poll(struct sampler *s)
{
	STAT_ADD(s, ring_wakeups, 1);
	return ring_buffer__consume(s->rb);
}

/*
 * Whether @b holds a process event the worker wants now: an exec, a fork or a new process's first
 * sample whose process did not exit since (its exit later in @b; for a fork, an exec too). Exec and exit in one batch wait for
 * the tick: there is nothing to read for them. A long list of events: yes, without looking.
 */
static bool events_urgent(const struct sampler_batch *b)
{
	size_t i, j;

	if (b->nr_ev > 512)
		return true;
	for (i = 0; i < b->nr_ev; i++) {
		uint32_t k = b->ev[i].kind;

		if (k != EV_EXEC && k != EV_NEW_PID && k != EV_FORK)
			continue;
		/* a fork's copy is superseded by an exec too */
		for (j = i + 1; j < b->nr_ev; j++)
			if (b->ev[j].pid == b->ev[i].pid &&
			    (b->ev[j].kind == EV_EXIT || (k == EV_FORK && b->ev[j].kind == EV_EXEC)))
				break;
		if (j == b->nr_ev)
			return true;
	}
	return false;
}

uint64_t sampler__events_due_ns(const struct sampler *s)
{
	uint64_t due = s->ev_due_ns, check = s->ev_check_ns;

	return !due ? check : !check ? due : due < check ? due : check;
}

/* The process events of the batch being filled, moved to a batch of their own. */
static struct sampler_batch *take_events(struct sampler *s)
{
	struct sampler_batch *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL; /* they go with the tick's */
	b->ev = s->cur->ev;
	b->nr_ev = s->cur->nr_ev;
	b->ev_cap = s->cur->ev_cap;
	s->cur->ev = NULL;
	s->cur->nr_ev = s->cur->ev_cap = 0;
	return b;
}

struct sampler_batch *sampler__take(struct sampler *s, bool events_only)
{
	uint64_t t0 = mono_ns(), wake, end;
	struct sampler_batch *b;

	/* about once a second: a tenth early, or with the 1 s tick each check would come just
	 * short of it every other tick, 2 s apart (a CPU offline for 1.5 s went unseen:
	 * test_hotplug, fresh-clone run Q) */
	if (!s->stopped && t0 - s->last_cpu_check_ns >= NSEC - NSEC / 10)
		(void)sampler__update_cpus(s); /* errors: retried next second */
	(void)ring_buffer__consume(s->rb);
	b = s->cur;
	/* an exec that did not wake us (its window had woken us already) is read at the window's
	 * end at the latest (this read may have been before it was committed) */
	wake = __atomic_load_n(&s->skel->bss->exec_wake_ns, __ATOMIC_RELAXED);
	end = wake + exec_batch_ns(s);
	s->ev_check_ns = s->o.exec_batch_ns && end > t0 ? end : 0;
	if (events_only) {
		STAT_ADD(s, event_checks, 1);
		if (!b || !b->nr_ev) {
			s->ev_due_ns = 0;
			return NULL;
		}
		if (!s->ev_due_ns || t0 < s->ev_due_ns)
			return NULL; /* not yet: more of the burst, or its exits, may come */
		s->ev_due_ns = 0;
		if (!events_urgent(b))
			return NULL; /* exits, and execs of processes gone: they go with the tick */
		/* the events go, the records wait for the tick's take */
		b = take_events(s);
		if (!b || !b->nr_ev)
			return sampler_batch__free(s, b), NULL;
		STAT_ADD(s, event_batches, 1);
		return b;
	}
	s->cur = NULL;
	s->ev_due_ns = 0;
	pthread_mutex_lock(&s->st_lock);
	s->st.drains++;
	s->st.drain_ns_total += mono_ns() - t0;
	pthread_mutex_unlock(&s->st_lock);
	return b;
}

size_t sampler_batch__samples(const struct sampler_batch *b)
{
	return b ? b->nr : 0;
}

size_t sampler_batch__events(const struct sampler_batch *b)
{
	return b ? b->nr_ev : 0;
}

void sampler_batch__free(struct sampler *s, struct sampler_batch *b)
{
	size_t i;

	if (!b)
		return;
	__atomic_fetch_sub(&s->pend_bytes, b->len, __ATOMIC_RELAXED);
	for (i = 0; i < b->nr_ev; i++) {
		free(b->ev[i].name);
		free(b->ev[i].ips);
	}
	free(b->ev);
	free(b->recs);
	free(b->off);
	free(b);
}

void sampler_batch__drop(struct sampler *s, struct sampler_batch *b)
{
	if (!b)
		return;
	pthread_mutex_lock(&s->st_lock);
	s->st.pending_drops += b->nr;
	s->st.lost += b->nr;
	s->st.events_lost += b->nr_ev;
	pthread_mutex_unlock(&s->st_lock);
	sampler_batch__free(s, b);
}

void sampler__set_pid_fn(struct sampler *s, sampler_pid_fn fn, void *ctx)
{
	s->pid_fn = fn;
	s->pid_ctx = ctx;
}

void sampler__set_exec_fn(struct sampler *s, sampler_exec_fn fn, void *ctx)
{
	s->exec_fn = fn;
	s->exec_ctx = ctx;
}

void sampler__set_fork_fn(struct sampler *s, sampler_fork_fn fn, void *ctx)
{
	s->fork_fn = fn;
	s->fork_ctx = ctx;
}

int sampler__exec_path(struct sampler *s, uint32_t pid, uint64_t time_ns, char *buf, size_t cap)
{
	struct ember_exec_path v;
	size_t n;

	if (!s || !s->skel || !cap || !s->skel->rodata->exec_images ||
	    !s->skel->rodata->bprm_interp_off)
		return -ENOENT;
	if (bpf_map__lookup_elem(s->skel->maps.exec_paths, &pid, sizeof(pid), &v, sizeof(v), 0))
		return -errno;
	if (v.time_ns != time_ns)
		return -ENOENT; /* another exec's (the pid reused, or this one's not kept) */
	n = strnlen(v.path, sizeof(v.path));
	if (n >= cap || n == sizeof(v.path))
		return -ENAMETOOLONG;
	memcpy(buf, v.path, n);
	buf[n] = '\0';
	return (int)n;
}

void sampler__set_exit_fn(struct sampler *s, sampler_exit_fn fn, void *ctx)
{
	s->exit_fn = fn;
	s->exit_ctx = ctx;
}

void sampler__free(struct sampler *s)
{
	int cpu;

	if (!s)
		return;
	if (s->links)
		for (cpu = 0; cpu < s->nr_cpus; cpu++)
			bpf_link__destroy(s->links[cpu]);
	bpf_link__destroy(s->exec_link);
	bpf_link__destroy(s->exit_link);
	bpf_link__destroy(s->fork_link);
	bpf_link__destroy(s->offcpu_links[0]);
	bpf_link__destroy(s->offcpu_links[1]);
	bpf_link__destroy(s->offcpu_links[2]);
	bpf_link__destroy(s->offcpu_links[3]);
	memio_free(s->memio);
	if (s->run_stats_fd >= 0)
		close(s->run_stats_fd);
	if (s->online_fd >= 0)
		close(s->online_fd);
	ring_buffer__free(s->rb);
	free(s->row_keys);
	sampler_bpf__destroy(s->skel);
	free(s->links);
	sampler_batch__free(s, s->cur);
	free(s->times);
	free(s->cpus);
	pthread_mutex_destroy(&s->st_lock);
	free(s);
}

static int explain_load(int err, char *errbuf, size_t errlen)
{
	if (err == -EPERM || err == -EACCES)
		(void)errbuf_set(
		    errbuf, errlen, 0,
		    "loading the BPF program was refused (%s): emberd needs root, or CAP_BPF, "
		    "CAP_PERFMON and CAP_SYS_RESOURCE",
		    strerror(-err));
	else
		(void)errbuf_set(errbuf, errlen, 0,
				 "cannot load the BPF program: %s (run with -v for the verifier "
				 "log)",
				 strerror(-err));
	return err;
}

static int explain_perf(int err, int cpu, char *errbuf, size_t errlen, uint64_t hz)
{
	long paranoid = -99, max_rate = 0;

	(void)read_sysctl("/proc/sys/kernel/perf_event_paranoid", &paranoid);
	(void)read_sysctl("/proc/sys/kernel/perf_event_max_sample_rate", &max_rate);
	if (err == -EACCES || err == -EPERM)
		(void)errbuf_set(
		    errbuf, errlen, 0,
		    "perf_event_open on CPU %d denied (%s, kernel.perf_event_paranoid=%ld): "
		    "emberd needs root or CAP_PERFMON",
		    cpu, strerror(-err), paranoid);
	else if (err == -EINVAL && max_rate > 0 && hz > (uint64_t)max_rate)
		(void)errbuf_set(errbuf, errlen, 0,
				 "perf_event_open on CPU %d: %llu Hz is above "
				 "kernel.perf_event_max_sample_rate=%ld",
				 cpu, (unsigned long long)hz, max_rate);
	else if (err == -ENOENT || err == -ENOSYS)
		(void)errbuf_set(errbuf, errlen, 0,
				 "perf_event_open on CPU %d: %s: this kernel has no perf events "
				 "(CONFIG_PERF_EVENTS)",
				 cpu, strerror(-err));
	else
		(void)errbuf_set(errbuf, errlen, 0, "perf_event_open on CPU %d failed: %s", cpu,
				 strerror(-err));
	return err;
}

int sampler_probe_walker(void)
{
	int r = libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_loop, NULL);

	return r < 0 ? r : r > 0;
}

/*
 * Opens @s's skeleton into s->skel and sets all it needs before its load: the program, the
 * knobs (@hs_walk: the HotSpot step compiled in), map sizes, a capture's shared maps, the
 * kernel's offsets from its BTF (parsed here, freed before return). 0 or -errno with @errbuf
 * set; s->skel, when set, is freed by sampler__free().
 */
static int skel_setup(struct sampler *s, const struct sampler_opts *o, bool hs_walk, char *errbuf,
		      size_t errlen)
{
	struct kernel_btf kb = { 0 };
	int err = 0;

	s->skel = sampler_bpf__open();
	if (!s->skel) {
		err = -errno;
		(void)errbuf_set(errbuf, errlen, 0, "cannot open the BPF skeleton: %s",
				 strerror(-err));
		goto out;
	}
	/* one of the two sampling programs is loaded: the one without the walker where the
	 * kernel lacks bpf_loop() (its verifier would refuse the other) */
	s->prog = s->o.fp_only ? s->skel->progs.do_sample_fp : s->skel->progs.do_sample;
	if ((err = bpf_program__set_autoload(s->skel->progs.do_sample, !s->o.fp_only)) ||
	    (err = bpf_program__set_autoload(s->skel->progs.do_sample_fp, s->o.fp_only))) {
		(void)errbuf_set(errbuf, errlen, 0, "cannot choose the BPF program: %s",
				 strerror(-err));
		goto out;
	}
	s->skel->rodata->include_idle = o->include_idle;
	s->skel->rodata->idle_stacks = o->idle_stacks;
	s->skel->rodata->target_pid = o->pid;
	/* the runtime shortcut: a capture's sampler shares the daemon's maps, whose changes bump
	 * the daemon's rt_gen, not its own: it looks up each time */
	s->skel->rodata->rt_cache = !o->unwind_from;
	s->skel->rodata->ring_half = o->ringbuf_bytes / 2;
	s->skel->rodata->exec_batch_ns = o->exec_batch_ns;
	s->skel->rodata->nr_rows = s->o.unwind_rows ? s->o.unwind_rows : 1;
	s->skel->rodata->py_lines = o->python_lines;
	s->skel->rodata->hs_walk_on = hs_walk;
	/* an address the list lacks: the kernel's mapping and its file's table (without the
	 * kernel's offsets, frame pointers there as before) */
	s->skel->rodata->vma_fallback = s->o.unwind_rows && !o->fp_only && !o->unwind_from &&
					vma_offsets(s->skel, kernel_btf(&kb));
	if ((err = bpf_map__set_max_entries(s->skel->maps.unwind_rows,
					    s->o.unwind_rows ? s->o.unwind_rows : 1)) ||
	    (err = bpf_map__set_max_entries(s->skel->maps.unwind_procs,
					    s->o.unwind_procs ? s->o.unwind_procs : 1)) ||
	    (err = bpf_map__set_max_entries(s->skel->maps.unwind_files,
					    s->o.unwind_rows ? UNWIND_FILES_MAX : 1)) ||
	    (err = bpf_map__set_max_entries(s->skel->maps.samples, o->ringbuf_bytes)) ||
	    (err = bpf_map__set_max_entries(s->skel->maps.py_procs,
					    o->python_procs ? o->python_procs : 4096))) {
		(void)errbuf_set(errbuf, errlen, 0, "cannot size the BPF maps: %s", strerror(-err));
		goto out;
	}
	/* a capture's sampler walks with the daemon's tables: the same maps */
	if (o->unwind_from) {
		if ((err =
			 bpf_map__reuse_fd(s->skel->maps.unwind_rows,
					   bpf_map__fd(o->unwind_from->skel->maps.unwind_rows))) ||
		    (err =
			 bpf_map__reuse_fd(s->skel->maps.unwind_procs,
					   bpf_map__fd(o->unwind_from->skel->maps.unwind_procs))) ||
		    (err = bpf_map__reuse_fd(s->skel->maps.py_procs,
					     bpf_map__fd(o->unwind_from->skel->maps.py_procs))) ||
		    (err = bpf_map__reuse_fd(s->skel->maps.py_threads,
					     bpf_map__fd(o->unwind_from->skel->maps.py_threads))) ||
		    (err = bpf_map__reuse_fd(s->skel->maps.py_known,
					     bpf_map__fd(o->unwind_from->skel->maps.py_known))) ||
		    (err = bpf_map__reuse_fd(s->skel->maps.v8_procs,
					     bpf_map__fd(o->unwind_from->skel->maps.v8_procs))) ||
		    (err = bpf_map__reuse_fd(s->skel->maps.hs_procs,
					     bpf_map__fd(o->unwind_from->skel->maps.hs_procs))) ||
		    (err = bpf_map__reuse_fd(s->skel->maps.unwind_files,
					     bpf_map__fd(o->unwind_from->skel->maps.unwind_files)))) {
			(void)errbuf_set(errbuf, errlen, 0, "cannot share the unwind tables: %s",
					 strerror(-err));
			goto out;
		}
		s->skel->rodata->nr_rows = o->unwind_from->skel->rodata->nr_rows;
		/* the daemon's files, and the offsets read for them */
		s->skel->rodata->vma_fallback = o->unwind_from->skel->rodata->vma_fallback;
		vma_offsets_copy(s->skel, o->unwind_from->skel);
		/* Python: the daemon's processes, names already sent, and where they go */
		s->skel->rodata->py_lines = o->unwind_from->skel->rodata->py_lines;
		s->pyname_fn = o->unwind_from->pyname_fn;
		s->pyname_ctx = o->unwind_from->pyname_ctx;
	}
	offcpu_setup(s, o, &kb);
	memio_setup(s->skel, &o->memio, o->fp_only, o->memio.blockio ? kernel_btf(&kb) : NULL);
	/* fork records: the child's pid and tgid (a capture's sampler has none) */
	if (!o->pid) {
		const struct btf *vb = kernel_btf(&kb);

		task_pid_offsets(vb, (__u32 *)&s->skel->rodata->task_pid_off,
				 (__u32 *)&s->skel->rodata->task_tgid_off,
				 (__u32 *)&s->skel->rodata->task_nvcsw_off,
				 (__u32 *)&s->skel->rodata->task_nivcsw_off);
		/* exec records with the executable's mapping: where bpf_find_vma() is (as
		 * bpf_loop(), 5.17: fp_only says neither is) and the offsets were found */
		if (!o->fp_only && vb)
			s->skel->rodata->exec_images = exec_image_offsets(s->skel, vb);
		/* for the CPython reader (python.c), which would parse the BTF again */
		s->task_fsbase_off = task_fsbase_offset(vb);
	}
	err = 0;
out:
	/* every offset set: the parsed BTF (tens of MB) is not kept */
	btf__free(kb.b);
	return err;
}

int sampler__new(const struct sampler_opts *o, struct sampler **ret_s, char *errbuf,
		 size_t errlen)
{
	struct sampler *s;
	bool *mask = NULL, hs;
	int err, cpu, first = -1, fd;

	if (!o->freq_hz ||
	    !o->ringbuf_bytes || (o->ringbuf_bytes & (o->ringbuf_bytes - 1))) {
		(void)errbuf_set(errbuf, errlen, 0, "invalid sampler options");
		return -EINVAL;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		err = -errno;
		(void)errbuf_set(
		    errbuf, errlen, 0,
		    "kernel BTF /sys/kernel/btf/vmlinux is not readable (%s): emberd's CO-RE BPF "
		    "program needs a kernel built with CONFIG_DEBUG_INFO_BTF=y",
		    strerror(-err));
		return err;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->o = *o;
	s->task_fsbase_off = -1;
	pthread_mutex_init(&s->st_lock, NULL);
	s->run_stats_fd = -1;
	s->online_fd = -1;
	err = libbpf_num_possible_cpus();
	if (err <= 0) {
		(void)errbuf_set(errbuf, errlen, 0, "cannot count the possible CPUs: %s",
				 strerror(-err));
		goto err_out;
	}
	s->nr_cpus = err;
	/*
	 * Records read at wake-ups wait for the drain in memory: up to 16 ring buffers' worth
	 * (the ring wakes userspace at half full, so a drain that keeps coming never nears it);
	 * beyond, lost and counted (a drain held by the test knob, or stuck)
	 */
	s->pend_max = (size_t)o->ringbuf_bytes * 16;
	s->links = calloc((size_t)s->nr_cpus, sizeof(*s->links));
	mask = calloc((size_t)s->nr_cpus, sizeof(*mask));
	if (!s->links || !mask) {
		err = -ENOMEM;
		(void)errbuf_set(errbuf, errlen, 0, "out of memory");
		goto err_out;
	}

	/* a capture's sampler walks as the daemon's does */
	if (o->unwind_from)
		s->o.fp_only = o->unwind_from->o.fp_only;
	/*
	 * The HotSpot step in the walker's frame callback (hotspot.bpf.h): tried wherever the
	 * walker is (a capture's sampler: as the daemon's came out), and where the kernel refuses
	 * the program with it, the same programs without it: Java frames are lost there, nothing
	 * else. One load on a kernel that takes it; two, and the BTF parsed again, on one that
	 * does not. Measured (docs/design/runtimes.md, "Kernels"): Debian 12's 6.1 takes it,
	 * do_sample 27.8k instructions processed (27.0k without), its load 0.7-3.9 s under QEMU's
	 * emulation on a loaded host (0.6-1.6 s without); 6.18 125k (85k), 0.12-0.23 s. Since the
	 * walk is a global function (unwind.bpf.h): 6.1 17.5k, 6.18 34.8k and 0.08 s. This
	 * was gated to 6.8 and later after a guest of test_kernel61 ran out its 110 s: that was
	 * a refusal (an earlier do_sample with the step past 6.1's 512-byte combined stack), the
	 * verifier's log shown only after the guest's time ran out.
	 */
	hs = !s->o.fp_only && (!o->unwind_from || o->unwind_from->skel->rodata->hs_walk_on);
	err = skel_setup(s, o, hs, errbuf, errlen);
	if (err)
		goto err_out;
	/* the test knob: this first load fails as a verifier's refusal would */
	err = hs && o->pretend_hs_refused ? -E2BIG : sampler_bpf__load(s->skel);
	if (err && hs) {
		s->st.hs_walk_refused = true;
		s->hs_walk_err = err;
		sampler_bpf__destroy(s->skel);
		s->skel = NULL;
		err = skel_setup(s, o, false, errbuf, errlen);
		if (err)
			goto err_out;
		err = sampler_bpf__load(s->skel);
	}
	if (err) {
		explain_load(err, errbuf, errlen);
		goto err_out;
	}
	err = offcpu_attach(s);
	if (err) {
		(void)errbuf_set(errbuf, errlen, 0,
				 "cannot attach the off-CPU programs (sched_switch, "
				 "sys_exit): %s",
				 strerror(-err));
		goto err_out;
	}
	s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.samples), on_record, s, NULL);
	if (!s->rb) {
		err = -errno;
		(void)errbuf_set(errbuf, errlen, 0, "cannot map the BPF ring buffer: %s",
				 strerror(-err));
		goto err_out;
	}
	/* Python code objects' names: a ring of their own, read with the time records */
	err = ring_buffer__add(s->rb, bpf_map__fd(s->skel->maps.py_names), on_pyname, s);
	if (err) {
		(void)errbuf_set(errbuf, errlen, 0, "cannot map the BPF ring buffer: %s",
				 strerror(-err));
		goto err_out;
	}
	/* exec notification: without it (no tracefs?) a process exec'ed after its first sample
	 * waits for the symbolizer's periodic checks; sampler_stats.exec_notify says which */
	s->exec_link = bpf_program__attach(s->skel->progs.on_exec);
	s->st.exec_notify = s->exec_link != NULL; /* before any other thread sees @s */
	/* exit notification: likewise, exits then wait for the periodic checks (exit_notify) */
	s->exit_link = bpf_program__attach(s->skel->progs.on_exit);
	s->st.exit_notify = s->exit_link != NULL;
	/* fork notification: without it, a forked child is listed at its first
	 * sample, walked by frame pointer until then (fork_notify) */
	if (!o->pid)
		s->fork_link = bpf_program__attach(s->skel->progs.on_fork);
	s->st.fork_notify = s->fork_link != NULL;
	/* the kernel counts BPF run time only while someone holds this (or with the sysctl
	 * kernel.bpf_stats_enabled=1): hold it, so prog_run_ns is real; costs two clock reads
	 * per program run */
	s->run_stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);

	/* Pick the event on the first online CPU: cycles where a PMU exists, else cpu-clock. */
	err = online_cpus(&s->online_fd, mask, (size_t)s->nr_cpus);
	if (err) {
		(void)errbuf_set(errbuf, errlen, 0,
				 "cannot read /sys/devices/system/cpu/online: %s", strerror(-err));
		goto err_out;
	}
	for (cpu = 0; cpu < s->nr_cpus && first < 0; cpu++)
		if (mask[cpu])
			first = cpu;
	if (first < 0) {
		err = -ENODEV;
		(void)errbuf_set(errbuf, errlen, 0, "no online CPU found");
		goto err_out;
	}
	if (o->hardware_event) {
		fd = perf_open(s, first, true);
		if (fd >= 0) {
			s->hw = true;
			close(fd);
		}
	}
	s->st.hardware_event = s->hw;
	/* cpu-clock fires every NSEC_PER_SEC / freq ns (the kernel's own division, at least 10 us):
	 * the program counts the firings it did not see from the gaps (where it can tell that one
	 * task ran through the gap: its context switch counts) */
	if (!s->hw && o->freq_hz && s->skel->rodata->task_nvcsw_off &&
	    s->skel->rodata->task_nivcsw_off)
		s->skel->bss->timer_period_ns = 1000000000ULL / o->freq_hz < 10000
							? 10000
							: 1000000000ULL / o->freq_hz;
	fd = perf_open(s, first, s->hw);
	if (fd < 0) {
		err = explain_perf(fd, first, errbuf, errlen, o->freq_hz);
		goto err_out;
	}
	close(fd);
	err = sampler__update_cpus(s);
	if (err < 0) {
		explain_perf(err, -1, errbuf, errlen, o->freq_hz);
		goto err_out;
	}
	err = memio_attach(s->skel, &o->memio, mask, s->nr_cpus, &s->memio, errbuf, errlen);
	if (err)
		goto err_out;
	if (!o->pid)
		s->pmc = sampler_pmc_probe(NULL, 0) == 1;
	free(mask);
	*ret_s = s;
	return 0;

err_out:
	free(mask);
	sampler__free(s);
	return err < 0 ? err : -EINVAL;
}

/* --- off-CPU events (bpf/offcpu.bpf.h) --------------------------------------------- */

/* The byte offset of member @name in struct type @id, looked for in anonymous struct and union
 * members too (vm_area_struct's vm_start is in one since 6.x); -1 when absent. */
static long btf_field_off(const struct btf *b, __u32 id, const char *name, int depth)
{
	const struct btf_type *t = btf__type_by_id(b, id);
	const struct btf_member *m;
	int i;

	while (t && (btf_is_typedef(t) || btf_is_mod(t))) {
		id = t->type;
		t = btf__type_by_id(b, id);
	}
	if (!t || !btf_is_composite(t) || depth > 4)
		return -1;
	for (i = 0, m = btf_members(t); i < btf_vlen(t); i++, m++) {
		const char *n = btf__name_by_offset(b, m->name_off);
		long sub;

		if (n && n[0]) {
			if (!strcmp(n, name))
				return (long)(btf_member_bit_offset(t, (__u32)i) / 8);
			continue;
		}
		sub = btf_field_off(b, m->type, name, depth + 1);
		if (sub >= 0)
			return (long)(btf_member_bit_offset(t, (__u32)i) / 8) + sub;
	}
	return -1;
}

/*
 * task_struct.@name's offset from the kernel's BTF @b (0: none, or @b NULL): the switch and
 * wakeup programs read the next or woken task's tid and comm with them. Read only with [offcpu]
 * on, from the sampler's one parse.
 */
static __u32 task_member_offset(const struct btf *b, const char *name)
{
	int id = b ? btf__find_by_name_kind(b, "task_struct", BTF_KIND_STRUCT) : -1;
	long off = id > 0 ? btf_field_off(b, (__u32)id, name, 0) : -1;

	return off > 0 && off < 0xffffffffL ? (__u32)off : 0;
}

/* The offsets the walk's mapping lookup reads (unwind.bpf.h: vm_area_struct and what its file
 * leads to), by their .rodata fields. */
static const struct {
	const char *type, *field;
	size_t at;
	const char *ts; /* inode's mtime before 6.11: this member of its timespec64 (inode_mtime_off) */
} vma_fields[] = {
	{ "vm_area_struct", "vm_start", offsetof(struct sampler_bpf__rodata, vma_start_off), NULL },
	{ "vm_area_struct", "vm_end", offsetof(struct sampler_bpf__rodata, vma_end_off), NULL },
	{ "vm_area_struct", "vm_pgoff", offsetof(struct sampler_bpf__rodata, vma_pgoff_off), NULL },
	{ "vm_area_struct", "vm_file", offsetof(struct sampler_bpf__rodata, vma_file_off), NULL },
	{ "file", "f_inode", offsetof(struct sampler_bpf__rodata, file_inode_off), NULL },
	{ "inode", "i_ino", offsetof(struct sampler_bpf__rodata, inode_ino_off), NULL },
	{ "inode", "i_sb", offsetof(struct sampler_bpf__rodata, inode_sb_off), NULL },
	{ "super_block", "s_dev", offsetof(struct sampler_bpf__rodata, sb_dev_off), NULL },
	/* the file's size and mtime: an inode number is another file's once the file is deleted
	 * (ember_unwind_file); mtime by these names since 6.11, else inode_mtime_off() */
	{ "inode", "i_size", offsetof(struct sampler_bpf__rodata, inode_size_off), NULL },
	{ "inode", "i_mtime_sec", offsetof(struct sampler_bpf__rodata, inode_mtime_sec_off), "tv_sec" },
	{ "inode", "i_mtime_nsec", offsetof(struct sampler_bpf__rodata, inode_mtime_nsec_off),
	  "tv_nsec" },
};

#define VMA_FIELD(rodata, i) (*(__u32 *)((char *)(rodata) + vma_fields[i].at))

/*
 * Member @member of inode's mtime before 6.11: a struct timespec64 named __i_mtime (6.7-6.10) or
 * i_mtime (before); -1 when absent.
 */
static long inode_mtime_off(const struct btf *b, __u32 inode, const char *member)
{
	int ts = btf__find_by_name_kind(b, "timespec64", BTF_KIND_STRUCT);
	long at = btf_field_off(b, inode, "__i_mtime", 0), in;

	if (at < 0)
		at = btf_field_off(b, inode, "i_mtime", 0);
	in = ts > 0 ? btf_field_off(b, (__u32)ts, member, 0) : -1;
	return at < 0 || in < 0 ? -1 : at + in;
}

/* Sets them from the kernel's BTF @b; false when one is missing (or @b is NULL). */
static bool vma_offsets(struct sampler_bpf *skel, const struct btf *b)
{
	bool ok = b != NULL;
	size_t i;

	for (i = 0; ok && i < sizeof(vma_fields) / sizeof(vma_fields[0]); i++) {
		int id = btf__find_by_name_kind(b, vma_fields[i].type, BTF_KIND_STRUCT);
		long off = id > 0 ? btf_field_off(b, (__u32)id, vma_fields[i].field, 0) : -1;

		if (off < 0 && id > 0 && vma_fields[i].ts)
			off = inode_mtime_off(b, (__u32)id, vma_fields[i].ts);
		if (off < 0)
			ok = false;
		else
			VMA_FIELD(skel->rodata, i) = (__u32)off;
	}
	return ok;
}

/* A capture's sampler: the daemon's mapping-lookup offsets, read once (vma_offsets()). */
static void vma_offsets_copy(struct sampler_bpf *dst, const struct sampler_bpf *src)
{
	for (size_t i = 0; i < sizeof(vma_fields) / sizeof(vma_fields[0]); i++)
		VMA_FIELD(dst->rodata, i) = VMA_FIELD(src->rodata, i);
}

/* task_struct.thread.fsbase's offset (the CPython reader's thread state lookup), -1 if absent. */
static int64_t task_fsbase_offset(const struct btf *b)
{
	int task = b ? btf__find_by_name_kind(b, "task_struct", BTF_KIND_STRUCT) : -1;
	int thread = b ? btf__find_by_name_kind(b, "thread_struct", BTF_KIND_STRUCT) : -1;
	long th = task > 0 ? btf_field_off(b, (__u32)task, "thread", 0) : -1;
	long fs = thread > 0 ? btf_field_off(b, (__u32)thread, "fsbase", 0) : -1;

	return th >= 0 && fs >= 0 && th + fs < 0xffffffffL ? (int64_t)(th + fs) : -1;
}

static const struct btf *kernel_btf(struct kernel_btf *k)
{
	if (!k->tried) {
		k->tried = true;
		k->b = btf__load_vmlinux_btf();
	}
	return k->b;
}

/* The offsets on_exec reads the new image's executable with: the mapping lookup's, the task's
 * mm and the mm's start_code. False when one is missing (exec records then carry no image). */
static bool exec_image_offsets(struct sampler_bpf *skel, const struct btf *b)
{
	long mm = -1, code = -1, interp;
	int id;

	/* the mapping lookup's, unless the walker's fallback has them already */
	if (!skel->rodata->vma_fallback && !vma_offsets(skel, b))
		return false;
	id = btf__find_by_name_kind(b, "task_struct", BTF_KIND_STRUCT);
	if (id > 0)
		mm = btf_field_off(b, (__u32)id, "mm", 0);
	id = btf__find_by_name_kind(b, "mm_struct", BTF_KIND_STRUCT);
	if (id > 0)
		code = btf_field_off(b, (__u32)id, "start_code", 0);
	id = btf__find_by_name_kind(b, "linux_binprm", BTF_KIND_STRUCT);
	interp = id > 0 ? btf_field_off(b, (__u32)id, "interp", 0) : -1;
	if (interp > 0)
		*(__u32 *)&skel->rodata->bprm_interp_off = (__u32)interp;
	if (mm <= 0 || code <= 0)
		return false;
	*(__u32 *)&skel->rodata->task_mm_off = (__u32)mm;
	*(__u32 *)&skel->rodata->mm_start_code_off = (__u32)code;
	return true;
}

/*
 * The address range of kernel function @name (/proc/kallsyms: its address to the next symbol's,
 * the file being in address order for the kernel's own text; *@lo = *@hi = 0 when not found or
 * addresses are hidden). Read only with [offcpu] kernel_stacks, up to the symbol after it.
 */
static void ksym_range(const char *name, __u64 *lo, __u64 *hi)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	unsigned long long a, at = 0, next = ~0ULL;
	char sym[256], type;

	*lo = *hi = 0;
	if (!f)
		return;
	while (fscanf(f, "%llx %c %255s%*[^\n]", &a, &type, sym) == 3) {
		if (!at && a && !strcmp(sym, name)) {
			at = a;
		} else if (at && a > at) {
			next = a;
			break;
		}
	}
	fclose(f);
	if (at && next != ~0ULL) {
		*lo = at;
		*hi = next;
	}
}

/* task_struct's pid, tgid and context switch counts' offsets, from the kernel's BTF @b (0: not
 * found). */
static void task_pid_offsets(const struct btf *b, __u32 *ret_pid, __u32 *ret_tgid, __u32 *ret_nvcsw,
			     __u32 *ret_nivcsw)
{
	const struct btf_type *t;
	const struct btf_member *m;
	int id, i;

	*ret_pid = *ret_tgid = *ret_nvcsw = *ret_nivcsw = 0;
	if (!b)
		return;
	id = btf__find_by_name_kind(b, "task_struct", BTF_KIND_STRUCT);
	t = id > 0 ? btf__type_by_id(b, (__u32)id) : NULL;
	for (i = 0, m = t ? btf_members(t) : NULL; t && i < btf_vlen(t); i++, m++) {
		const char *n = btf__name_by_offset(b, m->name_off);

		if (n && !strcmp(n, "pid"))
			*ret_pid = btf_member_bit_offset(t, (__u32)i) / 8;
		else if (n && !strcmp(n, "tgid"))
			*ret_tgid = btf_member_bit_offset(t, (__u32)i) / 8;
		else if (n && !strcmp(n, "nvcsw"))
			*ret_nvcsw = btf_member_bit_offset(t, (__u32)i) / 8;
		else if (n && !strcmp(n, "nivcsw"))
			*ret_nivcsw = btf_member_bit_offset(t, (__u32)i) / 8;
	}
}

/* Before load: the knobs, and the programs loaded only when on (tp_btf with BTF, else raw). */
static void offcpu_setup(struct sampler *s, const struct sampler_opts *o, struct kernel_btf *kb)
{
	const struct sampler_offcpu_opts *oc = &o->offcpu;
	bool btf = access("/sys/kernel/btf/vmlinux", R_OK) == 0;

	bpf_program__set_autoload(s->skel->progs.offcpu_switch_btf, oc->enabled && btf);
	bpf_program__set_autoload(s->skel->progs.offcpu_switch_raw, oc->enabled && !btf);
	bpf_program__set_autoload(s->skel->progs.offcpu_resume, oc->enabled);
	bpf_program__set_autoload(s->skel->progs.offcpu_waking, oc->enabled);
	bpf_program__set_autoload(s->skel->progs.offcpu_wakeup, oc->enabled);
	if (!oc->enabled)
		return;
	s->skel->rodata->offcpu_pid_off = task_member_offset(kernel_btf(kb), "pid");
	s->skel->rodata->offcpu_comm_off = task_member_offset(kernel_btf(kb), "comm");
	s->skel->rodata->offcpu_flags_off = task_member_offset(kernel_btf(kb), "flags");
	s->skel->rodata->offcpu_states = oc->states;
	s->skel->rodata->offcpu_min_ns = oc->min_ns;
	s->skel->rodata->offcpu_max_ns = oc->max_ns;
	s->skel->rodata->offcpu_quantum_ns = oc->quantum_ns ? oc->quantum_ns : 1;
	s->skel->rodata->offcpu_pid = oc->pid;
	s->skel->rodata->offcpu_cgroup = oc->cgroup_id;
	memcpy((char *)s->skel->rodata->offcpu_comm, oc->comm, sizeof(oc->comm));
	(void)bpf_map__set_max_entries(s->skel->maps.offcpu_tasks, oc->threads ? oc->threads : 1);
	s->skel->rodata->offcpu_kstack_on = oc->enabled && oc->kernel_stacks;
	if (oc->enabled && oc->kernel_stacks)
		ksym_range("__traceiter_sched_switch", (__u64 *)&s->skel->rodata->offcpu_trace_lo,
			   (__u64 *)&s->skel->rodata->offcpu_trace_hi);
	s->skel->rodata->offcpu_user_sample = oc->enabled && (oc->states & EMBER_OFFCPU_STATE_R);
	(void)bpf_map__set_max_entries(s->skel->maps.offcpu_kstacks,
				       oc->enabled && oc->kernel_stacks && oc->threads ? oc->threads : 1);
}

/* After load: the resume side first (a switch-out noted with nobody to end it costs nothing). */
static int offcpu_attach(struct sampler *s)
{
	struct bpf_program *sw;

	if (!s->o.offcpu.enabled)
		return 0;
	s->offcpu_links[1] = bpf_program__attach(s->skel->progs.offcpu_resume);
	if (!s->offcpu_links[1])
		return -errno;
	sw = bpf_program__autoload(s->skel->progs.offcpu_switch_btf)
		 ? s->skel->progs.offcpu_switch_btf
		 : s->skel->progs.offcpu_switch_raw;
	s->offcpu_links[0] = bpf_program__attach(sw);
	if (!s->offcpu_links[0])
		return -errno;
	/* sched_waking (the waker's context) before sched_wakeup (what it could not take) */
	s->offcpu_links[2] = bpf_program__attach(s->skel->progs.offcpu_waking);
	if (!s->offcpu_links[2])
		return -errno;
	s->offcpu_links[3] = bpf_program__attach(s->skel->progs.offcpu_wakeup);
	return s->offcpu_links[3] ? 0 : -errno;
}

/* Adds @p's run time and count (bpf_enable_stats) to *@ret_ns, *@ret_cnt. */
static void prog_run(struct bpf_program *p, uint64_t *ret_ns, uint64_t *ret_cnt)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);

	if (bpf_program__fd(p) >= 0 && !bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &len)) {
		*ret_ns += info.run_time_ns;
		*ret_cnt += info.run_cnt;
	}
}

int sampler__memio_stats(struct sampler *s, struct sampler_memio_stats *ret)
{
	*ret = (struct sampler_memio_stats){ .pmc = s->pmc };
	if (s->memio)
		BPF_CALLS(s, BC_COUNTERS, 1); /* its per-CPU counters */
	return memio_stats(s->skel, s->memio, ret);
}

int sampler__offcpu_stats(struct sampler *s, struct sampler_offcpu_stats *ret)
{
	struct ember_offcpu_stats *per;
	__u32 zero = 0;
	int i, k, err = 0;

	*ret = (struct sampler_offcpu_stats){ 0 };
	if (!s->offcpu_links[1])
		return 0;
	ret->attached = true;
	per = calloc((size_t)s->nr_cpus, sizeof(*per));
	if (!per)
		return -ENOMEM;
	BPF_CALLS(s, BC_COUNTERS, 4);
	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.offcpu_stats), &zero, per))
		err = -errno;
	for (i = 0; !err && i < s->nr_cpus; i++) {
		const struct ember_offcpu_stats *c = &per[i];

		ret->switches += c->switches;
		ret->no_slot += c->no_slot;
		ret->unended += c->unended;
		ret->wakeups += c->wakeups;
		ret->runq_ns += c->runq_ns;
		ret->user_preempt += c->user_preempt;
		ret->wakeup_records += c->wakeup_records;
		ret->wakeup_lost += c->wakeup_lost;
		ret->ring_bytes += c->ring_bytes;
		ret->wake_remote += c->wake_remote;
		ret->wake_late += c->wake_late;
		ret->user_preempt_ns += c->user_preempt_ns;
		ret->kstacks += c->kstacks;
		ret->kstack_err += c->kstack_err;
		ret->kstack_skip += c->kstack_skip;
		ret->kstack_miss += c->kstack_miss;
		ret->inflight_ns += c->inflight_ns;
		ret->blocked_ns_s += c->blocked_ns[EMBER_KIND_OFFCPU_S];
		ret->blocked_ns_d += c->blocked_ns[EMBER_KIND_OFFCPU_D];
		ret->blocked_ns_r += c->blocked_ns[EMBER_KIND_OFFCPU_R];
		for (k = 0; k < EMBER_KIND_NR; k++) {
			ret->periods += c->periods[k];
			ret->blocked_ns += c->blocked_ns[k];
			ret->recorded += c->recorded[k];
			ret->recorded_ns += c->recorded_ns[k];
			ret->held_ns += c->acc_in_ns[k] - c->acc_out_ns[k];
			ret->over_max += c->over_max[k];
			ret->over_max_ns += c->over_max_ns[k];
			ret->lost += c->lost[k];
			ret->lost_ns += c->lost_ns[k];
		}
	}
	free(per);
	prog_run(bpf_program__autoload(s->skel->progs.offcpu_switch_btf)
		     ? s->skel->progs.offcpu_switch_btf
		     : s->skel->progs.offcpu_switch_raw,
		 &ret->switch_run_ns, &ret->switch_run_cnt);
	prog_run(s->skel->progs.offcpu_resume, &ret->resume_run_ns, &ret->resume_run_cnt);
	prog_run(s->skel->progs.offcpu_waking, &ret->wakeup_run_ns, &ret->wakeup_run_cnt);
	prog_run(s->skel->progs.offcpu_wakeup, &ret->wakeup_run_ns, &ret->wakeup_run_cnt);
	return err;
}

/* --- drain ------------------------------------------------------------------------------ */

/*
 * What makes two samples one group: the task, its cgroup and comm, and the stacks with how they
 * ended; everything but the time and the CPU. In the record: bytes [8, 24) (cgroup, pid, tid)
 * and [28, end) (flags, errors, counts, comm, the words), contiguous in the pending buffer.
 */
#define KEY_A_OFF offsetof(struct ember_sample_rec, cgroup_id)
#define KEY_A_LEN (offsetof(struct ember_sample_rec, cpu) - KEY_A_OFF)
#define KEY_B_OFF offsetof(struct ember_sample_rec, user_flags)

static uint64_t rec_hash(const struct ember_sample_rec *r, size_t size)
{
	const char *p = (const char *)r;

	return hash_bytes(p + KEY_A_OFF, KEY_A_LEN, 0x5a) ^
	       hash_mix64(hash_bytes(p + KEY_B_OFF, size - KEY_B_OFF, 0xa5));
}

static bool rec_same(const struct ember_sample_rec *a, const struct ember_sample_rec *b,
		     size_t size)
{
	const char *x = (const char *)a, *y = (const char *)b;

	return !memcmp(x + KEY_A_OFF, y + KEY_A_OFF, KEY_A_LEN) &&
	       !memcmp(x + KEY_B_OFF, y + KEY_B_OFF, size - KEY_B_OFF);
}

/* Hands group @gi (its records' times and CPUs in s->times/s->cpus[start, start + n)) to @fn. */
static int deliver(struct sampler *s, const struct ember_sample_rec *r, size_t start, size_t n,
		   sampler_group_fn fn, void *ctx)
{
	const uint64_t *w = (const uint64_t *)(r + 1);
	struct sampler_group g = {
		.pid = r->pid,
		.tid = r->tid,
		.cgroup_id = r->cgroup_id,
		.user_flags = r->user_flags,
		.kernel_err = r->kern_err,
		.user_err = r->user_err,
		.times_ns = s->times + start,
		.cpus = s->cpus + start,
		.nr_times = n,
		.kind = r->kind,
	};

	memcpy(g.comm, r->comm, sizeof(r->comm));
	g.comm[sizeof(g.comm) - 1] = '\0';
	if (!r->user_err && r->nr_user) {
		g.user_ips = w;
		g.nr_user = r->nr_user;
		if (r->nr_py) { /* the Python words follow the native frames, root first */
			g.py_words = w + r->nr_user;
			g.nr_py = r->nr_py / EMBER_PY_WORDS;
		}
	} else if (!r->user_err) {
		g.user_err = -EFAULT;
	}
	if (!r->kern_err && r->nr_kernel) {
		g.kernel_ips = w + r->nr_user + r->nr_py;
		g.nr_kernel = r->nr_kernel;
	} else if (!r->kern_err) {
		g.kernel_err = -EFAULT;
	}
	if (r->kind == EMBER_KIND_WAKEUP) { /* whom it woke, after the frames */
		const uint64_t *x = w + r->nr_user + r->nr_py + r->nr_kernel;

		g.wakee_tid = (uint32_t)x[0];
		g.wakee_kind = (uint32_t)(x[0] >> 32);
		memcpy(g.wakee_comm, &x[1], 16);
		g.wakee_comm[15] = '\0';
		g.period_ns = x[3];
	}
	return fn(&g, ctx);
}

/*
 * Groups the pending records by hash (an open-addressing table of first records), then lays
 * out each group's times and CPUs together, in time order, and delivers them.
 */
static int deliver_pending(struct sampler *s, const struct sampler_batch *bt, sampler_group_fn fn,
			   void *ctx, size_t *ret_n)
{
	size_t n = bt->nr, cap = 16, i, j, g, ng = 0, delivered = 0, lost = 0, groups = 0, off = 0;
	uint32_t *slot = NULL, *grp = NULL, *first = NULL;
	size_t *start = NULL;
	int err = -ENOMEM;

	*ret_n = 0;
	if (!n)
		return 0;
	while (cap < 2 * n)
		cap *= 2;
	slot = calloc(cap, sizeof(*slot));	/* group + 1; 0: empty */
	grp = malloc(n * sizeof(*grp));		/* each record's group */
	first = malloc(n * sizeof(*first));	/* each group's first record */
	start = calloc(n + 1, sizeof(*start));
	if (!slot || !grp || !first || !start ||
	    array_grow((void **)&s->times, &s->times_cap, n, sizeof(*s->times), 256) ||
	    array_grow((void **)&s->cpus, &s->cpus_cap, n, sizeof(*s->cpus), 256))
		goto out;
	for (i = 0; i < n; i++) {
		const struct ember_sample_rec *r = (const void *)(bt->recs + bt->off[i]);
		size_t size = rec_size(r);

		for (j = rec_hash(r, size) & (cap - 1); slot[j]; j = (j + 1) & (cap - 1)) {
			const struct ember_sample_rec *f =
			    (const void *)(bt->recs + bt->off[first[slot[j] - 1]]);

			if (rec_size(f) == size && rec_same(f, r, size))
				break;
		}
		if (!slot[j]) {
			first[ng] = (uint32_t)i;
			slot[j] = (uint32_t)++ng;
		}
		grp[i] = slot[j] - 1;
		start[grp[i] + 1]++;
	}
	for (g = 1; g <= ng; g++)
		start[g] += start[g - 1];
	for (i = 0; i < n; i++) { /* stable: in arrival order, nearly by time already */
		const struct ember_sample_rec *r = (const void *)(bt->recs + bt->off[i]);
		size_t at = start[grp[i]]++;

		s->times[at] = r->time_ns;
		s->cpus[at] = r->cpu;
	}
	/* start[g] is now the end of group g: each by time (insertion: CPUs interleave little) */
	for (g = 0, i = 0; g < ng; i = start[g++]) {
		for (j = i + 1; j < start[g]; j++) {
			uint64_t t = s->times[j];
			uint32_t c = s->cpus[j];
			size_t m = j;

			for (; m > i && s->times[m - 1] > t; m--) {
				s->times[m] = s->times[m - 1];
				s->cpus[m] = s->cpus[m - 1];
			}
			s->times[m] = t;
			s->cpus[m] = c;
		}
	}
	err = 0;
	for (g = 0; g < ng; g++) {
		size_t b = g ? start[g - 1] : 0, cnt = start[g] - b;
		int r;

		/* a group refused is lost, counted, and said (the first error); the groups after
		 * it are delivered: one bad record used to lose the whole batch, 36,000 samples a
		 * minute beside another emberd with off-CPU events */
		r = deliver(s, (const void *)(bt->recs + bt->off[first[g]]), b, cnt, fn, ctx);
		if (r < 0) {
			if (!err)
				err = r;
			lost += cnt;
			continue;
		}
		if (((const struct ember_sample_rec *)(bt->recs + bt->off[first[g]]))->kind)
			off += cnt; /* off-CPU events: apart, so that sampled == delivered holds */
		else
			delivered += cnt;
		groups++;
	}
	*ret_n = delivered + off;
out:
	if (err == -ENOMEM && !ng) /* nothing grouped: the whole batch is lost, counted */
		lost = n;
	pthread_mutex_lock(&s->st_lock);
	s->st.lost += lost;
	s->st.groups += groups;
	s->st.delivered += delivered;
	s->st.offcpu_delivered += off;
	pthread_mutex_unlock(&s->st_lock);
	free(slot);
	free(grp);
	free(first);
	free(start);
	return err;
}

/* The BPF program's per-CPU counters summed into @sum (last_pid etc. left 0); -errno. */
_Static_assert(SAMPLER_STOP_REASONS == EMBER_STOP_NR, "stop reasons: sampler.h and bpf_shared.h");

const char *sampler_stop_name(unsigned int reason)
{
	static const char *const names[EMBER_STOP_NR] = {
		[EMBER_STOP_OTHER] = "other",		[EMBER_STOP_NO_TABLE] = "no_table",
		[EMBER_STOP_NO_ROW] = "no_row",		[EMBER_STOP_NO_RULE] = "no_rule",
		[EMBER_STOP_UNMAPPED] = "unmapped",	[EMBER_STOP_UNREADABLE] = "unreadable",
		[EMBER_STOP_DEPTH] = "depth",		[EMBER_STOP_LOOP] = "loop",
	};

	return reason < EMBER_STOP_NR ? names[reason] : "?";
}

const char *sampler_bpf_call_name(unsigned int kind)
{
	static const char *const names[SAMPLER_BPF_CALL_KINDS] = {
		[BC_COUNTERS] = "counters", [BC_ROWS] = "unwind_rows",
		[BC_LISTS] = "process_lists",
	};

	return kind < SAMPLER_BPF_CALL_KINDS ? names[kind] : "?";
}

_Static_assert(SAMPLER_WALK_COUNTS == EMBER_WALK_NR, "walk counts: sampler.h and bpf_shared.h");

const char *sampler_walk_name(unsigned int i)
{
	static const char *const names[EMBER_WALK_NR] = {
		[EMBER_WALK_FRAMES] = "frames",		[EMBER_WALK_CACHE_HITS] = "cache_hits",
		[EMBER_WALK_SEARCHES] = "row_searches",	[EMBER_WALK_HALVINGS] = "row_halvings",
		[EMBER_WALK_MAP_SEARCHES] = "map_searches", [EMBER_WALK_FP_STEPS] = "fp_steps",
		[EMBER_WALK_VMA_LOOKUPS] = "vma_lookups",	[EMBER_WALK_VMA_TABLES] = "vma_tables",
		[EMBER_WALK_VMA_STALE] = "vma_stale",
	};

	return i < EMBER_WALK_NR ? names[i] : "?";
}

/* Adds the walks stopped short, by reason, and their work, summed over CPUs, to @ret and @walk. */
static int read_walk_stops(struct sampler *s, uint64_t *ret, uint64_t *walk)
{
	struct ember_walk_stops *per = calloc((size_t)s->nr_cpus, sizeof(*per));
	__u32 zero = 0;
	int i, k, err = 0;

	if (!per)
		return -ENOMEM;
	BPF_CALLS(s, BC_COUNTERS, 1);
	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.walk_stops), &zero, per))
		err = -errno;
	for (i = 0; !err && i < s->nr_cpus; i++)
		for (k = 0; k < EMBER_STOP_NR; k++)
			ret[k] += per[i].n[k];
	for (i = 0; !err && i < s->nr_cpus; i++)
		for (k = 0; k < EMBER_WALK_NR; k++)
			walk[k] += per[i].walk[k];
	free(per);
	return err;
}

/* The programs the nesting bound refused, all CPUs (bpf/nest.bpf.h); 0 when unreadable. */
static uint64_t read_nest_refused(struct sampler *s)
{
	struct ember_nest_state *per = calloc((size_t)s->nr_cpus, sizeof(*per));
	uint64_t sum = 0;
	__u32 zero = 0;
	int i;

	if (!per)
		return 0;
	BPF_CALLS(s, BC_COUNTERS, 1);
	if (!bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.nest), &zero, per))
		for (i = 0; i < s->nr_cpus; i++)
			sum += per[i].refused;
	free(per);
	return sum;
}

static int read_bpf_stats(struct sampler *s, struct ember_bpf_stats *sum)
{
	/* zeroed: valgrind cannot see the kernel fill the per-CPU values */
	struct ember_bpf_stats *per = calloc((size_t)s->nr_cpus, sizeof(*per));
	__u32 zero = 0;
	int i, err = 0;

	*sum = (struct ember_bpf_stats){ 0 };
	if (!per)
		return -ENOMEM;
	BPF_CALLS(s, BC_COUNTERS, 1);
	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.stats), &zero, per))
		err = -errno;
	for (i = 0; !err && i < s->nr_cpus; i++) {
		sum->samples += per[i].samples;
		sum->idle += per[i].idle;
		sum->kern_efault += per[i].kern_efault;
		sum->user_efault += per[i].user_efault;
		sum->kern_other += per[i].kern_other;
		sum->user_other += per[i].user_other;
		sum->ringbuf_drops += per[i].ringbuf_drops;
		sum->ring_bytes += per[i].ring_bytes;
		sum->execs += per[i].execs;
		sum->exec_drops += per[i].exec_drops;
		sum->exits += per[i].exits;
		sum->exit_drops += per[i].exit_drops;
		sum->forks += per[i].forks;
		sum->fork_drops += per[i].fork_drops;
		sum->exec_seeds += per[i].exec_seeds;
		sum->timer_misses += per[i].timer_misses;
		sum->user_fp_walks += per[i].user_fp_walks;
		sum->user_truncated += per[i].user_truncated;
	}
	free(per);
	return err;
}

/* The slot of @pid in an open-addressed set of @cap (a power of two) pids, 0 for empty: its own,
 * or the empty one where it goes. */
static size_t pidset_slot(const uint32_t *set, size_t cap, uint32_t pid)
{
	size_t h;

	for (h = hash_mix64(pid) & (cap - 1); set[h] && set[h] != pid; h = (h + 1) & (cap - 1))
		;
	return h;
}

/*
 * For each event of @b, whether its process's exit comes later in @b (for a fork: or an exec;
 * for a new process's first sample: an exec) (@ret_gone), and for each exit whether it waits
 * until the batch's samples are named (@ret_late): samples taken after a process's exit record
 * are its own (on 6.18 the exit tracepoint fires before the kernel tears its mappings down: a
 * subshell's exit_group, ~100 us of samples with whole user stacks), and an exit handed over
 * first left them nameless (test_exec's deep shells: towers of 108 [unknown]); not when the pid
 * comes back later in @b (a fork or exec of the pid reused): then in order. Both calloc'ed by
 * the caller; a reverse pass over an open-addressed set of the pids with later events. -ENOMEM:
 * all false.
 */
static int mark_gone(const struct sampler_batch *b, bool *ret_gone, bool *ret_late)
{
	size_t cap = 64, i, h;
	uint32_t *set;
	uint8_t *what;		/* per slot: 1 an exit comes later, 2 an exec, 4 a fork */

	while (cap < 2 * b->nr_ev)
		cap *= 2;
	set = calloc(cap, sizeof(*set)); /* 0: empty (pid 0 has no events) */
	what = calloc(cap, 1);
	if (!set || !what) {
		free(set);
		free(what);
		return -ENOMEM;
	}
	for (i = b->nr_ev; i-- > 0;) {
		const struct batch_event *e = &b->ev[i];

		if (!e->pid)
			continue;
		h = pidset_slot(set, cap, e->pid);
		if (e->kind == EV_EXEC)
			ret_gone[i] = what[h] & 1;
		else if (e->kind == EV_FORK)
			ret_gone[i] = (what[h] & 3) != 0;
		else if (e->kind == EV_NEW_PID)
			ret_gone[i] = (what[h] & 2) != 0;
		else if (e->kind == EV_EXIT)
			ret_late[i] = !(what[h] & 6);
		if (e->kind == EV_EXIT || e->kind == EV_EXEC || e->kind == EV_FORK) {
			set[h] = e->pid;
			what[h] |= e->kind == EV_EXIT ? 1 : e->kind == EV_EXEC ? 2 : 4;
		}
	}
	free(set);
	free(what);
	return 0;
}

/* The longest run of events between a fork and its exit that is coalesced (a bound on the
 * backward marking: a batch of interleaved processes cannot make it quadratic). */
#define COALESCE_SPAN 4096

/*
 * Processes born and gone within @b: a fork, later the same pid's exit, and no first sample of
 * it between (no stage heard of it: its list was the BPF program's, copied at the fork and
 * deleted at the exec or exit), nor a fork of its own (a child's fork copies its parent's
 * snapshot: a shell's subshell, gone, names the samples its children took before their exec,
 * test_exec's deep shells). Their events (the fork, its execs, the exit) are marked in
 * @ret_skip (calloc'ed by the caller) and not delivered: such a process costs the worker
 * nothing. Returns how many processes, or -ENOMEM (nothing marked).
 */
static int mark_coalesced(const struct sampler_batch *b, bool *ret_skip)
{
	size_t cap = 64, i, j, h;
	uint32_t *set, *sampled;
	size_t *born;		/* per slot: the fork's index + 1; 0: none, or sampled since */
	int n = 0;

	while (cap < 2 * b->nr_ev)
		cap *= 2;
	set = calloc(cap, sizeof(*set));
	sampled = calloc(cap, sizeof(*sampled));
	born = calloc(cap, sizeof(*born));
	if (!set || !sampled || !born) {
		free(set);
		free(sampled);
		free(born);
		return -ENOMEM;
	}
	/* sampled anywhere in @b, after its exit too (a sample in its exit_group, taken after the
	 * exit record): not coalesced */
	for (i = 0; i < b->nr_ev; i++)
		if (b->ev[i].pid && b->ev[i].kind == EV_NEW_PID)
			sampled[pidset_slot(sampled, cap, b->ev[i].pid)] = b->ev[i].pid;
	for (i = 0; i < b->nr_ev; i++) {
		const struct batch_event *e = &b->ev[i];

		if (!e->pid || e->kind == EV_PYNAME)
			continue;
		h = pidset_slot(set, cap, e->pid);
		set[h] = e->pid;
		if (e->kind == EV_FORK) {
			born[h] = i + 1;
			/* its parent, if born in @b, is kept: the fork copies its snapshot */
			j = pidset_slot(set, cap, e->parent);
			if (set[j])
				born[j] = 0;
		} else if (e->kind == EV_NEW_PID) {
			born[h] = 0; /* sampled: its stages hear of it */
		} else if (e->kind == EV_EXIT && born[h] && i - (born[h] - 1) <= COALESCE_SPAN &&
			   !sampled[pidset_slot(sampled, cap, e->pid)]) {
			for (j = born[h] - 1; j <= i; j++)
				if (b->ev[j].pid == e->pid && b->ev[j].kind != EV_PYNAME)
					ret_skip[j] = true;
			born[h] = 0;
			n++;
		}
	}
	free(set);
	free(sampled);
	free(born);
	return n;
}

int sampler_batch__deliver(struct sampler *s, struct sampler_batch *b, sampler_group_fn fn,
			   void *ctx)
{
	size_t delivered = 0, i;
	bool *gone = NULL, *skip = NULL, *late = NULL;
	int err;

	if (!b)
		return 0;
	/* an exec whose exit is in the batch too: nothing to read or list */
	if (b->nr_ev && (s->exec_fn || s->fork_fn || s->pid_fn || s->exit_fn)) {
		gone = calloc(b->nr_ev, sizeof(*gone));
		late = calloc(b->nr_ev, sizeof(*late));
		if (!gone || !late || mark_gone(b, gone, late)) {
			free(gone);
			free(late);
			gone = late = NULL;
		}
	}
	if (b->nr_ev && (s->exec_fn || s->fork_fn || s->pid_fn)) {
		/* a process born and gone in the batch, never sampled: none of its events */
		skip = calloc(b->nr_ev, sizeof(*skip));
		err = skip ? mark_coalesced(b, skip) : -ENOMEM;
		if (err > 0)
			STAT_ADD(s, procs_coalesced, (uint64_t)err);
		if (err <= 0) {
			free(skip);
			skip = NULL;
		}
	}
	/* the process events first, in the order read: a new process's mappings before its
	 * samples are named */
	for (i = 0; i < b->nr_ev; i++) {
		const struct batch_event *e = &b->ev[i];

		if (skip && skip[i])
			continue;
		if (e->kind == EV_NEW_PID && s->pid_fn)
			s->pid_fn(e->pid, gone && gone[i], e->ips, e->nr_ips, s->pid_ctx);
		else if (e->kind == EV_EXEC && s->exec_fn)
			s->exec_fn(e->pid, e->time_ns, gone && gone[i], &e->img, s->exec_ctx);
		else if (e->kind == EV_EXIT && s->exit_fn && !(late && late[i]))
			s->exit_fn(e->pid, e->time_ns, false, s->exit_ctx);
		else if (e->kind == EV_FORK && s->fork_fn)
			s->fork_fn(e->parent, e->pid, e->time_ns, gone && gone[i], s->fork_ctx);
		else if (e->kind == EV_PYNAME && s->pyname_fn)
			s->pyname_fn(e->name, s->pyname_ctx);
	}
	free(gone);
	err = deliver_pending(s, b, fn, ctx, &delivered);
	/* the exits after the samples they may have followed */
	for (i = 0; late && s->exit_fn && i < b->nr_ev; i++)
		if (late[i] && !(skip && skip[i]))
			s->exit_fn(b->ev[i].pid, b->ev[i].time_ns, false, s->exit_ctx);
	free(skip);
	free(late);
	return err < 0 ? err : (int)delivered;
}

void sampler__events(struct sampler *s)
{
	uint64_t now = mono_ns();

	/* the rate of this sampler's bpf() calls, over >= 10 s */
	pthread_mutex_lock(&s->st_lock);
	if (!s->rate_t0_ns) {
		s->rate_t0_ns = now;
		s->rate_calls0 = s->st.bpf_calls;
	} else if (now - s->rate_t0_ns >= 10 * NSEC) {
		s->st.bpf_calls_per_s = (double)(s->st.bpf_calls - s->rate_calls0) * 1e9 /
					(double)(now - s->rate_t0_ns);
		s->rate_t0_ns = now;
		s->rate_calls0 = s->st.bpf_calls;
	}
	pthread_mutex_unlock(&s->st_lock);
}

int sampler__drain(struct sampler *s, sampler_group_fn fn, void *ctx)
{
	struct sampler_batch *b = sampler__take(s, false);
	int r = sampler_batch__deliver(s, b, fn, ctx);

	sampler_batch__free(s, b);
	sampler__events(s);
	return r;
}

void sampler__stats(struct sampler *s, struct sampler_stats *ret)
{
	struct bpf_prog_info info = { 0 };
	struct ember_bpf_stats bs;
	__u32 len = sizeof(info);
	int r = read_bpf_stats(s, &bs);

	pthread_mutex_lock(&s->st_lock);
	*ret = s->st;
	pthread_mutex_unlock(&s->st_lock);
	if (!r) {
		ret->samples += bs.samples;
		ret->idle += bs.idle;
		ret->kern_efault += bs.kern_efault;
		ret->user_efault += bs.user_efault;
		ret->kern_other += bs.kern_other;
		ret->user_other += bs.user_other;
		ret->ringbuf_drops += bs.ringbuf_drops;
		ret->ring_bytes += bs.ring_bytes;
		ret->lost += bs.ringbuf_drops; /* no room for the record: lost in BPF */
		ret->lost_in_bpf = bs.ringbuf_drops;
		ret->execs += bs.execs;
		ret->exec_drops += bs.exec_drops;
		ret->exits += bs.exits;
		ret->exit_drops += bs.exit_drops;
		ret->forks += bs.forks;
		ret->fork_drops += bs.fork_drops;
		ret->exec_seeds += bs.exec_seeds;
		ret->timer_misses += bs.timer_misses;
		ret->user_fp_walks += bs.user_fp_walks;
		ret->user_truncated += bs.user_truncated;
	}
	ret->nest_refused = read_nest_refused(s);
	(void)read_walk_stops(s, ret->user_stops, ret->user_walk); /* zeros on failure: bpf_calls counts it */
	BPF_CALLS(s, BC_COUNTERS, 1);
	if (!bpf_obj_get_info_by_fd(bpf_program__fd(s->prog), &info, &len)) {
		ret->prog_run_ns = info.run_time_ns;
		ret->prog_run_cnt = info.run_cnt;
		ret->prog_id = info.id;
		ret->prog_verified_insns = info.verified_insns;
	}
	/* the process events' programs: what a new process costs in the kernel */
	prog_run(s->skel->progs.on_exec, &ret->procev_run_ns, &ret->procev_run_cnt);
	prog_run(s->skel->progs.on_fork, &ret->procev_run_ns, &ret->procev_run_cnt);
	prog_run(s->skel->progs.on_exit, &ret->procev_run_ns, &ret->procev_run_cnt);
	ret->ringbuf_bytes = s->o.ringbuf_bytes;
	ret->fp_only = s->o.fp_only;
}

/* --- unwind tables ----------------------------------------------------------------------- */

uint32_t sampler__unwind_capacity(const struct sampler *s)
{
	return s->o.unwind_from ? 0 : s->o.unwind_rows;
}

/* Rows per batch write: the indices' scratch (256 KiB). */
#define ROW_BATCH 65536

/*
 * The rows written through a shared mapping of the pages they fall in (the array is
 * BPF_F_MMAPABLE), unmapped at once: no bpf() call, so no sample skipped for one (the kernel
 * skips a perf_event program while a map syscall runs on its CPU), and no per-row copy and
 * check in the kernel (a batch update of 600,000 rows was a quarter of emberd's start-up CPU on
 * the host mix). Mapped only for the write: its pages do not stay in emberd's RSS. 0, or
 * -errno for the batch path to take over.
 */
static int write_rows_mapped(struct sampler *s, int fd, uint32_t start,
			     const struct ember_unwind_prow *r, size_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), off = (size_t)start * sizeof(*r);
	size_t lo = off & ~(page - 1), hi = (off + n * sizeof(*r) + page - 1) & ~(page - 1);
	void *m;

	if (s->rows_unmappable)
		return -EOPNOTSUPP;
	m = mmap(NULL, hi - lo, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)lo);
	if (m == MAP_FAILED) {
		s->rows_unmappable = true; /* an array made without the flag: batches from now */
		return -errno;
	}
	memcpy((char *)m + (off - lo), r, n * sizeof(*r));
	(void)munmap(m, hi - lo);
	STAT_ADD(s, rows_mapped_writes, 1);
	return 0;
}

int sampler__unwind_write_rows(struct sampler *s, uint32_t start,
			       const struct ember_unwind_prow *r, size_t n)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	int fd = bpf_map__fd(s->skel->maps.unwind_rows);
	size_t done = 0, i;
	__u32 count;

	if (!sampler__unwind_capacity(s) || start > s->o.unwind_rows ||
	    n > s->o.unwind_rows - start)
		return -EINVAL;
	if (!n || !write_rows_mapped(s, fd, start, r, n))
		return 0;
	if (!s->row_keys) {
		s->row_keys = malloc(ROW_BATCH * sizeof(*s->row_keys));
		if (!s->row_keys)
			return -ENOMEM;
	}
	while (done < n) {
		count = (__u32)(n - done < ROW_BATCH ? n - done : ROW_BATCH);
		for (i = 0; i < count; i++)
			s->row_keys[i] = start + (uint32_t)(done + i);
		BPF_CALLS(s, BC_ROWS, 1);
		if (bpf_map_update_batch(fd, s->row_keys, r + done, &count, &opts))
			return -errno;
		done += count;
	}
	return 0;
}

int sampler__unwind_set_proc(struct sampler *s, uint32_t pid, const struct ember_unwind_proc *p)
{
	BPF_CALLS(s, BC_LISTS, 1);
	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.unwind_procs), &pid, p, BPF_ANY))
		return -errno;
	return 0;
}

int sampler__unwind_set_file(struct sampler *s, uint64_t dev, uint64_t ino,
			     const struct ember_unwind_file *f)
{
	struct ember_unwind_file_key k = { .ino = ino, .dev = (__u32)dev };

	if (!s->skel->rodata->vma_fallback || s->o.unwind_from)
		return 0;
	BPF_CALLS(s, BC_LISTS, 1);
	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.unwind_files), &k, f, BPF_ANY))
		return -errno;
	return 0;
}

int sampler__unwind_del_file(struct sampler *s, uint64_t dev, uint64_t ino)
{
	struct ember_unwind_file_key k = { .ino = ino, .dev = (__u32)dev };

	if (!s->skel->rodata->vma_fallback || s->o.unwind_from)
		return 0;
	BPF_CALLS(s, BC_LISTS, 1);
	if (bpf_map_delete_elem(bpf_map__fd(s->skel->maps.unwind_files), &k))
		return -errno;
	return 0;
}

int sampler__unwind_del_proc(struct sampler *s, uint32_t pid)
{
	BPF_CALLS(s, BC_LISTS, 1);
	if (bpf_map_delete_elem(bpf_map__fd(s->skel->maps.unwind_procs), &pid))
		return -errno;
	return 0;
}

/* py_procs, v8_procs or hs_procs changed: the CPU samples' runtime shortcut is stale
 * (rt_gen, sampler.bpf.c; after the change: a sample between the two looks up again next time) */
static void rt_changed(struct sampler *s)
{
	__atomic_fetch_add(&s->skel->bss->rt_gen, 1, __ATOMIC_RELEASE);
}

/* --- Python ------------------------------------------------------------------- */

int sampler__python_set_proc(struct sampler *s, uint32_t pid, const struct ember_py_proc *p)
{
	BPF_CALLS(s, BC_LISTS, 1);
	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.py_procs), &pid, p, BPF_ANY))
		return errno == ENOMEM ? -E2BIG : -errno;
	rt_changed(s);
	return 0;
}

int sampler__python_del_proc(struct sampler *s, uint32_t pid)
{
	BPF_CALLS(s, BC_LISTS, 1);
	if (bpf_map_delete_elem(bpf_map__fd(s->skel->maps.py_procs), &pid))
		return -errno;
	rt_changed(s);
	return 0;
}

void sampler__renote_pid(struct sampler *s, uint32_t pid)
{
	if (__atomic_load_n(&s->recent[pid & 1023], __ATOMIC_RELAXED) == pid)
		__atomic_store_n(&s->recent[pid & 1023], 0, __ATOMIC_RELAXED);
	BPF_CALLS(s, BC_LISTS, 1);
	(void)bpf_map_delete_elem(bpf_map__fd(s->skel->maps.seen), &pid);
	/* each CPU's "last pid" shortcut skips the lookup in "seen": make them ask again */
	__atomic_fetch_add(&s->skel->bss->exec_seq, 1, __ATOMIC_RELAXED);
}

void sampler__set_pyname_fn(struct sampler *s, sampler_pyname_fn fn, void *ctx)
{
	s->pyname_fn = fn;
	s->pyname_ctx = ctx;
}

int sampler__python_stats(struct sampler *s, struct ember_py_bpf_stats *ret)
{
	struct ember_py_bpf_stats *per = calloc((size_t)s->nr_cpus, sizeof(*per));
	__u32 zero = 0;
	int i, err = 0;

	*ret = (struct ember_py_bpf_stats){ 0 };
	if (!per)
		return -ENOMEM;
	BPF_CALLS(s, BC_COUNTERS, 1);
	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.py_stats), &zero, per))
		err = -errno;
	for (i = 0; !err && i < s->nr_cpus; i++) {
		ret->walks += per[i].walks;
		ret->no_thread += per[i].no_thread;
		ret->frames += per[i].frames;
		ret->truncated += per[i].truncated;
		ret->bad_frames += per[i].bad_frames;
		ret->searches += per[i].searches;
		ret->search_steps += per[i].search_steps;
		ret->names += per[i].names;
		ret->name_drops += per[i].name_drops;
		ret->walk_ns += per[i].walk_ns;
		for (size_t b = 0; b < EMBER_PY_HIST; b++)
			ret->walk_hist[b] += per[i].walk_hist[b];
	}
	free(per);
	return err;
}

/* --- V8 ------------------------------------------------------------------------ */

int sampler__v8_set_proc(struct sampler *s, uint32_t pid, const struct ember_v8_proc *p)
{
	STAT_ADD(s, bpf_calls, 1);
	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.v8_procs), &pid, p, BPF_ANY))
		return errno == ENOMEM || errno == E2BIG ? -E2BIG : -errno;
	rt_changed(s);
	return 0;
}

int sampler__v8_del_proc(struct sampler *s, uint32_t pid)
{
	STAT_ADD(s, bpf_calls, 1);
	if (bpf_map_delete_elem(bpf_map__fd(s->skel->maps.v8_procs), &pid))
		return -errno;
	rt_changed(s);
	return 0;
}

int sampler__v8_stats(struct sampler *s, struct ember_v8_bpf_stats *ret)
{
	struct ember_v8_bpf_stats *per = calloc((size_t)s->nr_cpus, sizeof(*per));
	__u32 zero = 0;
	int i, err = 0;

	*ret = (struct ember_v8_bpf_stats){ 0 };
	if (!per)
		return -ENOMEM;
	STAT_ADD(s, bpf_calls, 1);
	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.v8_stats), &zero, per))
		err = -errno;
	for (i = 0; !err && i < s->nr_cpus; i++) {
		ret->checks += per[i].checks;
		ret->frames += per[i].frames;
		ret->markers += per[i].markers;
		ret->not_js += per[i].not_js;
		ret->no_room += per[i].no_room;
		ret->walk_ns += per[i].walk_ns;
		ret->walks += per[i].walks;
	}
	free(per);
	return err;
}

/* --- HotSpot ------------------------------------------------------------------- */

int64_t sampler__task_fsbase_off(const struct sampler *s)
{
	return s ? s->task_fsbase_off : -1;
}

bool sampler__hs_walk_on(const struct sampler *s)
{
	return s && s->skel && s->skel->rodata->hs_walk_on;
}

int sampler__hs_walk_err(const struct sampler *s)
{
	return s ? s->hs_walk_err : 0;
}

int sampler__hs_set_proc(struct sampler *s, uint32_t pid, const struct ember_hs_proc *p)
{
	STAT_ADD(s, bpf_calls, 1);
	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.hs_procs), &pid, p, BPF_ANY))
		return errno == ENOMEM || errno == E2BIG ? -E2BIG : -errno;
	rt_changed(s);
	return 0;
}

int sampler__hs_stats(struct sampler *s, struct ember_hs_bpf_stats *ret)
{
	struct ember_hs_bpf_stats *per = calloc((size_t)s->nr_cpus, sizeof(*per));
	__u32 zero = 0;
	int i, err = 0;

	*ret = (struct ember_hs_bpf_stats){ 0 };
	if (!per)
		return -ENOMEM;
	STAT_ADD(s, bpf_calls, 1);
	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.hs_stats), &zero, per))
		err = -errno;
	for (i = 0; !err && i < s->nr_cpus; i++) {
		ret->interp += per[i].interp;
		ret->compiled += per[i].compiled;
		ret->stubs += per[i].stubs;
		ret->no_blob += per[i].no_blob;
		ret->bad += per[i].bad;
		ret->walks += per[i].walks;
		ret->walk_ns += per[i].walk_ns;
	}
	free(per);
	return err;
}
