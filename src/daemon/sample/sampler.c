// SPDX-License-Identifier: MIT
#include "ember/daemon/sample/sampler.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <linux/types.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "ember/daemon/sample/bpf_shared.h"
#include "ember/core/base/hash.h"
#include "ember/core/base/array.h"
#include "ember/core/base/clock.h"
#include "ember/core/base/errbuf.h"
#include "sampler.skel.h"

#define NSEC 1000000000ULL

struct vec_rec {
	struct ember_time_rec *v;
	size_t n, cap;
};

struct sampler {
	struct sampler_opts o;
	struct sampler_bpf *skel;
	struct ring_buffer *rb;
	int nr_cpus;			/* possible CPUs */
	struct bpf_link **links;	/* per possible CPU; NULL: not attached */
	bool hw;			/* using the hardware cycles event */
	bool stopped;			/* sampler__stop(): no re-attach */
	uint64_t last_cpu_check_ns;

	struct vec_rec pending[2];	/* time records per generation, not yet joined */

	/* drain scratch */
	struct ember_key *keys;
	uint64_t *vals;
	/* per kind (kernel, user) and stack-map generation: the stacks read from it, kept until
	 * the generation is cleared */
	struct stack_cache {
		int32_t *slot;		/* per bucket: -1 not read, else offset in ips */
		uint32_t *touched;	/* buckets set in slot */
		size_t nr_touched;
		uint64_t *ips;		/* the stacks: length | flags << 32, then the addresses */
		size_t ips_len, ips_cap;
	} sc[2][2];
	unsigned int sgen_ticks;	/* drains since the active stack generation began */
	size_t sgen_seen;		/* its stacks read as of the last drain */
	int sgen_clear;			/* the other stack generation, to clear next drain; -1 */
	uint64_t last_eexist;		/* stack map collisions seen by the last drain */
	uint64_t *times;
	uint32_t *cpus;
	size_t times_cap, cpus_cap;
	bool no_batch;			/* lookup_and_delete_batch unsupported: iterate */
	int online_fd;			/* /sys/devices/system/cpu/online, kept open */

	sampler_pid_fn pid_fn;
	void *pid_ctx;
	uint32_t recent[1024];		/* direct-mapped cache of pids passed to pid_fn */
	sampler_exec_fn exec_fn;
	void *exec_ctx;
	struct bpf_link *exec_link;	/* sched_process_exec; NULL: not attached */
	sampler_exec_fn exit_fn;
	void *exit_ctx;
	struct bpf_link *exit_link;	/* sched_process_exit; NULL: not attached */
	int run_stats_fd;		/* bpf_enable_stats(): run time counted while open; -1 */
	uint32_t *row_keys;		/* scratch: indices for batch writes of rows */
	sampler_pyname_fn pyname_fn; /* Python code objects' names (issue 21) */
	void *pyname_ctx;

	uint64_t newest_ns;		/* the newest sample record read (CLOCK_MONOTONIC) */
	struct sampler_stats st;
};

/* The least power of 2 >= @need, within [@lo, @hi] (powers of 2). */
static uint32_t pow2_within(uint64_t need, uint32_t lo, uint32_t hi)
{
	uint32_t n = lo;

	while (n < need && n < hi)
		n <<= 1;
	return n;
}

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
	link = bpf_program__attach_perf_event(s->skel->progs.do_sample, fd);
	if (!link) {
		err = -errno;
		close(fd); /* the link owns fd only on success */
		return err;
	}
	s->links[cpu] = link;
	s->st.cpu_attaches++;
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
			s->st.cpu_detaches++;
		}
		n += s->links[cpu] != NULL;
	}
	free(mask);
	s->st.cpus_attached = (uint64_t)n;
	s->last_cpu_check_ns = mono_ns();
	return n;
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct sampler *s = ctx;
	const struct ember_time_rec *r = data;
	struct vec_rec *v;

	if (size == sizeof(struct ember_exec_rec)) {
		const struct ember_exec_rec *x = data;

		/* the next sample of the new image (or of a new process with the pid) is a new
		 * process's: call pid_fn again */
		if (s->recent[x->pid & 1023] == x->pid)
			s->recent[x->pid & 1023] = 0;
		if (x->kind == EMBER_REC_EXIT) {
			if (s->exit_fn)
				s->exit_fn(x->pid, x->time_ns, s->exit_ctx);
		} else if (s->exec_fn) {
			s->exec_fn(x->pid, x->time_ns, s->exec_ctx);
		}
		return 0;
	}
	if (size < sizeof(*r))
		return 0;
	if (r->time_ns > s->newest_ns)
		s->newest_ns = r->time_ns;
	v = &s->pending[r->gen & 1];
	if (array_grow((void **)&v->v, &v->cap, v->n + 1, sizeof(*v->v), 256))
		return 0; /* its count still arrives via the counts map, then untimed */
	v->v[v->n++] = *r;
	/* a sample without a user stack (kernel thread, or in the kernel on behalf of no user
	 * context) needs no mappings: its process is captured at its first sample with one */
	if (s->pid_fn && r->pid && r->user_stack_id != -EFAULT &&
	    s->recent[r->pid & 1023] != r->pid) {
		s->recent[r->pid & 1023] = r->pid;
		s->pid_fn(r->pid, s->pid_ctx);
	}
	return 0;
}

