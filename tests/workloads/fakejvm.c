// SPDX-License-Identifier: MIT
/*
 * A hostile JVM (tests/integration/test_java.sh): loads a real libjvm.so (no VM created: its
 * static constructors fill the vmStructs tables), then forges what emberd reads from a JVM's
 * memory: CodeCache::_heaps points at a code heap of its own over a page of code it runs, whose
 * segment map, code blob, nmethod, Method, ConstMethod, ConstantPool, Klass and Symbols are made
 * up, one way per MODE:
 *   hops     a segment map of 1s: the blob's start is more hops away than the walk follows
 *   free     a segment map of 0xff (free segments)
 *   frame    a blob whose frame size sends the walk 40 KiB up the stack, past its top (the code
 *            runs on a thread whose 64 KiB stack has 128 KiB of PROT_NONE above it: on the
 *            main thread's stack what lies 40 KiB up depends on the size of the environment,
 *            and with 40 KiB of it the read succeeded), with no prologue and an epilogue that
 *            hs_popped() does not recognise, so no sample of it can step
 *   names    a well-formed frame whose class name has 600 bytes and whose method name claims
 *            65535 (all readable)
 *   unmapped the same, the method name running into an unmapped page after 10 bytes
 *   moving   the same as names, with pointers, indexes, lengths and the segment map rewritten
 *            all the time by a second thread
 *   fakejvm LIBJVM MODE SECONDS   prints "ready PID UNIXTIME", runs, then "done UNIXTIME"
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static void *dl;

static void die(const char *what)
{
	fprintf(stderr, "fakejvm: %s\n", what);
	exit(2);
}

static uint64_t sym64(const char *n)
{
	uint64_t *p = dlsym(dl, n);

	if (!p)
		die(n);
	return *p;
}

/* A field's offset (or a static field's address in *@addr) from the loaded VM's own table. */
static uint64_t field(const char *type, const char *name, void **addr)
{
	char *e = *(char **)dlsym(dl, "gHotSpotVMStructs");
	uint64_t stride = sym64("gHotSpotVMStructEntryArrayStride"),
		 tn = sym64("gHotSpotVMStructEntryTypeNameOffset"),
		 fn = sym64("gHotSpotVMStructEntryFieldNameOffset"),
		 off = sym64("gHotSpotVMStructEntryOffsetOffset"),
		 ad = sym64("gHotSpotVMStructEntryAddressOffset");

	for (;; e += stride) {
		const char *t = *(const char **)(e + tn), *f = *(const char **)(e + fn);

		if (!t)
			break;
		if (f && !strcmp(t, type) && !strcmp(f, name)) {
			if (addr)
				*addr = *(void **)(e + ad);
			return *(uint64_t *)(e + off);
		}
	}
	fprintf(stderr, "fakejvm: no %s::%s\n", type, name);
	exit(2);
}

static uint64_t type_size(const char *type)
{
	char *e = *(char **)dlsym(dl, "gHotSpotVMTypes");
	uint64_t stride = sym64("gHotSpotVMTypeEntryArrayStride"),
		 tn = sym64("gHotSpotVMTypeEntryTypeNameOffset"),
		 sz = sym64("gHotSpotVMTypeEntrySizeOffset");

	for (;; e += stride) {
		const char *t = *(const char **)(e + tn);

		if (!t)
			break;
		if (!strcmp(t, type))
			return *(uint64_t *)(e + sz);
	}
	die(type);
	return 0;
}

#define PUT64(base, off, v) (*(volatile uint64_t *)((char *)(base) + (off)) = (uint64_t)(v))
#define PUT32(base, off, v) (*(volatile int32_t *)((char *)(base) + (off)) = (int32_t)(v))
#define PUT16(base, off, v) (*(volatile uint16_t *)((char *)(base) + (off)) = (uint16_t)(v))

/* push rbp; mov rbp, rsp; 1: dec rdi; jnz 1b; pop rbp; ret */
static const unsigned char code_bytes[] = { 0x55, 0x48, 0x89, 0xe5, 0x48, 0xff, 0xcf,
					    0x75, 0xfb, 0x5d, 0xc3 };
