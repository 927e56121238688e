// SPDX-License-Identifier: MIT
/*
 * py-offsets: the offsets ember's Python frame reader uses (src/daemon/unwind/python.c, table
 * pyvers[]), as one CPython's headers state them, one "field value" line each, named as in the
 * table. Build against the headers of the version to check (they need Py_BUILD_CORE):
 *
 *   cc -I/usr/include/python3.11 -I/usr/include/python3.11/internal scripts/py-offsets.c
 *
 * tests/integration/test_python.sh compares its output with the table for each version whose
 * headers it finds.
 */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>
#include <stdio.h>
#if PY_VERSION_HEX >= 0x030B0000
#include "internal/pycore_frame.h"
#else
#include <frameobject.h>
#endif
#include "internal/pycore_interp.h"
#include "internal/pycore_runtime.h"

#define P(name, value) printf("%s %zu\n", name, (size_t)(value))

int main(void)
{
	P("minor", PY_MINOR_VERSION);
	P("interp_head", offsetof(_PyRuntimeState, interpreters.head));
#if PY_VERSION_HEX >= 0x030B0000
	P("threads_head", offsetof(PyInterpreterState, threads.head));
#else
	P("threads_head", offsetof(PyInterpreterState, tstate_head));
#endif
	P("tstate_next", offsetof(PyThreadState, next));
	P("tstate_thread_id", offsetof(PyThreadState, thread_id));
#if PY_VERSION_HEX >= 0x030D0000
	P("tstate_frame", offsetof(PyThreadState, current_frame));
	P("cframe_frame", 0xffff);
#elif PY_VERSION_HEX >= 0x030B0000
	P("tstate_frame", offsetof(PyThreadState, cframe));
	P("cframe_frame", offsetof(_PyCFrame, current_frame));
#else
	P("tstate_frame", offsetof(PyThreadState, frame));
	P("cframe_frame", 0xffff);
#endif
#if PY_VERSION_HEX >= 0x030B0000
	P("frame_previous", offsetof(_PyInterpreterFrame, previous));
#if PY_VERSION_HEX >= 0x030D0000
	P("frame_code", offsetof(_PyInterpreterFrame, f_executable));
	P("frame_instr", offsetof(_PyInterpreterFrame, instr_ptr));
#else
	P("frame_code", offsetof(_PyInterpreterFrame, f_code));
	P("frame_instr", offsetof(_PyInterpreterFrame, prev_instr));
#endif
#if PY_VERSION_HEX >= 0x030C0000
	P("frame_entry", offsetof(_PyInterpreterFrame, owner));
	P("entry_value", FRAME_OWNED_BY_CSTACK);
#else
	P("frame_entry", offsetof(_PyInterpreterFrame, is_entry));
	P("entry_value", 0);
#endif
	P("code_name", offsetof(PyCodeObject, co_qualname));
	P("code_adaptive", offsetof(PyCodeObject, co_code_adaptive));
#else
	P("frame_previous", offsetof(PyFrameObject, f_back));
	P("frame_code", offsetof(PyFrameObject, f_code));
	P("frame_instr", offsetof(PyFrameObject, f_lasti));
	P("frame_entry", 0);
	P("entry_value", 0);
	P("code_name", offsetof(PyCodeObject, co_name));
	P("code_adaptive", 0);
#endif
	P("code_firstlineno", offsetof(PyCodeObject, co_firstlineno));
	P("code_filename", offsetof(PyCodeObject, co_filename));
	P("code_linetable", offsetof(PyCodeObject, co_linetable));
	P("str_ascii_size", sizeof(PyASCIIObject));
	P("str_compact_size", sizeof(PyCompactUnicodeObject));
	return 0;
}