/* A code object's names (py_names ring buffer). */
static int on_pyname(void *ctx, void *data, size_t size)
{
	struct sampler *s = ctx;

	if (size >= sizeof(struct ember_py_name_rec) && s->pyname_fn)
		s->pyname_fn(data, s->pyname_ctx);
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
}

int sampler__epoll_fd(struct sampler *s)
{
	return ring_buffer__epoll_fd(s->rb);
}

uint64_t sampler__newest_ns(const struct sampler *s, uint64_t *ret_cpus)
{
	*ret_cpus = s->st.cpus_attached;
	return s->newest_ns;
}

int sampler__poll(struct sampler *s)
{
	return ring_buffer__consume(s->rb);
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

void sampler__set_exit_fn(struct sampler *s, sampler_exec_fn fn, void *ctx)
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
	if (s->run_stats_fd >= 0)
		close(s->run_stats_fd);
	if (s->online_fd >= 0)
		close(s->online_fd);
	ring_buffer__free(s->rb);
	free(s->row_keys);
	sampler_bpf__destroy(s->skel);
	free(s->links);
	free(s->pending[0].v);
	free(s->pending[1].v);
	free(s->keys);
	free(s->vals);
	for (size_t k = 0; k < 2; k++) {
		for (size_t g = 0; g < 2; g++) {
			free(s->sc[k][g].slot);
			free(s->sc[k][g].touched);
			free(s->sc[k][g].ips);
		}
	}
	free(s->times);
	free(s->cpus);
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

int sampler__new(const struct sampler_opts *o, struct sampler **ret_s, char *errbuf,
		 size_t errlen)
{
	struct sampler *s;
	bool *mask = NULL;
	uint64_t tick_samples;
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
	s->run_stats_fd = -1;
	s->online_fd = -1;
	err = libbpf_num_possible_cpus();
	if (err <= 0) {
		(void)errbuf_set(errbuf, errlen, 0, "cannot count the possible CPUs: %s",
				 strerror(-err));
		goto err_out;
	}
	s->nr_cpus = err;
	tick_samples = (uint64_t)s->nr_cpus * o->freq_hz * (o->tick_ms ? o->tick_ms : 1000) / 1000;
	/*
	 * Automatic counts maps: a generation holds at most one tick's samples; twice that (a late
	 * tick), 1024..1M. Not larger: draining scans every bucket of the map each tick.
	 */
	if (!s->o.counts_map_entries)
		s->o.counts_map_entries = pow2_within(2 * tick_samples, 1024, 1u << 20);
	/*
	 * Automatic stack maps: a stack whose bucket holds another is lost (-EEXIST, counted), so
	 * they are kept mostly empty: 16 buckets per sample of a tick, and a generation flips when
	 * 1/64 of it is used (stack_gen_tick). 16384 (BCC's profile's size; 4096 lost ~5% of the
	 * new stacks of exec'ed processes in test_exec) ..32768: 32 MiB of kernel memory per
	 * generation at most; on hosts of more than ~20 CPUs, set it or shorten sampling.tick_ms if
	 * the collision counters grow.
	 */
	if (!s->o.stack_map_entries)
		s->o.stack_map_entries = pow2_within(16 * tick_samples, 16384, 1u << 15);
	s->links = calloc((size_t)s->nr_cpus, sizeof(*s->links));
	mask = calloc((size_t)s->nr_cpus, sizeof(*mask));
	s->keys = calloc(s->o.counts_map_entries, sizeof(*s->keys));
	s->vals = calloc(s->o.counts_map_entries, sizeof(*s->vals));
	bool nomem = false;

	for (size_t k = 0; k < 2; k++) { /* kernel and user stacks, two generations each */
		for (size_t g = 0; g < 2; g++) {
			struct stack_cache *c = &s->sc[k][g];

			c->slot = malloc(s->o.stack_map_entries * sizeof(*c->slot));
			c->touched = malloc(s->o.stack_map_entries * sizeof(*c->touched));
			if (c->slot)
				memset(c->slot, 0xff, s->o.stack_map_entries * sizeof(*c->slot));
			nomem |= !c->slot || !c->touched;
		}
	}
	s->sgen_clear = -1;
	if (!s->links || !mask || !s->keys || !s->vals || nomem) {
		err = -ENOMEM;
		(void)errbuf_set(errbuf, errlen, 0, "out of memory");
		goto err_out;
	}

	s->skel = sampler_bpf__open();
	if (!s->skel) {
		err = -errno;
		(void)errbuf_set(errbuf, errlen, 0, "cannot open the BPF skeleton: %s",
				 strerror(-err));
		goto err_out;
	}
	s->skel->rodata->include_idle = o->include_idle;
	s->skel->rodata->idle_stacks = o->idle_stacks;
	s->skel->rodata->target_pid = o->pid;
	s->skel->rodata->ring_half = o->ringbuf_bytes / 2;
	s->skel->rodata->ustack_mask = s->o.stack_map_entries - 1;
	s->skel->rodata->nr_rows = s->o.unwind_rows ? s->o.unwind_rows : 1;
	s->skel->rodata->py_lines = o->python_lines;
	if ((err = bpf_map__set_max_entries(s->skel->maps.stacks0, s->o.stack_map_entries)) ||
	    (err = bpf_map__set_max_entries(s->skel->maps.stacks1, s->o.stack_map_entries)) ||
	    (err = bpf_map__set_max_entries(s->skel->maps.ustacks0, s->o.stack_map_entries)) ||
	    (err = bpf_map__set_max_entries(s->skel->maps.ustacks1, s->o.stack_map_entries)) ||
	    (err = bpf_map__set_max_entries(s->skel->maps.unwind_rows,
					    s->o.unwind_rows ? s->o.unwind_rows : 1)) ||
	    (err = bpf_map__set_max_entries(s->skel->maps.unwind_procs,
					    s->o.unwind_procs ? s->o.unwind_procs : 1)) ||
	    (err = bpf_map__set_max_entries(s->skel->maps.counts0, s->o.counts_map_entries)) ||
	    (err = bpf_map__set_max_entries(s->skel->maps.counts1, s->o.counts_map_entries)) ||
	    (err = bpf_map__set_max_entries(s->skel->maps.times, o->ringbuf_bytes)) ||
	    (err = bpf_map__set_max_entries(s->skel->maps.py_procs,
					    o->python_procs ? o->python_procs : 4096))) {
		(void)errbuf_set(errbuf, errlen, 0, "cannot size the BPF maps: %s", strerror(-err));
		goto err_out;
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
					     bpf_map__fd(o->unwind_from->skel->maps.py_known)))) {
			(void)errbuf_set(errbuf, errlen, 0, "cannot share the unwind tables: %s",
					 strerror(-err));
			goto err_out;
		}
		s->skel->rodata->nr_rows = o->unwind_from->skel->rodata->nr_rows;
		/* Python: the daemon's processes, names already sent, and where they go */
		s->skel->rodata->py_lines = o->unwind_from->skel->rodata->py_lines;
		s->pyname_fn = o->unwind_from->pyname_fn;
		s->pyname_ctx = o->unwind_from->pyname_ctx;
	}
	err = sampler_bpf__load(s->skel);
	if (err) {
		explain_load(err, errbuf, errlen);
		goto err_out;
	}
	s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.times), on_record, s, NULL);
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
	s->st.exec_notify = s->exec_link != NULL;
	/* exit notification: likewise, exits then wait for the periodic checks (exit_notify) */
	s->exit_link = bpf_program__attach(s->skel->progs.on_exit);
	s->st.exit_notify = s->exit_link != NULL;
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
	free(mask);
	*ret_s = s;
	return 0;

