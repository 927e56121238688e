// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the whole "open and parse a mapped file" path with a file that changes size
 * under the parser. The input, past its first 4 bytes, is an ELF file in a
 * memfd that this process maps; it is opened the one way (mapfile_open through
 * /proc/self/map_files), then parsed by elfsym, cfi and the build-id reader while a thread cuts
 * the file to the size the first 4 bytes name and grows it back, over and over. Reads past the
 * end must be errors: a parser that mapped the file would die of SIGBUS here.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "ember/daemon/proc/mapfile.h"
#include "ember/daemon/unwind/cfi.h"
#include "ember/daemon/elf/elfsym.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct toggler {
	int fd;
	off_t full, cut;
	atomic_bool stop;
};

static void *toggle(void *arg)
{
	struct toggler *t = arg;

	while (!atomic_load(&t->stop)) {
		if (ftruncate(t->fd, t->cut) || ftruncate(t->fd, t->full))
			break;
	}
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elfsym_opts eo = { .max_symbols = 1 << 16, .max_section_bytes = 1 << 20 };
	struct cfi_opts co = { .max_rows = 1 << 16, .max_section_bytes = 1 << 20 };
	struct toggler t = { .fd = -1 };
	struct mapfile_want w;
	struct stat sb;
	uint8_t bid[64];
	pthread_t th;
	uint32_t cut;
	void *m;
	int fd;

	if (size < 5 || size > (1 << 20))
		return 0;
	memcpy(&cut, data, 4);
	data += 4;
	size -= 4;
	t.fd = memfd_create("fuzz_mapfile", MFD_CLOEXEC);
	if (t.fd < 0)
		return 0;
	if (write(t.fd, data, size) != (ssize_t)size || fstat(t.fd, &sb)) {
		close(t.fd);
		return 0;
	}
	m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, t.fd, 0); /* never touched */
	if (m == MAP_FAILED) {
		close(t.fd);
		return 0;
	}
	w = (struct mapfile_want){ .pid = (uint32_t)getpid(), .start = (uintptr_t)m,
				   .end = (uintptr_t)m + ((size + 4095) & ~(size_t)4095),
				   .dev_major = major(sb.st_dev), .dev_minor = minor(sb.st_dev),
				   .ino = sb.st_ino };
	fd = mapfile_open("/proc", &w, NULL, NULL);
	if (fd >= 0) {
		t.full = (off_t)size;
		t.cut = (off_t)(cut % (size + 1));
		atomic_store(&t.stop, false);
		if (pthread_create(&th, NULL, toggle, &t) == 0) {
			elfsym__free(elfsym__open(fd, &eo));
			cfi_table__free(cfi_table__open(fd, -1, &co));
			(void)elfsym_read_build_id(fd, bid, sizeof(bid));
			atomic_store(&t.stop, true);
			pthread_join(th, NULL);
		}
		close(fd);
	}
	munmap(m, size);
	close(t.fd);
	return 0;
}
