// SPDX-License-Identifier: MIT
#include "ember/daemon/elf/elfload.h"

#include <errno.h>
#include <unistd.h>

#include <gelf.h>

int elfload_read(Elf *elf, struct elfload *ret)
{
	size_t n = 0, i;
	GElf_Phdr ph;
	int err = 0;

	ret->n = 0;
	if (!elf || elf_getphdrnum(elf, &n))
		return -ENOEXEC;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (ret->n == ELFLOAD_MAX_SEGS) {
			err = -E2BIG;
			break;
		}
		ret->segs[ret->n++] = (struct elfload_seg){ .off = ph.p_offset, .vaddr = ph.p_vaddr,
							     .filesz = ph.p_filesz,
							     .memsz = ph.p_memsz,
							     .x = !!(ph.p_flags & PF_X) };
	}
	return err;
}

/* The page size, asked of the C library once (a call per mapping showed in profiles). */
static uint64_t page_size(void)
{
	static uint64_t pg;
	uint64_t v = __atomic_load_n(&pg, __ATOMIC_RELAXED);

	if (!v) {
		v = (uint64_t)sysconf(_SC_PAGESIZE);
		if (!v || (v & (v - 1)))
			v = 4096;
		__atomic_store_n(&pg, v, __ATOMIC_RELAXED);
	}
	return v;
}

int elfload_bias(const struct elfload *l, const struct elfload_map *m, uint64_t *ret_bias)
{
	uint64_t pg = page_size(), len = m->end - m->start;
	const struct elfload_seg *best = NULL;
	int best_score = -1;
	unsigned int i;

	for (i = 0; i < l->n; i++) {
		const struct elfload_seg *s = &l->segs[i];
		uint64_t lo = s->off & ~(pg - 1), hi = (s->off + s->filesz + pg - 1) & ~(pg - 1);
		int score;

		/* the mapping starts in the segment's pages (the kernel maps whole pages) */
		if (m->pgoff < lo || m->pgoff >= s->off + s->filesz)
			continue;
		score = (s->x == m->x) * 2 + (m->end > m->start && m->pgoff + len <= hi);
		if (score > best_score) {
			best = s;
			best_score = score;
		}
	}
	if (!best)
		return -ENOENT;
	*ret_bias = m->start - m->pgoff - (best->vaddr - best->off);
	return 0;
}

int elfload_vaddr(const struct elfload *l, const struct elfload_map *m, uint64_t addr,
		  uint64_t *ret_vaddr)
{
	uint64_t bias;
	int err;

	if (addr < m->start || addr >= m->end)
		return -ENOENT;
	err = elfload_bias(l, m, &bias);
	if (!err)
		*ret_vaddr = addr - bias;
	return err;
}