err_out:
	free(mask);
	sampler__free(s);
	return err < 0 ? err : -EINVAL;
}

/* --- drain ------------------------------------------------------------------------------ */

static int drain_counts(struct sampler *s, int fd, size_t *ret_n)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	size_t n = 0, cap = s->o.counts_map_entries;
	__u32 out_batch = 0, in_batch = 0, count;
	bool first = true;
	int err;

	while (!s->no_batch && n < cap) {
		count = (__u32)(cap - n);
		err = bpf_map_lookup_and_delete_batch(fd, first ? NULL : &in_batch, &out_batch,
						      s->keys + n, s->vals + n, &count, &opts);
		if (err)
			err = -errno;
		n += count;
		if (err == -ENOENT)
			break;
		if (err == -EINVAL || err == -EOPNOTSUPP || err == -524 /* ENOTSUPP */) {
			if (first)
				s->no_batch = true;
			else
				return err;
			break;
		}
		if (err)
			return err;
		in_batch = out_batch;
		first = false;
	}
	if (s->no_batch) {
		struct ember_key k, next;
		bool has = false;

		/* each key is deleted after it is read, so the first key is always the next one */
		while (n < cap && !bpf_map_get_next_key(fd, has ? &k : NULL, &next)) {
			if (!bpf_map_lookup_elem(fd, &next, &s->vals[n])) {
				s->keys[n++] = next;
				(void)bpf_map_delete_elem(fd, &next);
				has = false;
			} else {
				k = next;
				has = true;
			}
		}
	}
	*ret_n = n;
	return 0;
}

