/* SPDX-License-Identifier: MIT */
/*
 * rtintro: the introspection data two managed runtimes publish in their own files, read from the
 * file alone (no process, no runtime started), for a later stack walker of their frames.
 *
 * HotSpot (libjvm.so) exports gHotSpotVMStructs / VMTypes / VMIntConstants / VMLongConstants:
 * pointers to NULL-terminated arrays of entries whose layout (stride, offset of each member) is
 * itself exported as gHotSpotVM*Entry*Offset / *ArrayStride. The arrays hold pointers to names
 * (and static addresses), which in a shared object are R_X86_64_RELATIVE relocations: the file
 * holds zero (or the addend) where the loader writes base + addend, so they are resolved here
 * from .rela.dyn, never by running the JVM.
 *
 * V8 (the node executable or libnode.so) carries postmortem constants v8dbg_*: one 4-byte int
 * object per constant (frame-slot offsets from the frame pointer, frame type numbers, instance
 * type tags, field offsets inside heap objects); the value is the object's content, not the
 * symbol's value. Node 24.11+ no longer exports some of them (hidden visibility), so .symtab is
 * read as well as .dynsym; a stripped Node without them is reported, not guessed.
 *
 * Every value a walker needs is a named item; an item the file lacks is marked missing (the
 * names can be listed), never replaced by a guess. Whatever the file says is bounded first
 * (strides, counts, string lengths, sizes): a forged file is refused with a reason, counted in
 * struct rtintro_stats. Non-logging; thread-safe (no shared state).
 */
#ifndef EMBER_RTINTRO_H
#define EMBER_RTINTRO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Why a file was refused (or an item dropped): indexes of rtintro_stats.reason[]. */
enum rtintro_reason {
	RTI_OK = 0,
	RTI_NOT_ELF,		/* not a 64-bit little-endian ELF we can read */
	RTI_NO_TABLES,		/* no gHotSpotVM* (or v8dbg_*) symbols at all: not this runtime */
	RTI_BAD_LAYOUT,		/* a stride or member offset out of bounds */
	RTI_BAD_POINTER,	/* a table or name pointer outside the file's loaded segments */
	RTI_BAD_STRING,		/* a name not NUL-terminated within RTI_MAX_NAME */
	RTI_TOO_MANY,		/* more entries (or relocations, symbols) than the bounds allow */
	RTI_BAD_VALUE,		/* an offset/size beyond RTI_MAX_CLASS_SIZE, a v8dbg_ not 4 bytes */
	RTI_MISSING,		/* a required item absent: the runtime version is not supported */
	RTI__REASONS
};

struct rtintro_stats {
	uint64_t reason[RTI__REASONS];	/* files (or items) refused per reason */
	uint64_t entries;		/* table entries read */
	uint64_t relocs;		/* R_X86_64_RELATIVE relocations indexed */
};

const char *rtintro_reason_name(enum rtintro_reason r);

/* Bounds on what a file may make us read. */
#define RTI_MAX_STRIDE		256u
#define RTI_MAX_ENTRIES		65536u
#define RTI_MAX_NAME		128u
#define RTI_MAX_RELOCS		(4u << 20)
#define RTI_MAX_CLASS_SIZE	65536u

/*
 * HotSpot items: X(id, type, field(s), kind, required). Fields separated by '|' are the names the
 * same thing had in other JDKs (the first found wins). kind: 'o' a field offset, 's' sizeof the
 * type, 'a' a static field's address (file virtual address), 'i'/'l' an int/long constant (type
 * is "" and field the constant's name).
 */
