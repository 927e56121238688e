/* SPDX-License-Identifier: MIT */
/* memio.c's calls for sampler.c: the memory and I/O programs in the sampler's skeleton. */
#ifndef EMBER_MEMIO_INTERNAL_H
#define EMBER_MEMIO_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

struct sampler_bpf;
struct sampler_memio_opts;
struct sampler_memio_stats;
struct memio;
struct btf;

/* Before load: the programs' autoload, knobs and map sizes (all off: nothing loaded); @b: the
 * kernel's BTF (the sampler's one parse; NULL without [blockio], or when unreadable). */
void memio_setup(struct sampler_bpf *skel, const struct sampler_memio_opts *o, bool fp_only,
		 const struct btf *b);
/* After load: attaches what is on (*@ret NULL when nothing is). 0 or -errno with @err. */
int memio_attach(struct sampler_bpf *skel, const struct sampler_memio_opts *o, const bool *online,
		 int nr_cpus, struct memio **ret, char *err, size_t errlen);
void memio_free(struct memio *m); /* NULL is a no-op */
/* The per-CPU events (page faults, hardware counters) after CPU hotplug: a CPU offline in
 * @online detached, one back online attached again, as the sampler's own. NULL: no-op. */
void memio_update_cpus(struct memio *m, const bool *online);
/* Adds the programs' counters to *@ret (left as is when @m is NULL). 0 or -errno. */
int memio_stats(struct sampler_bpf *skel, const struct memio *m, struct sampler_memio_stats *ret);

#endif
