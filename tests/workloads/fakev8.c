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
 *   lines     a function "srcfn" with a ScopeInfo whose position is 1000, in a Script
 *             "hostile.js" of 4096 characters: 499 CR LF, a lone CR, 'x', then line feeds:
 *             named "srcfn (hostile.js:501)" (as V8 counts lines: CR LF one end, CR one)
 *   manylines ... a source of 2 Mi line feeds (more lines than a script's line ends may hold):
 *             named without a line, the source counted unread
 *   bigsrc    16 such functions run in turns, each with a Script of its own over one source of
 *             4 Mi line feeds: 64 Mi characters of sources, more than emberd reads in a window
 *   inline    the frame runs "optimized code" of its own: a copy of its spin loop in an
 *             anonymous executable page, after an InstructionStream header whose Code says
 *             TurboFan, with a source position table and DeoptimizationData saying that the
 *             function "outerfn" inlined "innerfn" there: named outerfn;innerfn
 *   inlcycle  ... the inlined function's call position inlined in itself (a cycle): outerfn
 *             alone, the inlining data counted unreadable
 *   inlhuge   ... a source position table claiming 2^31 - 1 bytes: outerfn alone, unreadable
 * The fake says it is V8 11.3 (Node 20), whose inlining data ember reads.
 * It prints "ready PID UNIXTIME" and spins for SECONDS.
 *   fakev8 MODE SECONDS
 */
#include <pthread.h>
#include <stdbool.h>
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
V(class_Script__source__Object, 8)
V(class_String__length__int32_t, 12)
V(class_SeqOneByteString__chars__char, 16)
V(class_ConsString__first__String, 16)
V(class_ConsString__second__String, 24)
V(scopeinfo_idx_ncontextlocals, 2)
V(scopeinfo_idx_first_vars, 3)
V(type_InstructionStream__INSTRUCTION_STREAM_TYPE, 252)
V(CodeKindFieldMask, 15)
V(CodeKindBaseline, 11)
V(class_FixedArrayBase__length__SMI, 8)
V(class_FixedArray__data__uintptr_t, 16)
/* V8's version, as v8::internal::Version keeps it: 11.3 */
__attribute__((used, visibility("default"))) int _ZN2v88internal7Version6major_E = 11;
__attribute__((used, visibility("default"))) int _ZN2v88internal7Version6minor_E = 3;

#define W 8	/* words per object */
#define NBIG 16 /* bigsrc's functions */
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

/* a sequential one-byte string object for @s, its map @strmap (type 8) */
static uint64_t *seq_string(uint64_t *strmap, const char *s)
{
	uint64_t *o = calloc(4, sizeof(uint64_t));

	if (o) {
		o[0] = tag(strmap);
		((int32_t *)o)[3] = (int32_t)strlen(s);
		memcpy(o + 2, s, strlen(s));
	}
	return o;
}

/* @v zigzag-coded, 7 bits a byte (V8's source position table): bytes written at @b */
static size_t vlq(uint8_t *b, int64_t v)
{
	uint64_t u = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
	size_t n = 0;

	do {
		b[n++] = (uint8_t)((u & 0x7f) | (u > 0x7f ? 0x80 : 0));
		u >>= 7;
	} while (u);
	return n;
}

/*
 * The inline modes' "optimized code": an anonymous executable page holding, at offset 64, the
 * spin loop js_frame() runs (push rbp; mov rbp,rsp; push ctx; push fn; count rdx down; leave;
 * ret), after an InstructionStream header (V8 11.3: its map, its Code) and a Code (its
 * DeoptimizationData at 16, its source position table at 24, its InstructionStream at 32, the
 * instructions' start at 40, flags 13 = TurboFan at 48, size at 56). The function @fn's SFI
 * @sfi is named "outerfn"; the code says "innerfn" is inlined at every pc of it.
 */
static void (*jit_frame(const char *mode, uint64_t *fn, uint64_t *sfi,
			uint64_t *strmap))(uint64_t, uint64_t, unsigned long)
{
	static const uint8_t loop[] = { 0x55, 0x48, 0x89, 0xe5, 0x57, 0x56, 0x48, 0x89, 0xd1,
					0x48, 0xff, 0xc9, 0x75, 0xfb, 0xc9, 0xc3 };
	uint8_t *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t *o = calloc(64, sizeof(uint64_t)), *ismap = o, *is, *code = o + 8,
		 *codemap = o + 16, *dd = o + 24, *lits = o + 40, *inl = o + 44, *spt = o + 48,
		 *inner = o + 56, *sfimap = (uint64_t *)(uintptr_t)(sfi[0] - 1);
	uint8_t *b;
	size_t n = 0;

	(void)fn;
	if (page == MAP_FAILED || !o)
		return NULL;
	set_type(ismap, 252);
	is = (uint64_t *)(page + 64 - 16);
	is[0] = tag(ismap);
	is[1] = tag(code);
	memcpy(page + 64, loop, sizeof(loop));
	set_type(codemap, 178);
	code[0] = tag(codemap);
	code[2] = tag(dd);
	code[3] = tag(spt);
	code[4] = tag(is);
	code[5] = (uint64_t)(uintptr_t)(page + 64);
	((uint32_t *)code)[12] = 13;   /* flags: kind TURBOFAN */
	((uint32_t *)code)[14] = 4000; /* instruction size */
	/* DeoptimizationData: literals at 2, its SFI at 6, InliningPositions at 7 */
	dd[0] = tag(codemap);
	dd[1] = 8ull << 32;
	dd[2 + 2] = tag(lits);
	dd[2 + 6] = tag(sfi);
	dd[2 + 7] = tag(inl);
	lits[0] = tag(codemap);
	lits[1] = 1ull << 32;
	lits[2] = tag(inner);
	/* one record: innerfn (literal 0) called from a position of the function's own, or, in
	 * inlcycle, from a position inlined by that same record */
	inl[0] = tag(codemap);
	inl[1] = 16ull << 32;
	inl[2] = (!strcmp(mode, "inlcycle") ? 1ull << 31 : 0) | (40 << 1);
	inl[3] = 0;
	/* the table: at code offset 0, a position inlined by record 0 */
	spt[0] = tag(codemap);
	b = (uint8_t *)(spt + 2);
	n += vlq(b + n, 0);
	n += vlq(b + n, (int64_t)((1ull << 31) | (50 << 1)));
	spt[1] = (!strcmp(mode, "inlhuge") ? 0x7fffffffull : n) << 32;
	/* the SFIs: outerfn (the frame's), innerfn */
	sfi[2] = tag(seq_string(strmap, "outerfn"));
	inner[0] = tag(sfimap);
	inner[2] = tag(seq_string(strmap, "innerfn"));
	set_type(strmap, 8);
	return (void (*)(uint64_t, uint64_t, unsigned long))(void *)(page + 64);
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
	bool big = !strcmp(mode, "bigsrc");
	uint64_t fns[NBIG];

	if (!strcmp(mode, "lines") || !strcmp(mode, "manylines") || big) {
		/* a ScopeInfo (Node 20's layout: flags, parameters, 0 context locals, then the
		 * name, its variable's slot, the inferred name, start and end, the outer scope), a
		 * Script and its source: 16 bytes of header before @n line feeds */
		uint64_t *si = heap + 7 * W, *simap = heap + 15 * W, *nm = heap + 9 * W; /* si: 10 words */
		uint64_t *scr = heap + 10 * W, *scrmap = heap + 11 * W, *srcmap = heap + 12 * W;
		uint64_t *file = heap + 13 * W, *outer = heap + 14 * W, *src;
		int32_t n = !strcmp(mode, "lines") ? 4096 : big ? 4 << 20 : 2 << 20;
		char *lf = mmap(NULL, (size_t)n + 16, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (lf == MAP_FAILED)
			return 1;
		set_type(simap, 261);
		si[0] = tag(simap);
		si[1] = 0;		    /* flags */
		si[2] = 1ull << 32;	    /* parameters */
		si[3] = 0;		    /* context locals */
		si[4] = tag(nm);	    /* the function's name */
		si[5] = ~0ull << 32;	    /* its variable's slot: -1 */
		si[6] = tag(fnmap);	    /* the inferred name: not a string */
		si[7] = 1000ull << 32;	    /* start */
		si[8] = 1200ull << 32;	    /* end */
		si[9] = tag(outer);	    /* the outer ScopeInfo */
		outer[0] = tag(simap);
		set_type(strmap, 8);	    /* sequential one-byte strings */
		nm[0] = tag(strmap);
		((int32_t *)nm)[3] = 5;
		memcpy(nm + 2, "srcfn", 5);
		file[0] = tag(strmap);
		((int32_t *)file)[3] = 10;
		memcpy(file + 2, "hostile.js", 10);
		set_type(scrmap, 167);
		scr[0] = tag(scrmap);
		scr[1] = tag((uint64_t *)lf); /* source, at 8 */
		scr[2] = tag(file);	      /* name, at 16 */
		set_type(srcmap, 8);
		src = (uint64_t *)lf;
		src[0] = tag(srcmap);
		((int32_t *)src)[3] = n;
		memset(lf + 16, '\n', (size_t)n);
		if (n == 4096) {
			/* before the function: 499 CR LF (an end each), a lone CR (one more), 'x' */
			for (int i = 0; i < 998; i += 2)
				memcpy(lf + 16 + i, "\r\n", 2);
			memcpy(lf + 16 + 998, "\rx", 2);
		}
		sfi[2] = tag(si);
		sfi[4] = tag(scr);
		/* bigsrc: NBIG functions, each with a Script of its own over that one source, run
		 * in turns: more characters of sources than a window lets emberd read */
		for (int i = 0; big && i < NBIG; i++) {
			uint64_t *o = calloc(3 * W, sizeof(uint64_t));

			if (!o)
				return 1;
			o[0] = tag(fnmap);	     /* a JSFunction... */
			o[3] = tag(o + W);	     /* ...its SharedFunctionInfo */
			o[W] = tag(sfimap);
			o[W + 2] = tag(si);
			o[W + 4] = tag(o + 2 * W); /* ...its Script */
			o[2 * W] = tag(scrmap);
			o[2 * W + 1] = tag(src);
			o[2 * W + 2] = tag(file);
			fns[i] = tag(o);
		}
	}
	void (*frame)(uint64_t, uint64_t, unsigned long) = js_frame;

	if (!strncmp(mode, "inl", 3) && !(frame = jit_frame(mode, fn, sfi, strmap)))
		return 1;
	ctx = tag(heap + 6 * W);
	fnslot = !strcmp(mode, "unmapped") ? 0x10000001ull : tag(fn);
	if (!strcmp(mode, "moving") && pthread_create(&th, NULL, mover, NULL))
		return 1;
	printf("ready %d %.3f\n", getpid(), (double)time(NULL));
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned int i = 0;; i++) {
		frame(ctx, big ? fns[i % NBIG] : fnslot, 1000000);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 >= secs)
			break;
	}
	stop = 1;
	printf("done\n");
	return 0;
}