#define RTI_HOTSPOT_ITEMS(X) \
	X(CODEBLOB_SIZEOF,	"CodeBlob", "",				's', true) \
	X(CODEBLOB_NAME,	"CodeBlob", "_name",			'o', true) \
	X(CODEBLOB_FRAME_COMPLETE, "CodeBlob", "_frame_complete_offset", 'o', true) \
	X(CODEBLOB_FRAME_SIZE,	"CodeBlob", "_frame_size",		'o', true) \
	X(CODEBLOB_CODE_BEGIN,	"CodeBlob", "_code_begin|_code_offset",	'o', true) \
	X(CODEBLOB_CODE_END,	"CodeBlob", "_code_end|_data_offset",	'o', true) \
	X(CODEBLOB_SIZE,	"CodeBlob", "_size",			'o', true) \
	X(CODECACHE_HEAPS,	"CodeCache", "_heaps",			'a', true) \
	X(CODECACHE_LOW,	"CodeCache", "_low_bound",		'a', false) \
	X(CODECACHE_HIGH,	"CodeCache", "_high_bound",		'a', false) \
	X(CODEHEAP_MEMORY,	"CodeHeap", "_memory",			'o', true) \
	X(CODEHEAP_SEGMAP,	"CodeHeap", "_segmap",			'o', true) \
	X(CODEHEAP_LOG2_SEG,	"CodeHeap", "_log2_segment_size",	'o', true) \
	X(VSPACE_LOW,		"VirtualSpace", "_low_boundary",	'o', true) \
	X(VSPACE_HIGH,		"VirtualSpace", "_high_boundary",	'o', true) \
	X(VSPACE_LOW_ADDR,	"VirtualSpace", "_low",			'o', false) \
	X(HEAPBLOCK_SIZEOF,	"HeapBlock", "",			's', true) \
	X(GROWABLE_LEN,		"GrowableArrayBase", "_len",		'o', false) \
	X(GROWABLE_INT_DATA,	"GrowableArray<int>", "_data",		'o', false) \
	X(NMETHOD_SIZEOF,	"nmethod", "",				's', true) \
	X(NMETHOD_METHOD,	"nmethod|CompiledMethod", "_method",	'o', true) \
	X(NMETHOD_COMPILE_ID,	"nmethod", "_compile_id",		'o', false) \
	X(NMETHOD_ORIG_PC,	"nmethod", "_orig_pc_offset",		'o', false) \
	X(NMETHOD_SCOPES_DATA,	"nmethod|CompiledMethod", \
		"_scopes_data_offset|_scopes_data_begin",		'o', true) \
	X(NMETHOD_SCOPES_PCS,	"nmethod", "_scopes_pcs_offset",	'o', true) \
	X(NMETHOD_METADATA,	"nmethod", "_metadata_offset|_oops_offset", 'o', false) \
	X(NMETHOD_DEPENDENCIES,	"nmethod", "_dependencies_offset",	'o', false) \
	X(NMETHOD_IMMUTABLE,	"nmethod", "_immutable_data",		'o', false) \
	X(PCDESC_SIZEOF,	"PcDesc", "",				's', true) \
	X(PCDESC_PC_OFFSET,	"PcDesc", "_pc_offset",			'o', true) \
	X(PCDESC_SCOPE_DECODE,	"PcDesc", "_scope_decode_offset",	'o', true) \
	X(METHOD_SIZEOF,	"Method", "",				's', true) \
	X(METHOD_CONSTMETHOD,	"Method", "_constMethod",		'o', true) \
	X(CONSTMETHOD_SIZEOF,	"ConstMethod", "",			's', true) \
	X(CONSTMETHOD_CONSTANTS, "ConstMethod", "_constants",		'o', true) \
	X(CONSTMETHOD_CODE_SIZE, "ConstMethod", "_code_size",		'o', true) \
	X(CONSTMETHOD_NAME_INDEX, "ConstMethod", "_name_index",		'o', true) \
	X(CONSTMETHOD_SIG_INDEX, "ConstMethod", "_signature_index",	'o', true) \
	X(CONSTMETHOD_FLAGS,	"ConstMethod", "_flags|_flags._flags",	'o', false) \
	X(CPOOL_SIZEOF,		"ConstantPool", "",			's', true) \
	X(CPOOL_POOL_HOLDER,	"ConstantPool", "_pool_holder",		'o', true) \
	X(CPOOL_SOURCE_FILE,	"ConstantPool", "_source_file_name_index", 'o', false) \
	X(IKLASS_SOURCE_FILE,	"InstanceKlass", "_source_file_name_index", 'o', false) \
	X(KLASS_SIZEOF,		"Klass", "",				's', true) \
	X(KLASS_NAME,		"Klass", "_name",			'o', true) \
	X(SYMBOL_SIZEOF,	"Symbol", "",				's', true) \
	X(SYMBOL_LENGTH,	"Symbol", "_length",			'o', true) \
	X(SYMBOL_BODY,		"Symbol", "_body",			'o', true) \
	X(OOPDESC_SIZEOF,	"oopDesc", "",				's', false) \
	X(VM_RELEASE,		"Abstract_VM_Version", "_s_vm_release",	'a', true) \
	X(VM_MAJOR,		"Abstract_VM_Version", "_vm_major_version", 'a', true) \
	X(VM_MINOR,		"Abstract_VM_Version", "_vm_minor_version", 'a', false) \
	X(VM_SECURITY,		"Abstract_VM_Version", "_vm_security_version", 'a', false) \
	X(FRAME_INTERP_METHOD,	"", "frame::interpreter_frame_method_offset", 'i', false) \
	X(FRAME_INTERP_SENDER_SP, "", "frame::interpreter_frame_sender_sp_offset", 'i', false) \
	X(FRAME_INTERP_LAST_SP,	"", "frame::interpreter_frame_last_sp_offset", 'i', false) \
	X(FRAME_INTERP_BCP,	"", "frame::interpreter_frame_bcp_offset", 'i', false) \
	X(FRAME_INTERP_LOCALS,	"", "frame::interpreter_frame_locals_offset", 'i', false) \
	X(OOP_SIZE,		"", "oopSize",				'i', true) \
	X(LOG_BYTES_PER_WORD,	"", "LogBytesPerWord",			'i', false) \
	X(CONSTMETHOD_HAS_LINES, "", "ConstMethod::_has_linenumber_table|" \
		"ConstMethodFlags::_misc_has_linenumber_table",		'i', false)

