// SPDX-License-Identifier: MIT
#include "ember/daemon/elf/elffile.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>
#include <gelf.h>

#include "ember/daemon/elf/elfsym.h"
#include "ember/daemon/proc/mapfile.h"

void elffile_facts_of_elf(Elf *elf, struct elffile_facts *ret)
{
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	size_t shstrndx;
	const void *bid;
	ssize_t n;

	memset(ret, 0, sizeof(*ret));
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		ret->err = -ENOEXEC;
		return;
	}
	ret->machine = eh.e_machine;
	(void)elfload_read(elf, &ret->load); /* past ELFLOAD_MAX_SEGS: the first ones */
	n = dwelf_elf_gnu_build_id(elf, &bid);
	if (n > 0 && (size_t)n <= FILECACHE_BUILD_ID_MAX) {
		memcpy(ret->build_id, bid, (size_t)n);
		ret->build_id_len = (uint8_t)n;
	}
	if (elf_getshdrstrndx(elf, &shstrndx))
		shstrndx = 0;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB) {
			ret->has_symtab = true;
			continue;
		}
		name = shstrndx ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
		if (!name)
			continue;
		if (!strcmp(name, ".eh_frame") && sh.sh_type != SHT_NOBITS && sh.sh_size)
			ret->has_eh_frame = true;
	}
}

int elffile_facts(struct filecache *fc, int fd, const struct stat *st, struct elffile_facts *ret,
		  struct filecache_id *ret_id)
{
	const struct elffile_facts *known;
	struct filecache_id id;
	Elf *elf;

	filecache_id_of(st, &id); /* no build-id: this very file (device, inode, size, mtime) */
	known = fc ? filecache__get(fc, &id, FILECACHE_ELF) : NULL;
	if (known) {
		*ret = *known;
		if (ret_id) {
			*ret_id = id;
			filecache_id_set_build_id(ret_id, ret->build_id, ret->build_id_len);
		}
		return 0;
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL); /* pread, never mapped */
	elffile_facts_of_elf(elf, ret);
	if (!elf)
		ret->err = -EIO;
	elf_end(elf);
	filecache_id_set_build_id(&id, ret->build_id, ret->build_id_len);
	if (fc)
		(void)filecache__put(fc, &id, FILECACHE_ELF, ret, sizeof(*ret));
	if (ret_id)
		*ret_id = id;
	return 1;
}

/* Whether the ELF file open at @fd has build-id @bid (@len bytes). */
static bool has_build_id(int fd, const uint8_t *bid, size_t len)
{
	uint8_t got[FILECACHE_BUILD_ID_MAX];

	return elfsym_read_build_id(fd, got, sizeof(got)) == (int)len && !memcmp(got, bid, len);
}

int elffile_open_debug(const char *dirs, const uint8_t *bid, size_t len, struct stat *ret_st,
		       const char **ret_dir, size_t *ret_dir_len, uint64_t *ret_refused)
{
	const char *d = dirs ? dirs : "/usr/lib/debug", *end;
	char path[512];
	size_t i, o;
	int fd;

	if (len < 2 || len > FILECACHE_BUILD_ID_MAX)
		return -ENOENT;
	for (; *d; d = *end ? end + 1 : end) {
		end = strchrnul(d, ':');
		if (end == d || end - d > 256)
			continue;
		o = (size_t)snprintf(path, sizeof(path), "%.*s/.build-id/%02x/", (int)(end - d), d,
				     bid[0]);
		for (i = 1; i < len && o + 3 < sizeof(path); i++)
			o += (size_t)snprintf(path + o, sizeof(path) - o, "%02x", bid[i]);
		if (i < len || o + 7 >= sizeof(path))
			continue;
		snprintf(path + o, sizeof(path) - o, ".debug");
		/* root's, in root's directories, no link on the way: never a file a process
		 * controls */
		fd = mapfile_open_trusted(path, ret_st);
		if (fd < 0) {
			if (fd != -ENOENT && fd != -ENOTDIR && ret_refused)
				(*ret_refused)++;
			continue;
		}
		if (!has_build_id(fd, bid, len)) {
			/* another file under this name: not this one's debug file */
			if (ret_refused)
				(*ret_refused)++;
			close(fd);
			continue;
		}
		if (ret_dir)
			*ret_dir = d;
		if (ret_dir_len)
			*ret_dir_len = (size_t)(end - d);
		return fd;
	}
	return -ENOENT;
}