/* "frame": the same, returning by leave; pop rcx; jmp rcx */
static const unsigned char code_frame[] = { 0x55, 0x48, 0x89, 0xe5, 0x48, 0xff, 0xcf,
					    0x75, 0xfb, 0xc9, 0x59, 0xff, 0xe1 };
#define RUN_STACK 65536
#define RUN_ABOVE 131072

static char *heap, *segmap, *data, *tail;
static volatile int stop;
static uint64_t o_method, o_cm, o_cp, o_ni, o_holder, o_kname, o_len, o_body, cp_size;

static void *code_run;
static time_t run_end;

static void *run_code(void *arg)
{
	(void)arg;
	while (time(NULL) < run_end)
		((void (*)(uint64_t))(uintptr_t)code_run)(1000000);
	return NULL;
}

static void *mover(void *arg)
{
	unsigned int seed = 1;

	(void)arg;
	while (!stop) {
		/* pointers anywhere in the forged data or past it, lengths of anything */
		PUT64(data, 0 + o_cm, data + (rand_r(&seed) % 8192));
		PUT64(data, 1024 + o_cp, data + (rand_r(&seed) % 8192));
		PUT16(data, 1024 + o_ni, rand_r(&seed));
		PUT64(data, 3072 + o_holder, (uint64_t)rand_r(&seed) << (rand_r(&seed) % 40));
		PUT16(data, 4096 + o_len, rand_r(&seed));
		segmap[rand_r(&seed) % 64] = (char)rand_r(&seed);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	uint64_t ga_len, ga_data, h_mem, h_seg, h_log2, vs_low, vs_high, b_name, b_fs, b_fc, b_code,
		hb, seconds;
	void *heaps_addr = NULL;
	const char *mode;
	char ga[64] = { 0 }, codeheap[512] = { 0 }, *blob, *code;
	long pg = sysconf(_SC_PAGESIZE);
	struct timespec ts;
	pthread_t t, b;
	pthread_attr_t ba;
	char *bstack;
	int frame;

	if (argc < 4)
		die("usage: fakejvm LIBJVM MODE SECONDS");
	mode = argv[2];
	frame = !strcmp(mode, "frame");
	seconds = strtoull(argv[3], NULL, 10);
	dl = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!dl)
		die(dlerror());
	(void)field("CodeCache", "_heaps", &heaps_addr);
	ga_len = field("GrowableArrayBase", "_len", NULL);
	ga_data = field("GrowableArray<int>", "_data", NULL);
	h_mem = field("CodeHeap", "_memory", NULL);
	h_seg = field("CodeHeap", "_segmap", NULL);
	h_log2 = field("CodeHeap", "_log2_segment_size", NULL);
	vs_low = field("VirtualSpace", "_low_boundary", NULL);
	vs_high = field("VirtualSpace", "_high_boundary", NULL);
	b_name = field("CodeBlob", "_name", NULL);
	b_fs = field("CodeBlob", "_frame_size", NULL);
	b_fc = field("CodeBlob", "_frame_complete_offset", NULL);
	b_code = field("CodeBlob", "_code_begin", NULL);
	o_method = field("CompiledMethod", "_method", NULL);
	o_cm = field("Method", "_constMethod", NULL);
	o_cp = field("ConstMethod", "_constants", NULL);
	o_ni = field("ConstMethod", "_name_index", NULL);
	o_holder = field("ConstantPool", "_pool_holder", NULL);
	o_kname = field("Klass", "_name", NULL);
	o_len = field("Symbol", "_length", NULL);
	o_body = field("Symbol", "_body", NULL);
	cp_size = type_size("ConstantPool");
	hb = type_size("HeapBlock");

	/* the code heap: 64 KiB of 64-byte segments; the block at segment 8, its code at 16 */
	heap = mmap(NULL, 65536, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	segmap = calloc(1024, 1);
	/* forged objects, then a page that is not mapped: a Symbol runs into it */
	data = mmap(NULL, 4 * (size_t)pg + 65536 + (size_t)pg, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (heap == MAP_FAILED || data == MAP_FAILED || !segmap)
		die("mmap");
	tail = data + 4 * pg + 65536;
	munmap(tail, (size_t)pg);
	blob = heap + 8 * 64 + hb;
	code = heap + 16 * 64;
	if (frame)
		memcpy(code, code_frame, sizeof(code_frame));
	else
		memcpy(code, code_bytes, sizeof(code_bytes));
	for (int s = 0; s < 1024; s++)
		segmap[s] = (char)(s < 8 ? 0xff : s == 8 ? 0 : (s - 8 > 254 ? 254 : s - 8));
	if (!strcmp(mode, "hops"))
		memset(segmap, 1, 1024);
	else if (!strcmp(mode, "free"))
		memset(segmap, 0xff, 1024);
	PUT64(blob, b_name, "nmethod");
	PUT32(blob, b_fs, frame ? 5000 : 2);
	PUT32(blob, b_fc, frame ? 0 : 4);
	PUT64(blob, b_code, code);
	PUT64(blob, o_method, data);
	/* Method at data, ConstMethod at +1024, Klass at +2048, ConstantPool at +3072 (the method's
	 * name at pool index 1), the class's Symbol at +4096 (600 'A's), the method's at +8192
	 * (65535 'B's claimed, all readable) or, "unmapped", 10 bytes before the unmapped page */
	memset(data + 8192, 'B', (size_t)(tail - data - 8192));
	PUT64(data, o_cm, data + 1024);
	PUT64(data, 1024 + o_cp, data + 3072);
	PUT16(data, 1024 + o_ni, 1);
	PUT64(data, 3072 + o_holder, data + 2048);
	PUT64(data, 2048 + o_kname, data + 4096);
	PUT16(data, 4096 + o_len, 600);
	memset(data + 4096 + o_body, 'A', 600);
	if (!strcmp(mode, "unmapped")) {
		PUT64(data, 3072 + cp_size + 8, tail - o_body - 10);
		PUT16(tail - o_body - 10, o_len, 65535);
	} else {
		PUT64(data, 3072 + cp_size + 8, data + 8192);
		PUT16(data + 8192, o_len, 65535);
	}
	/* the code heap and the list of heaps: CodeCache::_heaps */
	PUT64(codeheap, h_mem + vs_low, heap);
	PUT64(codeheap, h_mem + vs_high, heap + 65536);
	PUT64(codeheap, h_seg + vs_low, segmap);
	PUT32(codeheap, h_log2, 6);
	{
		static void *list[1];

		list[0] = codeheap;
		PUT32(ga, ga_len, 1);
		PUT64(ga, ga_data, list);
	}
	*(void **)heaps_addr = ga;
	if (!strcmp(mode, "moving") && pthread_create(&t, NULL, mover, NULL))
		die("thread");
	/* the stack the code runs on, with nothing readable for 128 KiB above it */
	bstack = mmap(NULL, RUN_STACK + RUN_ABOVE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		      0);
	if (bstack == MAP_FAILED || mprotect(bstack, RUN_STACK, PROT_READ | PROT_WRITE))
		die("stack");
	code_run = code;
	clock_gettime(CLOCK_REALTIME, &ts);
	printf("ready %d %ld.%03ld\n", getpid(), (long)ts.tv_sec, ts.tv_nsec / 1000000);
	fflush(stdout);
	run_end = time(NULL) + (time_t)seconds;
	if (pthread_attr_init(&ba) || pthread_attr_setstack(&ba, bstack, RUN_STACK) ||
	    pthread_create(&b, &ba, run_code, NULL))
		die("thread");
	pthread_join(b, NULL);
	stop = 1;
	if (!strcmp(mode, "moving"))
		pthread_join(t, NULL);
	clock_gettime(CLOCK_REALTIME, &ts);
	printf("done %ld.%03ld\n", (long)ts.tv_sec, ts.tv_nsec / 1000000);
	return 0;
}
