#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Checks OTLP export requests as decoded by `protoc --decode` with the reference schema
# (text format on stdin of each FILE): every table's entry 0 is the zero value, every index is
# in range, every sample has one timestamp per value. Writes one line per sample to OUT:
#   TIME_US PID TID COMM;root;...;leaf     (frame names as emberd names them)
# and one line per resource to OUT.res: PID EXE_PATH BUILD_ID CONTAINER POD SERVICE, and one per
# symbolized native frame with a mapping to OUT.maps: PID NAME FILE BUILD_ID ADDRESS (hex)
# Prints "ok N T0 T1" (samples, the union of the profiles' windows in Unix ns) or
# "bad REASON" and exits 1.
# Usage: otlp_check.py OUT FILE...
import re, sys

TOK = re.compile(r'\s*(?:(\})|([A-Za-z_0-9]+)\s*\{|([A-Za-z_0-9]+)\s*:\s*("(?:[^"\\]|\\.)*"|[^\s]+))')


PERIOD_TYPES = {("cpu", "nanoseconds"), ("page_faults", "pages"), ("vm_growth", "bytes"),
                ("block_io", "bytes"), ("block_io_latency", "nanoseconds"), ("malloc", "bytes")}

def unescape(s):
    b = bytearray()
    i = 0
    s = s[1:-1]
    while i < len(s):
        c = s[i]
        if c == '\\':
            n = s[i + 1]
            if n in '01234567':
                j = i + 1
                while j < len(s) and j < i + 4 and s[j] in '01234567':
                    j += 1
                b.append(int(s[i + 1:j], 8))
                i = j
                continue
            b.extend({'n': b'\n', 't': b'\t', 'r': b'\r', '"': b'"', "'": b"'", '\\': b'\\'}
                     .get(n, n.encode()))
            i += 2
            continue
        b.extend(c.encode())
        i += 1
    return b.decode('utf-8', 'replace')


def parse(text):
    root, stack, pos = {}, [], 0
    cur = root
    while pos < len(text):
        m = TOK.match(text, pos)
        if not m:
            if text[pos:].strip():
                raise ValueError("parse error at %r" % text[pos:pos + 40])
            break
        pos = m.end()
        if m.group(1):
            cur = stack.pop()
        elif m.group(2):
            d = {}
            cur.setdefault(m.group(2), []).append(d)
            stack.append(cur)
            cur = d
        else:
            v = m.group(4)
            v = unescape(v) if v.startswith('"') else int(v) if re.match(r'-?\d+$', v) else v
            cur.setdefault(m.group(3), []).append(v)
    return root


def one(d, k, default=0):
    return d.get(k, [default])[0]


def bad(why):
    print("bad " + why)
    sys.exit(1)