/*
 * The stack of @id (a key's or record's, generation in its high bits), kernel or @user: read
 * from its generation's map the first time, then from the cache until the generation is cleared
 * (a bucket, once filled, keeps its stack: another stack hashing there gets -EEXIST). A user
 * stack's walk flags (EMBER_USTACK_*) in *@ret_flags.
 */
static int stack_of(struct sampler *s, int32_t id, bool user, const uint64_t **ret, size_t *ret_n,
		    uint32_t *ret_flags)
{
	struct ember_ustack us;
	struct stack_cache *c;
	struct bpf_map *map;
	uint64_t *buf = (uint64_t *)us.ips;
	uint32_t b, g, flags = 0;
	int32_t slot;
	size_t n, npy = 0;

	if (id < 0)
		return id;
	g = ((uint32_t)id >> EMBER_STACK_GEN_SHIFT) & 1;
	c = &s->sc[user][g];
	b = (uint32_t)id & EMBER_STACK_ID_MASK;
	if (b >= s->o.stack_map_entries)
		return -ENOENT;
	slot = c->slot[b];
	if (slot < 0) {
		if (user)
			map = g ? s->skel->maps.ustacks1 : s->skel->maps.ustacks0;
		else
			map = g ? s->skel->maps.stacks1 : s->skel->maps.stacks0;
		if (bpf_map_lookup_elem(bpf_map__fd(map), &b, user ? (void *)&us : (void *)buf)) {
			/* not cached: a later sample may fill the bucket (none should be empty) */
			s->st.stack_missing++;
			return -ENOENT;
		}
		if (user) {
			n = us.nr < EMBER_MAX_STACK_DEPTH ? us.nr : EMBER_MAX_STACK_DEPTH;
			flags = us.flags;
			/* issue 21: Python frames at the top of ips, kept after the native ones */
			npy = EMBER_PY_WORDS * EMBER_USTACK_PY_NR(flags);
			if (npy > EMBER_MAX_STACK_DEPTH - n) {
				npy = 0;
				flags &= ~(0xffu << EMBER_USTACK_PY_NR_SHIFT);
			}
		} else {
			for (n = 0; n < EMBER_MAX_STACK_DEPTH && buf[n]; n++)
				;
		}
		if (c->ips_len + n + npy + 1 > INT32_MAX ||
		    array_grow((void **)&c->ips, &c->ips_cap, c->ips_len + n + npy + 1,
			       sizeof(*c->ips), 256))
			return -ENOMEM;
		c->ips[c->ips_len] = n | (uint64_t)flags << 32;
		memcpy(c->ips + c->ips_len + 1, buf, n * sizeof(*buf));
		memcpy(c->ips + c->ips_len + 1 + n, buf + EMBER_MAX_STACK_DEPTH - npy,
		       npy * sizeof(*buf));
		slot = (int32_t)c->ips_len;
		c->ips_len += n + npy + 1;
		c->slot[b] = slot;
		c->touched[c->nr_touched++] = b;
	}
	*ret_n = (size_t)(uint32_t)c->ips[slot];
	*ret_flags = (uint32_t)(c->ips[slot] >> 32);
	*ret = c->ips + slot + 1;
	return 0;
}

/* Empties stack-map generation @g and its cache: every bucket read, then any left (stacks of
 * samples whose count and record were both lost, or of a failed drain). */
static void stack_gen_clear(struct sampler *s, int g)
{
	uint32_t next, left;
	size_t j, k;
	int fd;

	for (k = 0; k < 2; k++) {
		struct stack_cache *c = &s->sc[k][g];
		struct bpf_map *map = k ? (g ? s->skel->maps.ustacks1 : s->skel->maps.ustacks0)
					: (g ? s->skel->maps.stacks1 : s->skel->maps.stacks0);

		fd = bpf_map__fd(map);
		for (j = 0; j < c->nr_touched; j++) {
			(void)bpf_map_delete_elem(fd, &c->touched[j]);
			c->slot[c->touched[j]] = -1;
		}
		c->nr_touched = 0;
		c->ips_len = 0;
		left = s->o.stack_map_entries;
		while (left-- && !bpf_map_get_next_key(fd, NULL, &next))
			if (bpf_map_delete_elem(fd, &next))
				break;
	}
}

