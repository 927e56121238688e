// SPDX-License-Identifier: MIT
/*
 * memio: the memory and I/O events' programs (bpf/memio.bpf.h) in the sampler's skeleton: their
 * knobs before load, their attachment after it, their counters. Used by sampler.c only
 * (memio_internal.h); the records go through the sampler's ring buffer and drain as any other.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "ember/core/base/errbuf.h"
#include "ember/daemon/sample/bpf_shared.h"
#include "ember/daemon/sample/sampler.h"
#include "memio_internal.h"
#include "sampler.skel.h"

/* A program on one perf event per CPU: what a CPU that comes online again is attached with. */
struct memio_percpu {
	struct bpf_program *prog;
	__u32 type;
	__u64 config;
	uint64_t period;
};

struct memio {
	int nr_cpus;
	struct bpf_link **pf;	      /* the page-fault event's program, per possible CPU */
	struct bpf_link **cyc, **ins; /* the hardware counters' ([pmc]), per possible CPU */
	struct memio_percpu pf_ev, cyc_ev, ins_ev;
	struct bpf_link *vm, *bio_q, *bio_c, *malloc;
	bool any;
};

const char *sampler_memio_name(unsigned int i)
{
	static const char *const names[SAMPLER_MEMIO_KINDS] = {
		[EMBER_MEMIO_PAGEFAULT] = "pagefault",
		[EMBER_MEMIO_VMGROW] = "vmgrow",
		[EMBER_MEMIO_BLOCKIO] = "blockio",
		[EMBER_MEMIO_BLOCKIO_LAT] = "blockio_latency",
		[EMBER_MEMIO_MALLOC] = "malloc",
		[EMBER_MEMIO_CYCLES] = "cycles",
		[EMBER_MEMIO_INSTRUCTIONS] = "instructions",
	};

	return i < SAMPLER_MEMIO_KINDS ? names[i] : "?";
}

/* The byte offset of @t's member @name in @b; -1: not found (bio.bi_next is at 0). */
static long member_off(const struct btf *b, const struct btf_type *t, const char *name,
		       __u32 *ret_type)
{
	const struct btf_member *m;
	int i;

	for (i = 0, m = t ? btf_members(t) : NULL; t && i < btf_vlen(t); i++, m++) {
		const char *n = btf__name_by_offset(b, m->name_off);

		if (n && !strcmp(n, name)) {
			if (ret_type)
				*ret_type = m->type;
			return btf_member_bit_offset(t, (__u32)i) / 8;
		}
	}
	return -1;
}

static const struct btf_type *struct_of(const struct btf *b, const char *name)
{
	int id = btf__find_by_name_kind(b, name, BTF_KIND_STRUCT);

	return id > 0 ? btf__type_by_id(b, (__u32)id) : NULL;
}

/* An enumerator's value (-1: none): req_flag_bits' __REQ_RAHEAD... differ between kernels. */
static long enum_value(const struct btf *b, const char *enum_name, const char *name)
{
	int id = btf__find_by_name_kind(b, enum_name, BTF_KIND_ENUM), i;
	const struct btf_type *t = id > 0 ? btf__type_by_id(b, (__u32)id) : NULL;
	const struct btf_enum *e;

	for (i = 0, e = t ? btf_enum(t) : NULL; t && i < btf_vlen(t); i++, e++) {
		const char *n = btf__name_by_offset(b, e->name_off);

		if (n && !strcmp(n, name))
			return e->val;
	}
	return -1;
}

/* struct bio's offsets, the request flags' bits and task_struct.flags from the kernel's BTF @b
 * (the sampler's one parse). */
static void bio_offsets(struct sampler_bpf *skel, const struct btf *b)
{
	const struct btf_type *bio, *task, *iter;
	__u32 iter_type = 0;
	long v, iter_off, next, rqbio, opf, size, flags;

	if (!b)
		return;
	bio = struct_of(b, "bio");
	task = struct_of(b, "task_struct");
	iter = struct_of(b, "bvec_iter");
	opf = member_off(b, bio, "bi_opf", NULL);
	iter_off = member_off(b, bio, "bi_iter", &iter_type);
	size = iter_off >= 0 ? member_off(b, iter, "bi_size", NULL) : -1;
	next = member_off(b, bio, "bi_next", NULL);
	rqbio = member_off(b, struct_of(b, "request"), "bio", NULL);
	flags = member_off(b, task, "flags", NULL);
	/* all or none: memio_attach() refuses [blockio] without them */
	if (opf >= 0 && size >= 0 && next >= 0 && rqbio >= 0 && flags >= 0) {
		skel->rodata->bio_opf_off = (__u32)opf;
		skel->rodata->bio_size_off = (__u32)(iter_off + size);
		skel->rodata->bio_next_off = (__u32)next;
		skel->rodata->rq_bio_off = (__u32)rqbio;
		skel->rodata->memio_flags_off = (__u32)flags;
		skel->rodata->bio_fields = true;
	}
	v = enum_value(b, "req_flag_bits", "__REQ_RAHEAD");
	skel->rodata->bio_rahead_mask = v > 0 && v < 32 ? 1u << v : 0;
	v = enum_value(b, "req_flag_bits", "__REQ_BACKGROUND");
	skel->rodata->bio_background_mask = v > 0 && v < 32 ? 1u << v : 0;
}

