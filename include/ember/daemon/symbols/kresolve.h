/* SPDX-License-Identifier: MIT */
/*
 * kresolve: kernel addresses -> symbols through the kernel's own kallsyms lookup, without reading
 * /proc/kallsyms. A BPF syscall program (bpf/kresolve.bpf.c) formats each address with "%pS"; this
 * module loads it and runs it (BPF_PROG_TEST_RUN) on batches. Its resolve function is what
 * symbolizer_opts.kernel_resolve expects.
 */
#ifndef EMBER_KRESOLVE_H
#define EMBER_KRESOLVE_H

#include <stddef.h>
#include <stdint.h>

struct kresolve; /* opaque */

/*
 * Loads the program. NULL + errno, with the reason in @err, where the kernel cannot run it
 * (before Linux 5.14, no BPF, no privileges): the symbolizer then reads /proc/kallsyms.
 */
struct kresolve *kresolve__new(char *err, size_t errlen);
void kresolve__free(struct kresolve *kr); /* NULL is a no-op */

/*
 * Writes "%pS" of each of @addrs[0..n) into @texts + i * @text_len (NUL-terminated, truncated to
 * @text_len): "name+0xoff/0xsize" with " [module]" for a module, "0x..." for no symbol. Any @n.
 * 0 or -errno. @ctx is the struct kresolve (the symbolizer's callback signature).
 */
int kresolve__resolve(void *ctx, const uint64_t *addrs, size_t n, char *texts, size_t text_len);

#endif