static int tuple_cmp(uint32_t pa, uint32_t ta, int32_t ka, int32_t ua, uint32_t pb, uint32_t tb,
		     int32_t kb, int32_t ub)
{
	if (pa != pb)
		return (pa > pb) - (pa < pb);
	if (ta != tb)
		return (ta > tb) - (ta < tb);
	if (ka != kb)
		return (ka > kb) - (ka < kb);
	return (ua > ub) - (ua < ub);
}

static int rec_cmp(const void *a, const void *b)
{
	const struct ember_time_rec *x = a, *y = b;
	int c = tuple_cmp(x->pid, x->tid, x->kern_stack_id, x->user_stack_id, y->pid, y->tid,
			  y->kern_stack_id, y->user_stack_id);

	return c ? c : (x->time_ns > y->time_ns) - (x->time_ns < y->time_ns);
}

struct keyval {
	struct ember_key k;
	uint64_t v;
};

static int kv_cmp(const void *a, const void *b)
{
	const struct keyval *x = a, *y = b;
	int c = tuple_cmp(x->k.pid, x->k.tid, x->k.kern_stack_id, x->k.user_stack_id, y->k.pid,
			  y->k.tid, y->k.kern_stack_id, y->k.user_stack_id);

	return c ? c : memcmp(x->k.comm, y->k.comm, sizeof(x->k.comm));
}

static uint64_t tuple_hash(uint32_t pid, uint32_t tid, int32_t kid, int32_t uid)
{
	return hash_mix64(((uint64_t)pid << 32 | tid) ^
			  hash_mix64((uint64_t)(uint32_t)kid << 32 | (uint32_t)uid));
}

/*
 * Puts the time records in the order of the sorted keys @kv, for the merge join: the records
 * of each key's (pid, tid, stacks) together, in @kv's order, each run by time; the records of
 * tuples no key has (their counts were lost) last, by tuple and time. A hash of the keys'
 * tuples and a counting sort: one qsort of all records with a four-field comparator was a third
 * of a drain's instructions. 0 or -ENOMEM (records left as they were).
 */
static int order_records(struct vec_rec *pend, const struct keyval *kv, size_t nkeys)
{
	size_t cap = 16, i, j, k, n = pend->n, *start = NULL;
	uint32_t *slot = NULL, *rank = NULL;
	struct ember_time_rec *out = NULL;
	int err = -ENOMEM;

	if (!n)
		return 0;
	while (cap < 2 * nkeys)
		cap *= 2;
	slot = calloc(cap, sizeof(*slot)); /* index of a tuple's first key + 1; 0: empty */
	rank = malloc(n * sizeof(*rank));
	start = calloc(nkeys + 2, sizeof(*start));
	out = malloc(n * sizeof(*out));
	if (!slot || !rank || !start || !out)
		goto out;
	for (i = 0; i < nkeys; i++) {
		const struct ember_key *x = &kv[i].k;

		if (i && !tuple_cmp(x->pid, x->tid, x->kern_stack_id, x->user_stack_id,
				    kv[i - 1].k.pid, kv[i - 1].k.tid, kv[i - 1].k.kern_stack_id,
				    kv[i - 1].k.user_stack_id))
			continue; /* the same tuple with another comm: its first key stands for it */
		j = tuple_hash(x->pid, x->tid, x->kern_stack_id, x->user_stack_id) & (cap - 1);
		while (slot[j])
			j = (j + 1) & (cap - 1);
		slot[j] = (uint32_t)i + 1;
	}
	for (i = 0; i < n; i++) {
		const struct ember_time_rec *r = &pend->v[i];

		rank[i] = (uint32_t)nkeys; /* no key: last */
		j = tuple_hash(r->pid, r->tid, r->kern_stack_id, r->user_stack_id) & (cap - 1);
		for (; slot[j]; j = (j + 1) & (cap - 1)) {
			const struct ember_key *x = &kv[slot[j] - 1].k;

			if (!tuple_cmp(x->pid, x->tid, x->kern_stack_id, x->user_stack_id, r->pid,
				       r->tid, r->kern_stack_id, r->user_stack_id)) {
				rank[i] = slot[j] - 1;
				break;
			}
		}
		start[rank[i] + 1]++;
	}
	for (k = 1; k <= nkeys + 1; k++)
		start[k] += start[k - 1];
	for (i = 0; i < n; i++) /* stable: each run in arrival order, nearly by time already */
		out[start[rank[i]]++] = pend->v[i];
	/* start[k] is now the end of run k */
	for (k = 0, i = 0; k < nkeys; i = start[k++]) {
		for (j = i + 1; j < start[k]; j++) {
			struct ember_time_rec t = out[j];
			size_t m = j;

			for (; m > i && out[m - 1].time_ns > t.time_ns; m--)
				out[m] = out[m - 1];
			out[m] = t;
		}
	}
	if (n > i)
		qsort(out + i, n - i, sizeof(*out), rec_cmp);
	free(pend->v);
	pend->v = out;
	pend->cap = n;
	out = NULL;
	err = 0;
out:
	free(slot);
	free(rank);
	free(start);
	free(out);
	return err;
}