out, res_out = open(sys.argv[1], "w"), open(sys.argv[1] + ".res", "w")
maps_seen = set()
cur_pid = [None]
total = 0
w0, w1 = None, None
for fn in sys.argv[2:]:
    req = parse(open(fn).read())
    d = one(req, "dictionary", {})
    strs = d.get("string_table", [])
    tables = {k: d.get(k, []) for k in ("mapping_table", "location_table", "function_table",
                                         "link_table", "attribute_table", "stack_table")}
    if not strs or strs[0] != "":
        bad("%s: string_table[0] is not empty" % fn)
    for k, t in tables.items():
        if not t or t[0] != {}:
            bad("%s: %s[0] is not the zero value" % (fn, k))

    def S(i):
        if not 0 <= i < len(strs):
            bad("%s: string index %d out of range" % (fn, i))
        return strs[i]

    def T(k, i):
        if not 0 <= i < len(tables[k]):
            bad("%s: %s index %d out of range" % (fn, k, i))
        return tables[k][i]

    for f in tables["function_table"]:
        for k in ("name_strindex", "system_name_strindex", "filename_strindex"):
            S(one(f, k))
    for m in tables["mapping_table"]:
        S(one(m, "filename_strindex"))
        for a in m.get("attribute_indices", []):
            T("attribute_table", a)
    for a in tables["attribute_table"][1:]:
        S(one(a, "key_strindex"))

    def attr(i):
        a = T("attribute_table", i)
        v = one(a, "value", {})
        return S(one(a, "key_strindex")), v.get("string_value", v.get("int_value", [None]))[0]

    def frame(li):
        loc = T("location_table", li)
        T("mapping_table", one(loc, "mapping_index"))
        lines = loc.get("lines", [])
        if len(lines) != 1:
            bad("%s: location %d has %d lines" % (fn, li, len(lines)))
        f = T("function_table", one(lines[0], "function_index"))
        name = S(one(f, "name_strindex"))
        typ = dict(attr(a) for a in loc.get("attribute_indices", [])).get("profile.frame.type")
        if typ == "kernel":
            return name + "_[k]"
        if typ in ("jit", "cpython"):
            # a Java or JavaScript frame, a Python one: "name (file:line)" when it has a file
            sfx = "_[j]" if typ == "jit" else "_[py]"
            file, line = S(one(f, "filename_strindex")), one(lines[0], "line")
            if not file:  # a perf-map name, a marker ([unknown]_[py]): no "(file)"
                return name + sfx
            return "%s (%s%s)%s" % (name, file, ":%d" % line if line else "", sfx)
        if typ != "native":
            bad("%s: frame type %r" % (fn, typ))
        mi = one(loc, "mapping_index")
        if mi and "+0x" not in name and not name.startswith("["):
            m = T("mapping_table", mi)
            ma = dict(attr(a) for a in m.get("attribute_indices", []))
            maps_seen.add("%s %s %s %s %x" % (cur_pid[0], name, S(one(m, "filename_strindex")),
                                              ma.get("process.executable.build_id.gnu", "-"),
                                              one(loc, "address")))
        return name

    for rp in req.get("resource_profiles", []):
        ra = {one(kv, "key", ""): one(one(kv, "value", {}), "string_value",
                                      one(one(kv, "value", {}), "int_value", ""))
              for kv in one(rp, "resource", {}).get("attributes", [])}
        pid = ra.get("process.pid")
        cur_pid[0] = pid
        if pid is None or "service.name" not in ra or "host.name" not in ra:
            bad("%s: resource without process.pid, service.name or host.name" % fn)
        res_out.write("%s %s %s %s %s %s\n" % (pid, ra.get("process.executable.path", "-"),
                                                ra.get("process.executable.build_id.gnu", "-"),
                                                ra.get("container.id", "-"),
                                                ra.get("k8s.pod.uid", "-"), ra["service.name"]))
        for sp in rp.get("scope_profiles", []):
            for p in sp.get("profiles", []):
                st, pt = one(p, "sample_type", {}), one(p, "period_type", {})
                # CPU samples, or emberd's memory and I/O events (a sample one quantum of the
                # period type's unit)
                if (S(one(st, "type_strindex")), S(one(st, "unit_strindex"))) != ("samples", "count") or \
                        (S(one(pt, "type_strindex")), S(one(pt, "unit_strindex"))) not in PERIOD_TYPES or \
                        one(p, "period") <= 0:
                    bad("%s: sample/period types or period" % fn)
                t0 = one(p, "time_unix_nano")
                t1 = t0 + one(p, "duration_nano")
                w0 = t0 if w0 is None else min(w0, t0)
                w1 = t1 if w1 is None else max(w1, t1)
                for s in p.get("samples", []):
                    ts = s.get("timestamps_unix_nano", [])
                    if not ts or len(s.get("values", [])) != len(ts):
                        bad("%s: a sample's values and timestamps differ" % fn)
                    a = dict(attr(i) for i in s.get("attribute_indices", []))
                    locs = T("stack_table", one(s, "stack_index")).get("location_indices", [])
                    names = [frame(li) for li in reversed(locs)]  # leaf first -> root first
                    stack = ";".join([a.get("thread.name", "?")] + names)
                    for t in ts:
                        if not t0 <= t < t1:
                            bad("%s: timestamp %d outside [%d, %d)" % (fn, t, t0, t1))
                        out.write("%d %s %s %s\n" % (t // 1000, pid, a.get("thread.id"), stack))
                        total += 1
with open(sys.argv[1] + ".maps", "w") as f:
    f.writelines(x + "\n" for x in sorted(maps_seen))
print("ok %d %d %d" % (total, w0 or 0, w1 or 0))