enum rtintro_hs_item {
#define RTI_X(id, t, f, k, r) RTI_HS_##id,
	RTI_HOTSPOT_ITEMS(RTI_X)
#undef RTI_X
	RTI_HS__COUNT
};

struct rtintro_hotspot {
	uint64_t val[RTI_HS__COUNT];	/* offset, size, address or constant: by item; field
					 * offsets ('o') only once offsets_resolved */
	bool have[RTI_HS__COUNT];
	uint64_t where[RTI_HS__COUNT];	/* 'o' items: file vaddr of the word holding the offset */
	uint64_t stride_va, offset_member_va; /* the layout symbols of the struct table */
	uint64_t stride, offset_member;	/* the layout the struct table was read with */
	bool offsets_resolved;		/* field offsets read from a running VM */
	unsigned int missing_required;	/* required items not found: the file is not usable */
	unsigned int n_structs, n_types, n_ints, n_longs; /* entries of each table */
	bool layout_known;		/* entry layout from vmStructs.hpp, checked against the
					 * relocations: the file had the layout symbols as zero */
	int major;			/* the VM's feature version (17, 25), 0 when unknown */
	char release[64];		/* Abstract_VM_Version::_s_vm_release ("17.0.13+11-..."), or "" */
};

/* The item's "Type::field" (or constant) name and whether the walker requires it. */
const char *rtintro_hs_item_name(enum rtintro_hs_item id);
bool rtintro_hs_item_required(enum rtintro_hs_item id);

/*
 * Reads libjvm.so open at @fd (borrowed). 0 with @ret filled (items absent marked, see
 * missing_required), or -reason (enum rtintro_reason, also counted in @st when not NULL) when
 * the file has no tables or they break a bound. *@ret is always initialised.
 */
int rtintro_hotspot_read(int fd, struct rtintro_hotspot *ret, struct rtintro_stats *st);
/* The same with the file's symbols from @es, its image as the symbolizer read it (elfsym.h's
 * runtime symbols: no second parse of its tables); only the relocations are read from @fd. */
struct elfsym;
int rtintro_hotspot_read_image(int fd, const struct elfsym *es, struct rtintro_hotspot *ret,
			       struct rtintro_stats *st);

/*
 * HotSpot computes the field offsets of its struct table (and the entry layout symbols) in a
 * static constructor of libjvm: the file holds zero there, a loaded libjvm the values. So the
 * per-file read gives names, sizes, static addresses and constants, and where each offset lives;
 * this completes the offsets from a running (or merely loaded) libjvm whose load bias is @bias,
 * through @read (bounded reads of that process's memory: false when unreadable). It first checks
 * that the VM's own layout symbols agree with the layout the file was read with. 0, or -reason.
 */
typedef bool (*rtintro_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);
int rtintro_hotspot_resolve(struct rtintro_hotspot *h, uint64_t bias, rtintro_read_fn read,
			    void *ctx, struct rtintro_stats *st);

/*
 * V8 items: X(id, name(s) after "v8dbg_", required). Values are the 4-byte contents (signed).
 */