static void comm_of(uint32_t pid, uint32_t tid, char *comm)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, comm, 15) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0) {
		strcpy(comm, "[unknown]");
		return;
	}
	comm[n] = '\0';
	if (n && comm[n - 1] == '\n')
		comm[n - 1] = '\0';
}

/* Fills @g's stacks from the stack ids. */
static int fill_stacks(struct sampler *s, struct sampler_group *g, int32_t kid, int32_t uid)
{
	uint32_t kflags;
	int r;

	g->kernel_ips = g->user_ips = NULL;
	g->nr_kernel = g->nr_user = 0;
	g->user_flags = 0;
	r = stack_of(s, kid, false, &g->kernel_ips, &g->nr_kernel, &kflags);
	if (r == -ENOMEM)
		return r;
	g->kernel_err = r;
	if (r)
		g->kernel_ips = NULL, g->nr_kernel = 0;
	r = stack_of(s, uid, true, &g->user_ips, &g->nr_user, &g->user_flags);
	if (r == -ENOMEM)
		return r;
	g->user_err = r;
	if (r)
		g->user_ips = NULL, g->nr_user = 0;
	/* issue 21: the Python frames follow the native ones (stack_of()) */
	g->py_words = NULL;
	g->nr_py = 0;
	if (!r && EMBER_USTACK_PY_NR(g->user_flags)) {
		g->py_words = g->user_ips + g->nr_user;
		g->nr_py = EMBER_USTACK_PY_NR(g->user_flags);
	}
	return 0;
}

/* The BPF program's per-CPU counters summed into @sum (last_pid etc. left 0); -errno. */
static int read_bpf_stats(struct sampler *s, struct ember_bpf_stats *sum)
{
	/* zeroed: valgrind cannot see the kernel fill the per-CPU values */
	struct ember_bpf_stats *per = calloc((size_t)s->nr_cpus, sizeof(*per));
	__u32 zero = 0;
	int i, err = 0;

	*sum = (struct ember_bpf_stats){ 0 };
	if (!per)
		return -ENOMEM;
	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.stats), &zero, per))
		err = -errno;
	for (i = 0; !err && i < s->nr_cpus; i++) {
		sum->samples += per[i].samples;
		sum->idle += per[i].idle;
		sum->kern_eexist += per[i].kern_eexist;
		sum->user_eexist += per[i].user_eexist;
		sum->kern_efault += per[i].kern_efault;
		sum->user_efault += per[i].user_efault;
		sum->kern_other += per[i].kern_other;
		sum->user_other += per[i].user_other;
		sum->counts_full += per[i].counts_full;
		sum->ringbuf_drops += per[i].ringbuf_drops;
		sum->both_full += per[i].both_full;
		sum->execs += per[i].execs;
		sum->exec_drops += per[i].exec_drops;
		sum->exits += per[i].exits;
		sum->exit_drops += per[i].exit_drops;
		sum->user_fp_walks += per[i].user_fp_walks;
		sum->user_truncated += per[i].user_truncated;
	}
	free(per);
	return err;
}

/*
 * After a drain: clears the stack generation flipped away from last drain (every sample that
 * could name it is drained now), and flips the active one when it has filled 1/64 of its
 * buckets or the last tick brought 1/512 of them new (a new stack whose bucket is taken is
 * lost: the share lost is the share used, kept as low as with a generation per tick), when
 * collisions happened (stacks no drain has read, left by lost samples, may fill it), after a
 * failed drain, or after a minute.
 */
