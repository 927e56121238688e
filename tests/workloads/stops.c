// SPDX-License-Identifier: MIT
/*
 * stops: user stack walks that stop short on purpose (test_walk_stops.sh), one way per
 * mode, each spinning in a leaf (built -O2 without frame pointers, WORKLOAD_stops_CFLAGS):
 *   deep        a recursion deeper than the walker's 127 frames (depth)
 *   norow       a leaf without CFI whose rbp is no frame pointer (no_row)
 *   loop        a leaf whose CFI puts the CFA at rsp itself (loop)
 *   unreadable  a leaf whose CFI puts the CFA at rbp + 16, rbp = 1 (unreadable)
 * The leaves are assembly: the CFI (or its absence) is the point, no compiler may change it.
 *
 * usage: stops MODE [SECONDS [PAUSE]]   (default 5 s). With PAUSE, first 0.3 s of the same
 * work, then PAUSE seconds asleep (emberd builds the process's tables meanwhile), then SECONDS.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void norow_spin(unsigned long n);
void loop_spin(unsigned long n);
void unreadable_spin(unsigned long n);
__asm__(".text\n"
	".globl norow_spin\n.type norow_spin,@function\nnorow_spin:\n"
	"\tmov %rbp, %r11\n\tmov $1, %rbp\n\tmov %rdi, %rcx\n1:\tdec %rcx\n\tjnz 1b\n"
	"\tmov %r11, %rbp\n\tret\n.size norow_spin, .-norow_spin\n"
	".globl loop_spin\n.type loop_spin,@function\nloop_spin:\n"
	"\t.cfi_startproc\n\t.cfi_def_cfa_offset 0\n"
	"\tmov %rdi, %rcx\n2:\tdec %rcx\n\tjnz 2b\n\tret\n\t.cfi_endproc\n"
	".size loop_spin, .-loop_spin\n"
	".globl unreadable_spin\n.type unreadable_spin,@function\nunreadable_spin:\n"
	"\t.cfi_startproc\n\tmov %rbp, %r11\n\tmov $1, %rbp\n\t.cfi_def_cfa %rbp, 16\n"
	"\tmov %rdi, %rcx\n3:\tdec %rcx\n\tjnz 3b\n\tmov %r11, %rbp\n\t.cfi_def_cfa %rsp, 8\n"
	"\tret\n\t.cfi_endproc\n.size unreadable_spin, .-unreadable_spin\n");

static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* called through a volatile pointer: no compiler turns the recursion into a loop */
static unsigned long (*volatile deep_fn)(int d, double end);

__attribute__((noipa)) static unsigned long deep(int d, double end)
{
	unsigned long s;

	if (d == 0) {
		while (now() < end)
			for (int i = 0; i < 100000; i++)
				sink += i;
		return sink;
	}
	s = deep_fn(d - 1, end);
	sink += s; /* work after the call: not a tail call */
	return s + (unsigned long)d;
}

static int run(const char *mode, double secs)
{
	double end = now() + secs;
	void (*spin)(unsigned long) = norow_spin;

	if (!strcmp(mode, "deep"))
		return deep_fn = deep, (int)(deep_fn(200, end) & 1);
	if (!strcmp(mode, "loop"))
		spin = loop_spin;
	else if (!strcmp(mode, "unreadable"))
		spin = unreadable_spin;
	else if (strcmp(mode, "norow"))
		return 2;
	while (now() < end)
		spin(1000000);
	return 0;
}

int main(int argc, char **argv)
{
	double secs = argc > 2 ? atof(argv[2]) : 5;

	if (argc < 2)
		return 2;
	if (argc > 3) {
		if (run(argv[1], 0.3) == 2)
			return 2;
		usleep((useconds_t)(atof(argv[3]) * 1e6));
	}
	return run(argv[1], secs) == 2 ? 2 : 0;
}