void memio_setup(struct sampler_bpf *skel, const struct sampler_memio_opts *o, bool fp_only,
		 const struct btf *b)
{
	bool any = o->pagefault || o->vmgrow || o->blockio || o->malloc || o->pmc;

	bpf_program__set_autoload(skel->progs.memio_pagefault, o->pagefault && !fp_only);
	bpf_program__set_autoload(skel->progs.memio_pagefault_fp, o->pagefault && fp_only);
	bpf_program__set_autoload(skel->progs.memio_sys_exit, o->vmgrow);
	bpf_program__set_autoload(skel->progs.memio_bio_queue, o->blockio);
	bpf_program__set_autoload(skel->progs.memio_rq_complete, o->blockio);
	bpf_program__set_autoload(skel->progs.memio_malloc, o->malloc);
	/* with the BPF walker only (no frame-pointer variant: kernels without bpf_loop() are
	 * older than any PMU this was meant for) */
	bpf_program__set_autoload(skel->progs.memio_cycles, o->pmc && !fp_only);
	bpf_program__set_autoload(skel->progs.memio_instructions, o->pmc && !fp_only);
	memcpy((void *)skel->rodata->memio_max_rate, o->max_rate, sizeof(o->max_rate));
	skel->rodata->memio_malloc_interval = o->malloc_interval ? o->malloc_interval : 524288;
	memcpy((char *)skel->rodata->memio_malloc_comm, o->malloc_comm,
	       sizeof(skel->rodata->memio_malloc_comm));
	(void)bpf_map__set_max_entries(skel->maps.memio_rate, any ? 4096 : 1);
	(void)bpf_map__set_max_entries(skel->maps.memio_brk, o->vmgrow ? 8192 : 1);
	(void)bpf_map__set_max_entries(skel->maps.memio_inflight,
				       o->blockio && o->blockio_inflight ? o->blockio_inflight : 1);
	(void)bpf_map__set_max_entries(skel->maps.memio_malloc_acc, o->malloc ? 65536 : 1);
	if (o->blockio)
		bio_offsets(skel, b);
}

static int pf_open(int cpu, uint64_t period, __u32 type, __u64 config)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = type,
		.config = config,
		.sample_period = period ? period : 1,
	};
	int fd = (int)syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

void memio_free(struct memio *m)
{
	int cpu;

	if (!m)
		return;
	for (cpu = 0; cpu < m->nr_cpus; cpu++) {
		bpf_link__destroy(m->pf ? m->pf[cpu] : NULL);
		bpf_link__destroy(m->cyc ? m->cyc[cpu] : NULL);
		bpf_link__destroy(m->ins ? m->ins[cpu] : NULL);
	}
	free(m->pf);
	free(m->cyc);
	free(m->ins);
	bpf_link__destroy(m->vm);
	bpf_link__destroy(m->bio_q);
	bpf_link__destroy(m->bio_c);
	bpf_link__destroy(m->malloc);
	free(m);
}

/* @p on a perf event (@type, @config, every @period) on each online CPU into *@ret_links; @ev
 * keeps them for a CPU that comes back online (memio_update_cpus()). */
static int attach_cpus(struct bpf_program *p, __u32 type, __u64 config, uint64_t period,
		       const bool *online, int nr_cpus, struct bpf_link ***ret_links,
		       struct memio_percpu *ev, const char *what, char *err, size_t errlen)
{
	struct bpf_link **l = calloc((size_t)nr_cpus, sizeof(*l));
	int cpu, fd, r;

