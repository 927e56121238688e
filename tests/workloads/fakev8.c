// SPDX-License-Identifier: MIT
/*
 * A hostile "V8" for tests/integration/test_node.sh: copied to a file named node, it carries
 * forged v8dbg_* postmortem symbols (Node 20's names and values, or with FAKEV8_COMPRESSED a
 * layout ember does not read) and spins in frames built on rbp whose context and function slots
 * hold forged objects of its own:
 *   cycle     a JSFunction whose SharedFunctionInfo checks out and whose name is a cons string
 *             whose halves are itself (a cycle), of length 2^31 - 1
 *   long      ... whose name is a sequential string claiming 2^31 - 1 characters ('A' x 64 KiB
 *             readable, then unmapped memory)
 *   unmapped  a function slot pointing into unmapped memory
 *   moving    a thread rewrites the objects' words with random values all the time
 * It prints "ready PID UNIXTIME" and spins for SECONDS.
 *   fakev8 MODE SECONDS
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define V(name, val) __attribute__((used, visibility("default"))) const int v8dbg_##name = val;
V(HeapObjectTag, 1)
V(HeapObjectTagMask, 3)
V(SmiTag, 0)
V(SmiTagMask, 1)
#ifdef FAKEV8_COMPRESSED
V(SmiShiftSize, 0)
#else
V(SmiShiftSize, 31)
#endif
V(FirstNonstringType, 128)
V(StringRepresentationMask, 7)
V(StringEncodingMask, 8)
V(SeqStringTag, 0)
V(ConsStringTag, 1)
V(OneByteStringTag, 8)
V(ThinStringTag, 5)
V(SlicedStringTag, 3)
V(off_fp_context, -8)
V(off_fp_function, -16)
V(frametype_EntryFrame, 1)
V(frametype_ExitFrame, 3)
V(frametype_InterpretedFrame, 13)
V(frametype_TurbofanFrame, 16)
V(frametype_StubFrame, 17)
V(type_JSFunction__JS_FUNCTION_TYPE, 2066)
V(type_SharedFunctionInfo__SHARED_FUNCTION_INFO_TYPE, 262)
V(type_Script__SCRIPT_TYPE, 167)
V(type_ScopeInfo__SCOPE_INFO_TYPE, 261)
V(type_BytecodeArray__BYTECODE_ARRAY_TYPE, 177)
V(type_Code__CODE_TYPE, 178)
V(class_HeapObject__map__Map, 0)
V(class_Map__instance_type__uint16_t, 12)
V(class_JSFunction__shared__SharedFunctionInfo, 24)
V(class_SharedFunctionInfo__name_or_scope_info__Object, 16)
V(class_SharedFunctionInfo__script_or_debug_info__HeapObject, 32)
V(class_Script__name__Object, 16)
V(class_String__length__int32_t, 12)
V(class_SeqOneByteString__chars__char, 16)
V(class_ConsString__first__String, 16)
V(class_ConsString__second__String, 24)
V(scopeinfo_idx_ncontextlocals, 2)
V(scopeinfo_idx_first_vars, 3)

#define W 8 /* words per object */
static uint64_t *heap; /* objects, 8-aligned; tagged pointers are address + 1 */
static volatile int stop;

static uint64_t tag(uint64_t *p)
{
	return (uint64_t)(uintptr_t)p + 1;
}

static void set_type(uint64_t *map, uint16_t t)
{
	memcpy((char *)map + 12, &t, 2);
}

/* A frame on rbp with [rbp-8] = @ctx and [rbp-16] = @fn, spinning @n iterations. */
__attribute__((noinline)) static void js_frame(uint64_t ctx, uint64_t fn, unsigned long n)
{
	__asm__ volatile("call 2f\n\t"
			 "jmp 3f\n"
			 "2:\n\t"
			 "push %%rbp\n\t"
			 "mov %%rsp, %%rbp\n\t"
			 "push %0\n\t"
			 "push %1\n\t"
			 "mov %2, %%rcx\n"
			 "4:\n\t"
			 "dec %%rcx\n\t"
			 "jnz 4b\n\t"
			 "leave\n\t"
			 "ret\n"
			 "3:\n"
			 :
			 : "r"(ctx), "r"(fn), "r"(n)
			 : "rcx", "memory", "cc");
}

static void *mover(void *arg)
{
	uint64_t x = 88172645463325252ull;

	(void)arg;
	while (!stop) {
		for (int i = 0; i < 16 * W; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			heap[i] = (i & 1) ? x : (x & ~7ull) + 1;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "cycle";
	double secs = argc > 2 ? atof(argv[2]) : 5;
	uint64_t *fn, *fnmap, *sfi, *sfimap, *str, *strmap, *text, fnslot, ctx;
	struct timespec t0, t;
	pthread_t th;
	char *page;

	/* objects, then 64 KiB of 'A' and a page left unmapped after it */
	page = mmap(NULL, (64 << 10) + 2 * 4096 + 16 * W * 8, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return 1;
	heap = (uint64_t *)page;
	text = (uint64_t *)(page + 16 * W * 8);
	memset(text, 'A', 64 << 10);
	munmap((char *)text + (64 << 10) + 4096 - ((uintptr_t)text & 4095), 4096);
	fn = heap;
	fnmap = heap + W;
	sfi = heap + 2 * W;
	sfimap = heap + 3 * W;
	str = heap + 4 * W;
	strmap = heap + 5 * W;
	fn[0] = tag(fnmap);
	set_type(fnmap, 2066);
	fn[3] = tag(sfi); /* shared, at 24 */
	sfi[0] = tag(sfimap);
	set_type(sfimap, 262);
	sfi[2] = tag(str); /* name_or_scope_info, at 16 */
	sfi[4] = 0;	   /* no script */
	str[0] = tag(strmap);
	((int32_t *)str)[3] = 0x7fffffff; /* length, at 12 */
	if (!strcmp(mode, "long")) {
		/* a sequential one-byte string whose characters run into unmapped memory */
		set_type(strmap, 8);
		str = text - 2; /* chars at 16: the 'A's */
		text[-2] = tag(strmap);
		((int32_t *)(text - 2))[3] = 0x7fffffff;
		sfi[2] = tag(str);
	} else {
		set_type(strmap, 33); /* a cons string, both halves itself */
		str[2] = tag(str);
		str[3] = tag(str);
	}
	ctx = tag(heap + 6 * W);
	fnslot = !strcmp(mode, "unmapped") ? 0x10000001ull : tag(fn);
	if (!strcmp(mode, "moving") && pthread_create(&th, NULL, mover, NULL))
		return 1;
	printf("ready %d %.3f\n", getpid(), (double)time(NULL));
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		js_frame(ctx, fnslot, 1000000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	stop = 1;
	printf("done\n");
	return 0;
}
