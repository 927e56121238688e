// SPDX-License-Identifier: MIT
/*
 * jit: generates machine code at run time, calls it in a loop, and describes it in a perf map
 * (/tmp/perf-PID.map, PID as its own pid namespace sees it), the way JIT runtimes do:
 *
 *   7f3a1c000000 40 jit_alpha
 *   7f3a1c000040 40 jit_beta
 *
 * It prints the same lines on stdout, then "ready". Options:
 *   --0x            write the 0x-prefixed variant ("0x7f3a1c000000 0x40 jit_alpha")
 *   --grow S        after S seconds, generate jit_gamma, append it to the map, print it, then
 *                   "grown", and call it too (a perf map that grows while we profile)
 *   --grow-on-usr1  the same when SIGUSR1 comes (a test that reads the map first, then asks)
 *   --junk          put malformed lines into the map (they must be skipped, not fatal)
 *   --seconds N     run N seconds (default: until killed); the map is removed at exit
 * x86-64 and arm64. Each function keeps a frame pointer so that stacks walk through it.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define FN_SIZE 64

typedef void (*jit_fn)(void);

static char map_path[64];
static FILE *map;
static int hex0x;

static size_t emit(unsigned char *p, uint32_t loops)
{
	size_t n = 0;
#if defined(__x86_64__)
	static const unsigned char pro[] = { 0x55, 0x48, 0x89, 0xe5 }; /* push rbp; mov rbp,rsp */
	memcpy(p, pro, sizeof(pro));
	n = sizeof(pro);
	p[n++] = 0xb9; /* mov ecx, imm32 */
	memcpy(p + n, &loops, 4);
	n += 4;
	p[n++] = 0xff; /* 1: dec ecx */
	p[n++] = 0xc9;
	p[n++] = 0x75; /* jnz 1b */
	p[n++] = 0xfc;
	p[n++] = 0x5d; /* pop rbp */
	p[n++] = 0xc3; /* ret */
#elif defined(__aarch64__)
	uint32_t ins[] = {
		0xa9bf7bfd,				/* stp x29, x30, [sp, #-16]! */
		0x910003fd,				/* mov x29, sp */
		0x52800001 | (loops & 0xffff) << 5,	/* movz w1, #lo */
		0x72a00001 | (loops >> 16) << 5,	/* movk w1, #hi, lsl #16 */
		0x71000421,				/* 1: subs w1, w1, #1 */
		0x54ffffe1,				/* b.ne 1b */
		0xa8c17bfd,				/* ldp x29, x30, [sp], #16 */
		0xd65f03c0,				/* ret */
	};
	memcpy(p, ins, sizeof(ins));
	n = sizeof(ins);
#else
#error "jit workload: x86-64 and arm64 only"
#endif
	while (n < FN_SIZE)
		p[n++] = 0;
	return n;
}

static void describe(const unsigned char *addr, const char *name)
{
	const char *fmt = hex0x ? "0x%llx 0x%x %s\n" : "%llx %x %s\n";

	fprintf(map, fmt, (unsigned long long)(uintptr_t)addr, FN_SIZE, name);
	fflush(map);
	printf("%s %p\n", name, (const void *)addr);
	fflush(stdout);
}

static void cleanup(void)
{
	if (map_path[0])
		unlink(map_path);
}

static volatile sig_atomic_t grow_now;

static void on_usr1(int sig)
{
	(void)sig;
	grow_now = 1;
}

static void on_signal(int sig)
{
	cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void jit_run(jit_fn f)
{
	f();
}

int main(int argc, char **argv)
{
	double seconds = -1, grow = -1, t0;
	bool grow_on_usr1 = false;
	unsigned char *code;
	jit_fn fns[3];
	int i, nfns = 2, junk = 0;
	unsigned long iter = 0;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--0x"))
			hex0x = 1;
		else if (!strcmp(argv[i], "--junk"))
			junk = 1;
		else if (!strcmp(argv[i], "--grow") && i + 1 < argc)
			grow = atof(argv[++i]);
		else if (!strcmp(argv[i], "--grow-on-usr1"))
			grow_on_usr1 = true;
		else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = atof(argv[++i]);
		else {
			fprintf(stderr, "usage: jit [--0x] [--junk] [--grow S] [--grow-on-usr1] [--seconds N]\n");
			return 2;
		}
	}
	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	emit(code, 3000000);		 /* jit_alpha: three times the work of jit_beta */
	emit(code + FN_SIZE, 1000000);	 /* jit_beta */
	emit(code + 2 * FN_SIZE, 2000000); /* jit_gamma, described later with --grow */
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC)) {
		perror("mprotect");
		return 1;
	}
	__builtin___clear_cache((char *)code, (char *)code + 4096);
	snprintf(map_path, sizeof(map_path), "/tmp/perf-%d.map", (int)getpid());
	map = fopen(map_path, "w");
	if (!map) {
		struct stat st;
		int err = errno;

		/* most often a map an earlier process with this pid left, as another user */
		if (!stat(map_path, &st))
			fprintf(stderr, "jit: cannot write %s (%s): it exists, uid %u, %lld bytes: "
				"left by an earlier process with pid %d?\n", map_path, strerror(err),
				(unsigned)st.st_uid, (long long)st.st_size, (int)getpid());
		else
			fprintf(stderr, "jit: cannot create %s: %s\n", map_path, strerror(err));
		return 1;
	}
	atexit(cleanup);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	if (grow_on_usr1)
		signal(SIGUSR1, on_usr1);
	if (junk)
		fputs("not a line\nzz 10 bad_hex\n12 0 zero_size\n", map);
	describe(code, "jit_alpha");
	describe(code + FN_SIZE, "jit_beta");
	if (junk) {
		fputs("ffff\n", map);
		fflush(map);
	}
	printf("ready\n");
	fflush(stdout);
	fns[0] = (jit_fn)(void *)code;
	fns[1] = (jit_fn)(void *)(code + FN_SIZE);
	fns[2] = (jit_fn)(void *)(code + 2 * FN_SIZE);
	t0 = now();
	for (;;) {
		double t = now() - t0;

		if (seconds >= 0 && t >= seconds)
			break;
		if (nfns == 2 && ((grow >= 0 && t >= grow) || grow_now)) {
			describe(code + 2 * FN_SIZE, "jit_gamma");
			printf("grown\n");
			fflush(stdout);
			nfns = 3;
		}
		jit_run(fns[iter++ % (unsigned long)nfns]);
	}
	fclose(map);
	return 0;
}