#define RTI_V8_ITEMS(X) \
	X(HEAP_OBJECT_TAG,	"HeapObjectTag",			true) \
	X(HEAP_OBJECT_TAG_MASK,	"HeapObjectTagMask",			true) \
	X(SMI_TAG,		"SmiTag",				true) \
	X(SMI_TAG_MASK,		"SmiTagMask",				true) \
	X(SMI_SHIFT_SIZE,	"SmiShiftSize",				true) \
	X(POINTER_SIZE_LOG2,	"SystemPointerSizeLog2|PointerSizeLog2", false) \
	X(FIRST_NONSTRING_TYPE,	"FirstNonstringType",			true) \
	X(STRING_REPR_MASK,	"StringRepresentationMask",		true) \
	X(STRING_ENCODING_MASK,	"StringEncodingMask",			true) \
	X(SEQ_STRING_TAG,	"SeqStringTag",				true) \
	X(CONS_STRING_TAG,	"ConsStringTag",			true) \
	X(ONE_BYTE_STRING_TAG,	"OneByteStringTag",			true) \
	X(OFF_FP_CONTEXT,	"off_fp_context",			true) \
	X(OFF_FP_FUNCTION,	"off_fp_function",			true) \
	X(OFF_FP_BYTECODE_ARRAY, "off_fp_bytecode_array",		false) \
	X(OFF_FP_BYTECODE_OFFSET, "off_fp_bytecode_offset",		false) \
	X(FT_ENTRY,		"frametype_EntryFrame",			true) \
	X(FT_EXIT,		"frametype_ExitFrame",			true) \
	X(FT_INTERPRETED,	"frametype_InterpretedFrame|frametype_UnoptimizedFrame", true) \
	X(FT_BASELINE,		"frametype_BaselineFrame",		false) \
	X(FT_OPTIMIZED, \
		"frametype_OptimizedFrame|" \
		"frametype_TurbofanFrame|" \
		"frametype_TurbofanJSFrame", true) \
	X(FT_MAGLEV,		"frametype_MaglevFrame",		false) \
	X(FT_STUB,		"frametype_StubFrame",			true) \
	X(FT_BUILTIN,		"frametype_BuiltinFrame",		false) \
	X(FT_BUILTIN_EXIT,	"frametype_BuiltinExitFrame",		false) \
	X(FT_INTERNAL,		"frametype_InternalFrame",		false) \
	X(FT_CONSTRUCT,		"frametype_ConstructFrame",		false) \
	X(TYPE_JS_FUNCTION,	"type_JSFunction__JS_FUNCTION_TYPE",	true) \
	X(TYPE_SFI,		"type_SharedFunctionInfo__SHARED_FUNCTION_INFO_TYPE", true) \
	X(TYPE_SCRIPT,		"type_Script__SCRIPT_TYPE",		true) \
	X(TYPE_SCOPE_INFO,	"type_ScopeInfo__SCOPE_INFO_TYPE",	true) \
	X(TYPE_BYTECODE_ARRAY,	"type_BytecodeArray__BYTECODE_ARRAY_TYPE", true) \
	X(TYPE_CODE,		"type_Code__CODE_TYPE",			true) \
	X(HEAPOBJECT_MAP, \
		"class_HeapObject__map__Map|" \
		"class_HeapObject__map__Tagged_Map_", true) \
	X(MAP_INSTANCE_TYPE,	"class_Map__instance_type__uint16_t",	true) \
	X(JSFUNCTION_SHARED, \
		"class_JSFunction__shared__SharedFunctionInfo|" \
		"class_JSFunction__shared_function_info__Tagged_SharedFunctionInfo_", true) \
	X(JSFUNCTION_CODE, \
		"class_JSFunction__code__Code|" \
		"class_JSFunction__code__Tagged_Code_|" \
		"class_JSFunction__code__CodeT", false) \
	X(CODE_INSTRUCTION_START, \
		"class_Code__instruction_start__uintptr_t|" \
		"class_Code__instruction_start__Address", false) \
	X(CODE_INSTRUCTION_SIZE, "class_Code__instruction_size__int",	false) \
	X(CODE_FLAGS,		"class_Code__flags__uint32_t",		false) \
	X(CODE_ISTREAM,		"class_Code__instruction_stream__Tagged_InstructionStream_", false) \
	X(CODE_DEOPT_DATA, \
		"class_Code__deoptimization_data__FixedArray|" \
		"class_Code__deoptimization_data__Tagged_FixedArray_|" \
		"class_Code__deoptimization_data__Tagged_TrustedFixedArray_", false) \
	X(CODE_SOURCE_POSITIONS, \
		"class_Code__source_position_table__ByteArray|" \
		"class_Code__source_position_table__Tagged_ByteArray_|" \
		"class_Code__source_position_table__Tagged_TrustedByteArray_", false) \
	X(ISTREAM_START,	"class_InstructionStream__instruction_start__uintptr_t", false) \
	X(CODE_KIND_MASK,	"CodeKindFieldMask",			false) \
	X(CODE_KIND_BASELINE,	"CodeKindBaseline",			false) \
	X(DD_LITERALS,		"DeoptimizationDataLiteralArrayIndex",	false) \
	X(DD_INLINING_POSITIONS, "DeoptimizationDataInliningPositionsIndex", false) \
	X(DD_SFI,		"DeoptimizationDataSharedFunctionInfoIndex", false) \
	X(DD_SFI_WRAPPED,	"DeoptimizationDataWrappedSharedFunctionInfoIndex", false) \
	X(SFI_WRAPPER_SFI, \
		"class_SharedFunctionInfoWrapper__shared_info__Tagged_SharedFunctionInfo_", false) \
	X(TYPE_ISTREAM,		"type_InstructionStream__INSTRUCTION_STREAM_TYPE", false) \
	X(SFI_NAME_OR_SCOPE, \
		"class_SharedFunctionInfo__name_or_scope_info__Object|" \
		"class_SharedFunctionInfo__name_or_scope_info__Tagged_Object_|" \
		"class_SharedFunctionInfo__name_or_scope_info__Tagged_NameOrScopeInfoT_", true) \
	X(SFI_SCRIPT, \
		"class_SharedFunctionInfo__script_or_debug_info__Object|" \
		"class_SharedFunctionInfo__script_or_debug_info__HeapObject|" \
		"class_SharedFunctionInfo__script__Tagged_HeapObject_", true) \
	X(SFI_FUNCTION_DATA, \
		"class_SharedFunctionInfo__function_data__Object|" \
		"class_SharedFunctionInfo__function_data__Tagged_Object_", false) \
	X(SCRIPT_NAME, \
		"class_Script__name__Object|" \
		"class_Script__name__Tagged_Object_", true) \
	X(SCRIPT_LINE_ENDS, \
		"class_Script__line_ends__Object|" \
		"class_Script__line_ends__Tagged_Object_", false) \
	X(SCRIPT_SOURCE, \
		"class_Script__source__Object|" \
		"class_Script__source__Tagged_Object_", false) \
	X(STRING_LENGTH,	"class_String__length__int32_t|class_String__length__SMI", true) \
	X(SEQ_ONE_BYTE_CHARS,	"class_SeqOneByteString__chars__char",	true) \
	X(SEQ_TWO_BYTE_CHARS,	"class_SeqTwoByteString__chars__char",	false) \
	X(CONS_FIRST, \
		"class_ConsString__first__String|" \
		"class_ConsString__first__Tagged_String_", false) \
	X(CONS_SECOND, \
		"class_ConsString__second__String|" \
		"class_ConsString__second__Tagged_String_", false) \
	X(THIN_STRING_TAG,	"ThinStringTag",			false) \
	X(SLICED_STRING_TAG,	"SlicedStringTag",			false) \
	X(THIN_ACTUAL, \
		"class_ThinString__actual__String|" \
		"class_ThinString__actual__Tagged_String_", false) \
	X(SLICED_PARENT, \
		"class_SlicedString__parent__String|" \
		"class_SlicedString__parent__Tagged_String_", false) \
	X(SLICED_OFFSET,	"class_SlicedString__offset__SMI",	false) \
	X(SCOPEINFO_IDX_NLOCALS, "scopeinfo_idx_ncontextlocals",		false) \
	X(SCOPEINFO_IDX_FIRST_VARS, "scopeinfo_idx_first_vars",		false) \
	X(FIXED_ARRAY_LENGTH,	"class_FixedArrayBase__length__SMI",	false) \
	X(FIXED_ARRAY_DATA,	"class_FixedArray__data__uintptr_t",	false) \
	X(BYTECODE_ARRAY_SPT, \
		"class_BytecodeArray__source_position_table__Object|" \
		"class_BytecodeArray__source_position_table__Tagged_HeapObject_", false)

enum rtintro_v8_item {
#define RTI_X(id, n, r) RTI_V8_##id,
	RTI_V8_ITEMS(RTI_X)
#undef RTI_X
	RTI_V8__COUNT
};

struct rtintro_v8 {
	int32_t val[RTI_V8__COUNT];
	bool have[RTI_V8__COUNT];
	unsigned int missing_required;
	unsigned int n_symbols;		/* distinct v8dbg_* symbols the file has */
	bool from_symtab_only;		/* some were found only in .symtab (not exported) */
	int major, minor, build, patch;	/* v8::internal::Version, -1 when absent */
};

const char *rtintro_v8_item_name(enum rtintro_v8_item id);
bool rtintro_v8_item_required(enum rtintro_v8_item id);

/* Reads node / libnode.so open at @fd (borrowed); as rtintro_hotspot_read(). */
int rtintro_v8_read(int fd, struct rtintro_v8 *ret, struct rtintro_stats *st);
/* The same with the file's symbols from its image @es (as rtintro_hotspot_read_image()). */
int rtintro_v8_read_image(int fd, const struct elfsym *es, struct rtintro_v8 *ret,
			  struct rtintro_stats *st);

#endif
