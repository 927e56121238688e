// SPDX-License-Identifier: MIT
/*
 * The unwind-table benchmark (built and run by bench_cfi.sh), for one ELF file:
 *  - build: cfi_table__open() RUNS times (file opened, CFI read and compiled, table kept):
 *    the first run, then the median and the minimum of all; the table (rows, bytes, FDEs, NONE
 *    rows by reason) and the builder's working memory;
 *  - lookups: each row's first address and one inside it, answered by the table (a binary
 *    search: what the BPF walker will do per frame) and by libdw's dwarf_cfi_addrframe on the
 *    same file's .eh_frame (what unwinding in userspace with libdw costs per frame), one pass
 *    from a fresh Dwarf_CFI (its FDE index built on the way) and one warm.
 * Prints "key value" lines. With "build", only the builds (for callgrind, or a fresh process's).
 * Usage: bench_cfi FILE [RUNS [build]]
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <elfutils/libdw.h>
#include <libelf.h>

#include "ember/daemon/unwind/cfi.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* one pass of dwarf_cfi_addrframe over @addrs; the number that found an FDE */
static size_t libdw_pass(Dwarf_CFI *cfi, const uint64_t *addrs, size_t n)
{
	size_t i, found = 0;

	for (i = 0; i < n; i++) {
		Dwarf_Frame *fr;

		if (dwarf_cfi_addrframe(cfi, addrs[i], &fr) == 0) {
			found++;
			free(fr);
		}
	}
	return found;
}

int main(int argc, char **argv)
{
	const struct ember_unwind_row *rows;
	const struct cfi_stats *st;
	struct cfi_table *t = NULL;
	double *ms, t0, cold, warm, ours;
	volatile uintptr_t sink = 0;
	uint64_t *addrs;
	size_t runs, r, i, n, naddrs = 0, found;
	Dwarf_CFI *cfi;
	Elf *elf;
	int fd;

	if (argc < 2) {
		fprintf(stderr, "usage: bench_cfi FILE [RUNS [build]]\n");
		return 2;
	}
	runs = argc > 2 ? strtoul(argv[2], NULL, 10) : 5;
	if (!runs)
		runs = 1;
	ms = calloc(runs, sizeof(*ms));
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (!ms || fd < 0) {
		perror(argv[1]);
		return 1;
	}
	for (r = 0; r < runs; r++) {
		cfi_table__free(t);
		t0 = now();
		t = cfi_table__open(fd, -1, NULL);
		ms[r] = (now() - t0) * 1e3;
		if (!t) {
			perror("cfi_table__open");
			return 1;
		}
	}
	printf("first_ms %.2f\n", ms[0]);
	qsort(ms, runs, sizeof(*ms), cmp_double);
	printf("median_ms %.2f\nmin_ms %.2f\n", ms[runs / 2], ms[0]);
	st = cfi_table__stats(t);
	printf("rows %lu\nbytes %lu\nfdes %lu\nfdes_eh_frame %lu\nfdes_debug_frame %lu\n",
	       (unsigned long)st->rows, (unsigned long)st->bytes, (unsigned long)st->fdes,
	       (unsigned long)st->fdes_eh_frame, (unsigned long)st->fdes_debug_frame);
	printf("fdes_malformed %lu\nfdes_outside %lu\nfdes_overlap %lu\nbuild_bytes %lu\n",
	       (unsigned long)st->fdes_malformed, (unsigned long)st->fdes_outside,
	       (unsigned long)st->fdes_overlap, (unsigned long)st->build_bytes);
	printf("none");
	for (i = 0; i < CFI_NONE__COUNT; i++)
		if (st->none_rows[i])
			printf(" %s=%lu", cfi_none_reason_str((int)i),
			       (unsigned long)st->none_rows[i]);
	printf("\n");
	if (argc > 3 && !strcmp(argv[3], "build")) {
		cfi_table__free(t);
		free(ms);
		close(fd);
		return 0;
	}

	/* the addresses: each row's first one and one inside it */
	rows = cfi_table__rows(t, &n);
	addrs = malloc(2 * n * sizeof(*addrs) + 1);
	if (!addrs)
		return 1;
	for (i = 0; i < n; i++) {
		uint64_t len = i + 1 < n ? rows[i + 1].pc - rows[i].pc : 1;

		addrs[naddrs++] = rows[i].pc;
		if (len > 1)
			addrs[naddrs++] = rows[i].pc + 1 + (i * 2654435761u) % (len - 1);
	}
	t0 = now();
	for (r = 0; r < 20; r++)
		for (i = 0; i < naddrs; i++)
			sink += (uintptr_t)cfi_table__lookup(t, addrs[i]);
	ours = (now() - t0) / (20.0 * naddrs);

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	t0 = now();
	cfi = elf ? dwarf_getcfi_elf(elf) : NULL;
	if (!cfi) {
		fprintf(stderr, "libdw: no .eh_frame CFI\n");
		return 1;
	}
	found = libdw_pass(cfi, addrs, naddrs);
	cold = now() - t0;
	t0 = now();
	(void)libdw_pass(cfi, addrs, naddrs);
	warm = now() - t0;
	printf("addrs %zu\nlibdw_found %zu\n", naddrs, found);
	printf("ours_ns_per_lookup %.1f\n", ours * 1e9);
	printf("libdw_cold_ms %.2f\nlibdw_cold_us_per_lookup %.3f\n", cold * 1e3,
	       cold * 1e6 / (double)naddrs);
	printf("libdw_warm_ms %.2f\nlibdw_warm_us_per_lookup %.3f\n", warm * 1e3,
	       warm * 1e6 / (double)naddrs);
	dwarf_cfi_end(cfi);
	elf_end(elf);
	cfi_table__free(t);
	free(addrs);
	free(ms);
	close(fd);
	return 0;
}
