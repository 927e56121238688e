#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# ember's proto/otlp.proto against the reference OTLP schema: every message of ours exists in the
# reference under the same name, and each of its fields has the reference's number, type,
# label and (for messages) type name. Reads `protoc --decode=google.protobuf.FileDescriptorSet`
# text of both sets. Prints "ok N fields" or one line per difference and exits 1.
# Usage: proto_check.py OURS.txt REF.txt
import re, sys


def messages(path):
    """name -> {field name: (number, type, label, type_name)} from descriptor text."""
    out, stack, cur_msg, cur_field = {}, [], None, None
    depth_msg = []
    for line in open(path):
        s = line.strip()
        if s.endswith("{"):
            stack.append(s[:-1].strip())
            if stack[-1] == "message_type" or stack[-1] == "nested_type":
                depth_msg.append({})
            elif stack[-1] == "field":
                cur_field = {}
            continue
        if s == "}":
            kind = stack.pop()
            if kind in ("message_type", "nested_type"):
                m = depth_msg.pop()
                out[m["name"]] = m.get("fields", {})
            elif kind == "field" and depth_msg:
                f = cur_field
                depth_msg[-1].setdefault("fields", {})[f["name"]] = (
                    f.get("number"), f.get("type"), f.get("label"),
                    f.get("type_name", "").split(".")[-1])
                cur_field = None
            continue
        m = re.match(r'(\w+): "?([^"]*)"?$', s)
        if not m:
            continue
        k, v = m.groups()
        if stack and stack[-1] == "field" and cur_field is not None:
            cur_field[k] = v
        elif stack and stack[-1] in ("message_type", "nested_type") and k == "name":
            depth_msg[-1]["name"] = v
    return out


ours, ref = messages(sys.argv[1]), messages(sys.argv[2])
bad, n = [], 0
for name, fields in ours.items():
    if name not in ref:
        bad.append("message %s: not in the reference" % name)
        continue
    for f, spec in fields.items():
        n += 1
        if f not in ref[name]:
            bad.append("%s.%s: not in the reference" % (name, f))
        elif ref[name][f] != spec:
            bad.append("%s.%s: ours %s, reference %s" % (name, f, spec, ref[name][f]))
for b in bad:
    print(b)
if bad or not n:
    sys.exit(1)
print("ok %d fields in %d messages" % (n, len(ours)))