	*ret_links = l;
	*ev = (struct memio_percpu){ .prog = p, .type = type, .config = config, .period = period };
	if (!l)
		return -ENOMEM;
	/* the CPUs online now; one that comes online later: memio_update_cpus() */
	for (cpu = 0; cpu < nr_cpus; cpu++) {
		if (online && !online[cpu])
			continue;
		fd = pf_open(cpu, period, type, config);
		if (fd == -ENODEV)
			continue;
		if (fd < 0)
			return errbuf_set(err, errlen, fd, "%s: perf_event_open: %s", what,
					  strerror(-fd));
		l[cpu] = bpf_program__attach_perf_event(p, fd);
		if (!l[cpu]) {
			r = -errno;
			close(fd);
			return errbuf_set(err, errlen, r, "%s: attach: %s", what, strerror(-r));
		}
	}
	return 0;
}

/* One per-CPU program's links after a CPU went offline or came back (errors: retried next time). */
static void update_links(struct bpf_link **l, const struct memio_percpu *ev, const bool *online,
			 int nr_cpus)
{
	int cpu, fd;

	for (cpu = 0; l && ev->prog && cpu < nr_cpus; cpu++) {
		if (online[cpu] && !l[cpu]) {
			fd = pf_open(cpu, ev->period, ev->type, ev->config);
			if (fd < 0)
				continue;
			l[cpu] = bpf_program__attach_perf_event(ev->prog, fd);
			if (!l[cpu])
				close(fd); /* the link owns fd only on success */
		} else if (!online[cpu] && l[cpu]) {
			/* an offlined CPU's events do not come back: detached, re-attached online */
			bpf_link__destroy(l[cpu]);
			l[cpu] = NULL;
		}
	}
}

void memio_update_cpus(struct memio *m, const bool *online)
{
	if (!m)
		return;
	update_links(m->pf, &m->pf_ev, online, m->nr_cpus);
	update_links(m->cyc, &m->cyc_ev, online, m->nr_cpus);
	update_links(m->ins, &m->ins_ev, online, m->nr_cpus);
}

int memio_attach(struct sampler_bpf *skel, const struct sampler_memio_opts *o, const bool *online,
		 int nr_cpus, struct memio **ret, char *err, size_t errlen)
{
	struct memio *m;
	int r;

	*ret = NULL;
	if (!o->pagefault && !o->vmgrow && !o->blockio && !o->malloc && !o->pmc)
		return 0;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->nr_cpus = nr_cpus;
	m->any = true;
	if (o->pagefault) {
		r = attach_cpus(bpf_program__autoload(skel->progs.memio_pagefault)
				    ? skel->progs.memio_pagefault
				    : skel->progs.memio_pagefault_fp,
				PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, o->pagefault_period,
				online, nr_cpus, &m->pf, &m->pf_ev, "[pagefault]", err, errlen);
		if (r)
			goto fail;
	}
	if (o->pmc) {
		r = attach_cpus(skel->progs.memio_cycles, PERF_TYPE_HARDWARE,
				PERF_COUNT_HW_CPU_CYCLES, o->pmc_period, online, nr_cpus, &m->cyc,
				&m->cyc_ev, "[pmc] cycles", err, errlen);
		if (!r)
			r = attach_cpus(skel->progs.memio_instructions, PERF_TYPE_HARDWARE,
					PERF_COUNT_HW_INSTRUCTIONS, o->pmc_period, online, nr_cpus,
					&m->ins, &m->ins_ev, "[pmc] instructions", err, errlen);
		if (r)
			goto fail;
	}
	if (o->vmgrow) {
		m->vm = bpf_program__attach(skel->progs.memio_sys_exit);
		if (!m->vm) {
			r = -errno;
			(void)errbuf_set(err, errlen, 0, "[vmgrow]: attach sys_exit: %s",
					 strerror(-r));
			goto fail;
		}
	}
	if (o->blockio) {
		if (!skel->rodata->bio_fields) {
			r = -ENOENT;
			(void)errbuf_set(
			    err, errlen, 0,
			    "[blockio]: struct bio's or request's fields not in the kernel's BTF");
			goto fail;
		}
		m->bio_q = bpf_program__attach(skel->progs.memio_bio_queue);
		m->bio_c = m->bio_q ? bpf_program__attach(skel->progs.memio_rq_complete) : NULL;
		if (!m->bio_c) {
			r = -errno;
			(void)errbuf_set(err, errlen, 0,
					 "[blockio]: attach block_bio_queue/block_rq_complete: %s",
					 strerror(-r));
			goto fail;
		}
	}
	if (o->malloc) {
		LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = "malloc");

		/* one process's malloc only (no other process pays the breakpoint), or every
		 * process of the library, filtered by comm in the program */
		m->malloc = bpf_program__attach_uprobe_opts(
		    skel->progs.memio_malloc, o->malloc_pid ? (pid_t)o->malloc_pid : -1,
		    o->malloc_lib[0] ? o->malloc_lib : "libc.so.6", 0, &uo);
		if (!m->malloc) {
			r = -errno;
			(void)errbuf_set(err, errlen, 0, "[malloc]: uprobe on %s malloc: %s",
					 o->malloc_lib[0] ? o->malloc_lib : "libc.so.6",
					 strerror(-r));
			goto fail;
		}
	}
	*ret = m;
	return 0;