static void stack_gen_tick(struct sampler *s, bool failed)
{
	uint32_t active = __atomic_load_n(&s->skel->bss->sgen, __ATOMIC_RELAXED) & 1;
	struct ember_bpf_stats bs;
	uint64_t eexist = 0;
	size_t touched, fresh;
	bool collided;

	if (s->sgen_clear >= 0) {
		stack_gen_clear(s, s->sgen_clear);
		s->sgen_clear = -1;
	}
	if (!read_bpf_stats(s, &bs))
		eexist = bs.kern_eexist + bs.user_eexist;
	collided = eexist != s->last_eexist;
	s->last_eexist = eexist;
	touched = s->sc[0][active].nr_touched + s->sc[1][active].nr_touched;
	fresh = touched - s->sgen_seen;
	s->sgen_seen = touched;
	s->sgen_ticks++;
	/* many new stacks in a tick (short-lived processes): a generation per tick, as if ids
	 * were not kept; few: keep it until 1/64 of the map is used */
	if (touched * 64 < s->o.stack_map_entries && fresh * 512 < s->o.stack_map_entries &&
	    !collided && !failed && s->sgen_ticks < 60)
		return;
	__atomic_store_n(&s->skel->bss->sgen, active ^ 1, __ATOMIC_RELEASE);
	s->sgen_clear = (int)active;
	s->sgen_ticks = 0;
	s->sgen_seen = 0; /* the other generation, cleared */
	s->st.stack_gen_flips++;
}

int sampler__drain(struct sampler *s, sampler_group_fn fn, void *ctx)
{
	uint64_t t0 = mono_ns();
	uint32_t active = __atomic_load_n(&s->skel->bss->gen, __ATOMIC_RELAXED) & 1;
	uint32_t d = active ^ 1;
	int cfd = bpf_map__fd(d ? s->skel->maps.counts1 : s->skel->maps.counts0);
	struct vec_rec *pend = &s->pending[d];
	struct keyval *kv = NULL;
	size_t nkeys = 0, i, ri = 0;
	int err = 0, delivered = 0;
	bool failed = false;

	if (!s->stopped && t0 - s->last_cpu_check_ns >= NSEC)
		(void)sampler__update_cpus(s); /* errors: retried next second */
	(void)ring_buffer__consume(s->rb);

	err = drain_counts(s, cfd, &nkeys);
	if (err)
		goto flip;
	kv = malloc((nkeys + 1) * sizeof(*kv));
	if (!kv) {
		err = -ENOMEM;
		goto flip;
	}
	for (i = 0; i < nkeys; i++)
		kv[i] = (struct keyval){ .k = s->keys[i], .v = s->vals[i] };
	if (nkeys)
		qsort(kv, nkeys, sizeof(*kv), kv_cmp);
	if (order_records(pend, kv, nkeys) && pend->n)
		qsort(pend->v, pend->n, sizeof(*pend->v), rec_cmp); /* no memory: the slow way */

	/* merge join: keys and records both sorted by (pid, tid, kid, uid) */
	for (i = 0; i < nkeys || ri < pend->n;) {
		struct sampler_group g = { 0 };
		int c;
		size_t want, nt = 0;
		int32_t kid, uid;

		if (i < nkeys && ri < pend->n)
			c = tuple_cmp(kv[i].k.pid, kv[i].k.tid, kv[i].k.kern_stack_id,
				      kv[i].k.user_stack_id, pend->v[ri].pid, pend->v[ri].tid,
				      pend->v[ri].kern_stack_id, pend->v[ri].user_stack_id);
		else
			c = i < nkeys ? -1 : 1;
		if (c <= 0) {
			/* a key and its (up to count) records */
			g.pid = kv[i].k.pid;
			g.tid = kv[i].k.tid;
			memcpy(g.comm, kv[i].k.comm, sizeof(kv[i].k.comm));
			g.comm[15] = '\0';
			kid = kv[i].k.kern_stack_id;
			uid = kv[i].k.user_stack_id;
			want = kv[i].v;
			i++;
		} else {
			/* records without a count (counts map was full) */
			g.pid = pend->v[ri].pid;
			g.tid = pend->v[ri].tid;
			comm_of(g.pid, g.tid, g.comm);
			kid = pend->v[ri].kern_stack_id;
			uid = pend->v[ri].user_stack_id;
			want = SIZE_MAX;
		}
		if (array_grow((void **)&s->times, &s->times_cap, pend->n + 1, sizeof(*s->times),
			       256) ||
		    array_grow((void **)&s->cpus, &s->cpus_cap, pend->n + 1, sizeof(*s->cpus),
			       256)) {
			err = -ENOMEM;
			goto flip;
		}
		while (nt < want && ri < pend->n &&
		       !tuple_cmp(g.pid, g.tid, kid, uid, pend->v[ri].pid, pend->v[ri].tid,
				  pend->v[ri].kern_stack_id, pend->v[ri].user_stack_id)) {
			s->times[nt] = pend->v[ri].time_ns;
			s->cpus[nt] = pend->v[ri].cpu;
			nt++;
			ri++;
		}
		if (want == SIZE_MAX) {
			s->st.orphan_records += nt;
			want = nt;
		}
		g.times_ns = s->times;
		g.cpus = s->cpus;
		g.nr_times = nt;
		g.untimed = (uint32_t)(want - nt);
		s->st.untimed += g.untimed;
		if (failed) {
			s->st.lost += want;
			continue;
		}
		err = fill_stacks(s, &g, kid, uid);
		if (!err)
			err = fn(&g, ctx);
		if (err < 0) {
			failed = true;
			s->st.lost += want;
			continue;
		}
		delivered += (int)want;
	}
	err = failed ? err : 0;

flip:
	stack_gen_tick(s, failed || err);
	pend->n = 0;
	free(kv);
	__atomic_store_n(&s->skel->bss->gen, d, __ATOMIC_RELEASE);
	s->st.delivered += (uint64_t)delivered;
	s->st.drains++;
	s->st.drain_ns_total += mono_ns() - t0;
	return err < 0 ? err : delivered;
}

