// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: a file that claims to be libjvm.so or node (introspection tables, layout
 * symbols, relocations), read by rtintro; then offsets completed through a reader that serves
 * the input's own bytes as the "process". Refusals are fine; a crash, a hang or an offset past
 * the bound is not.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ember/daemon/elf/rtintro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t *in_data;
static size_t in_size;

static bool input_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	if (addr > in_size || len > in_size - addr)
		return false;
	memcpy(buf, in_data + addr, len);
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	struct rtintro_stats st = { 0 };
	struct rtintro_hotspot h;
	struct rtintro_v8 v;

	if (fd < 0)
		fd = memfd_create("fuzz_rtintro", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, 0) || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
		return 0;
	in_data = data;
	in_size = size;
	if (rtintro_hotspot_read(fd, &h, &st) == 0) {
		/* sizes are bounded at read time, offsets when resolved */
		if (h.val[RTI_HS_KLASS_SIZEOF] > RTI_MAX_CLASS_SIZE ||
		    h.val[RTI_HS_CODEBLOB_SIZEOF] > RTI_MAX_CLASS_SIZE ||
		    h.n_structs > RTI_MAX_ENTRIES || h.n_types > RTI_MAX_ENTRIES)
			__builtin_trap();
		if (rtintro_hotspot_resolve(&h, 0, input_read, NULL, &st) == 0 &&
		    (h.val[RTI_HS_KLASS_NAME] > RTI_MAX_CLASS_SIZE ||
		     h.val[RTI_HS_CODEBLOB_FRAME_SIZE] > RTI_MAX_CLASS_SIZE))
			__builtin_trap();
		if (!memchr(h.release, 0, sizeof(h.release)))
			__builtin_trap();
	}
	(void)rtintro_v8_read(fd, &v, &st);
	return 0;
}