fail:
	memio_free(m);
	return r;
}

static void run_stats(struct bpf_program *p, uint64_t *ns, uint64_t *cnt)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);

	if (bpf_program__fd(p) >= 0 && !bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &len)) {
		*ns += info.run_time_ns;
		*cnt += info.run_cnt;
	}
}

int memio_stats(struct sampler_bpf *skel, const struct memio *m, struct sampler_memio_stats *ret)
{
	struct ember_memio_stats *per;
	__u32 zero = 0;
	int i, k, n, err = 0;

	if (!m)
		return 0;
	ret->attached = true;
	n = libbpf_num_possible_cpus();
	if (n <= 0)
		return n ? n : -EINVAL;
	per = calloc((size_t)n, sizeof(*per));
	if (!per)
		return -ENOMEM;
	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.memio_stats), &zero, per)) {
		err = -errno;
		goto out;
	}
	for (i = 0; i < n; i++) {
		const struct ember_memio_stats *c = &per[i];

		for (k = 0; k < SAMPLER_MEMIO_KINDS; k++) {
			ret->events[k] += c->events[k];
			ret->weight[k] += c->weight[k];
			ret->recorded[k] += c->recorded[k];
			ret->lost[k] += c->lost[k];
			ret->lost_weight[k] += c->lost_weight[k];
			ret->throttled[k] += c->throttled[k];
			ret->throttled_weight[k] += c->throttled_weight[k];
		}
		ret->ring_bytes += c->ring_bytes;
		ret->malloc_calls += c->calls;
		ret->inflight_miss += c->inflight_miss;
	}
	run_stats(skel->progs.memio_pagefault, &ret->run_ns[EMBER_MEMIO_PAGEFAULT],
		  &ret->run_cnt[EMBER_MEMIO_PAGEFAULT]);
	run_stats(skel->progs.memio_pagefault_fp, &ret->run_ns[EMBER_MEMIO_PAGEFAULT],
		  &ret->run_cnt[EMBER_MEMIO_PAGEFAULT]);
	run_stats(skel->progs.memio_sys_exit, &ret->run_ns[EMBER_MEMIO_VMGROW],
		  &ret->run_cnt[EMBER_MEMIO_VMGROW]);
	run_stats(skel->progs.memio_bio_queue, &ret->run_ns[EMBER_MEMIO_BLOCKIO],
		  &ret->run_cnt[EMBER_MEMIO_BLOCKIO]);
	run_stats(skel->progs.memio_rq_complete, &ret->run_ns[EMBER_MEMIO_BLOCKIO_LAT],
		  &ret->run_cnt[EMBER_MEMIO_BLOCKIO_LAT]);
	run_stats(skel->progs.memio_malloc, &ret->run_ns[EMBER_MEMIO_MALLOC],
		  &ret->run_cnt[EMBER_MEMIO_MALLOC]);
	run_stats(skel->progs.memio_cycles, &ret->run_ns[EMBER_MEMIO_CYCLES],
		  &ret->run_cnt[EMBER_MEMIO_CYCLES]);
	run_stats(skel->progs.memio_instructions, &ret->run_ns[EMBER_MEMIO_INSTRUCTIONS],
		  &ret->run_cnt[EMBER_MEMIO_INSTRUCTIONS]);
out:
	free(per);
	return err;
}

int sampler_pmc_probe(char *why, size_t whylen)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_HARDWARE,
		.config = PERF_COUNT_HW_CPU_CYCLES,
		.disabled = 1,
	};
	int fd = (int)syscall(__NR_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC), e;

	if (fd >= 0) {
		close(fd);
		return 1;
	}
	e = errno;
	/* ENOENT/EOPNOTSUPP: no PMU (a VM without one): perf stat says "not supported" */
	if (e == ENOENT || e == EOPNOTSUPP || e == ENODEV || e == EINVAL) {
		(void)errbuf_set(why, whylen, 0,
				 "the kernel offers no hardware counters (perf_event_open(cycles): "
				 "%s)",
				 strerror(e));
		return 0;
	}
	(void)errbuf_set(why, whylen, 0,
			 "hardware counters not usable (perf_event_open(cycles): %s)", strerror(e));
	return e == EACCES || e == EPERM ? 0 : -e;
}