void sampler__stats(struct sampler *s, struct sampler_stats *ret)
{
	struct bpf_prog_info info = { 0 };
	struct ember_bpf_stats bs;
	__u32 len = sizeof(info);

	*ret = s->st;
	if (!read_bpf_stats(s, &bs)) {
		ret->samples += bs.samples;
		ret->idle += bs.idle;
		ret->kern_eexist += bs.kern_eexist;
		ret->user_eexist += bs.user_eexist;
		ret->kern_efault += bs.kern_efault;
		ret->user_efault += bs.user_efault;
		ret->kern_other += bs.kern_other;
		ret->user_other += bs.user_other;
		ret->counts_full += bs.counts_full;
		ret->ringbuf_drops += bs.ringbuf_drops;
		ret->lost += bs.both_full; /* neither a count nor a time record: lost in BPF */
		ret->lost_in_bpf = bs.both_full;
		ret->execs += bs.execs;
		ret->exec_drops += bs.exec_drops;
		ret->exits += bs.exits;
		ret->exit_drops += bs.exit_drops;
		ret->user_fp_walks += bs.user_fp_walks;
		ret->user_truncated += bs.user_truncated;
	}
	if (!bpf_obj_get_info_by_fd(bpf_program__fd(s->skel->progs.do_sample), &info, &len)) {
		ret->prog_run_ns = info.run_time_ns;
		ret->prog_run_cnt = info.run_cnt;
		ret->prog_id = info.id;
	}
	ret->stack_map_entries = s->o.stack_map_entries;
	ret->counts_map_entries = s->o.counts_map_entries;
}

/* --- unwind tables ----------------------------------------------------------------------- */

uint32_t sampler__unwind_capacity(const struct sampler *s)
{
	return s->o.unwind_from ? 0 : s->o.unwind_rows;
}

/* Rows per batch write: the indices' scratch (256 KiB). */
#define ROW_BATCH 65536

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
	if (!s->row_keys) {
		s->row_keys = malloc(ROW_BATCH * sizeof(*s->row_keys));
		if (!s->row_keys)
			return -ENOMEM;
	}
	/* system calls, not a mapping of the array: its pages would count in emberd's RSS */
	while (done < n) {
		count = (__u32)(n - done < ROW_BATCH ? n - done : ROW_BATCH);
		for (i = 0; i < count; i++)
			s->row_keys[i] = start + (uint32_t)(done + i);
		if (bpf_map_update_batch(fd, s->row_keys, r + done, &count, &opts))
			return -errno;
		done += count;
	}
	return 0;
}

int sampler__unwind_set_proc(struct sampler *s, uint32_t pid, const struct ember_unwind_proc *p)
{
	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.unwind_procs), &pid, p, BPF_ANY))
		return -errno;
	return 0;
}

int sampler__unwind_del_proc(struct sampler *s, uint32_t pid)
{
	if (bpf_map_delete_elem(bpf_map__fd(s->skel->maps.unwind_procs), &pid))
		return -errno;
	return 0;
}

/* --- Python (issue 21) ------------------------------------------------------------------- */

int sampler__python_set_proc(struct sampler *s, uint32_t pid, const struct ember_py_proc *p)
{
	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.py_procs), &pid, p, BPF_ANY))
		return errno == ENOMEM ? -E2BIG : -errno;
	return 0;
}

int sampler__python_del_proc(struct sampler *s, uint32_t pid)
{
	if (bpf_map_delete_elem(bpf_map__fd(s->skel->maps.py_procs), &pid))
		return -errno;
	return 0;
}

void sampler__renote_pid(struct sampler *s, uint32_t pid)
{
	if (s->recent[pid & 1023] == pid)
		s->recent[pid & 1023] = 0;
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
