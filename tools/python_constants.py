#!/usr/bin/python3
"""Writes the Python binding's constants from the public headers.

  tools/python_constants.py          rewrites bindings/python/gpuopt/_constants.py
  tools/python_constants.py --check  exits 1 (with a diff) when that file is not
                                     what the headers give today

The binding (bindings/python/gpuopt) takes every number it shares with C from
the generated module, never from a hand-kept copy: the statuses from the
GPUOPT_STATUS_MAP X-macro, each `typedef enum` of include/gpuopt/gpuopt.h and
include/gpuopt/tune.h, and the `#define GPUOPT_*` macros whose value is a
literal. The file is committed, so installing the binding needs no build
step; CTest runs --check so that it cannot fall behind the headers.

Each C enum becomes an enum.IntEnum named after the type (gpuopt_device_type
-> DeviceType, its members the enumerators after the prefix they share:
DeviceType.GPU); an enum whose values are single bits written in hex
(gpuopt_feature) an enum.IntFlag; the statuses of GPUOPT_STATUS_MAP the
IntEnum Status. The enumerators are also module constants without the
GPUOPT_ prefix (GPUOPT_ERR_NOT_FOUND -> ERR_NOT_FOUND is Status.ERR_NOT_FOUND),
and each enum gives a dict from value to the enumerator's own word, named
after the type (gpuopt_backend_status -> BACKEND_STATUS = {0: "not_probed",
...}): the part after the shared prefix, in lower case. Standard library only.
"""

import argparse
import difflib
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEADERS = ("include/gpuopt/gpuopt.h", "include/gpuopt/tune.h")
OUTPUT = "bindings/python/gpuopt/_constants.py"

INT = r"\(?\s*(-?(?:0[xX][0-9a-fA-F]+|\d+))[uU]?\s*\)?"


def strip_comments(text):
    return re.sub(r"/\*.*?\*/", " ", text, flags=re.S)


def short(name):
    assert name.startswith("GPUOPT_"), name
    return name[len("GPUOPT_"):]


def shared_prefix(names):
    """The longest prefix ending in "_" that every name has and none is."""
    prefix = os.path.commonprefix(names)
    prefix = prefix[:prefix.rfind("_") + 1]
    while any(n == prefix or n.startswith(prefix) and not n[len(prefix):] for n in names):
        prefix = prefix[:prefix[:-1].rfind("_") + 1]
    return prefix


class Header:
    def __init__(self, root):
        self.macros = []    # (name, literal text)
        self.strings = []   # (name, value)
        self.enums = []     # (type name, [(enumerator, literal text)])
        self.status = []    # (name, literal text, description)
        for rel in HEADERS:
            with open(os.path.join(root, rel), encoding="utf-8") as f:
                self._read(strip_comments(f.read()), rel)
        if not self.status:
            raise SystemExit(f"{HEADERS[0]}: no GPUOPT_STATUS_MAP rows found")

    def _read(self, text, rel):
        # Logical lines: the X-macro spans many physical ones.
        logical = text.replace("\\\n", " ")
        for line in logical.splitlines():
            m = re.match(r"\s*#\s*define\s+(GPUOPT_\w+)\s+(.*?)\s*$", line)
            if not m or "(" in m.group(1):
                continue
            name, body = m.groups()
            if name == "GPUOPT_STATUS_MAP":
                continue
            lit = re.fullmatch(INT, body)
            if lit:
                self.macros.append((name, lit.group(1)))
            elif re.fullmatch(r'"[^"\\]*"', body):
                self.strings.append((name, body[1:-1]))
        m = re.search(r"#\s*define\s+GPUOPT_STATUS_MAP\(XX\)(.*?)\n\s*\n", text, flags=re.S)
        if m:
            rows = re.findall(r'XX\(\s*(GPUOPT_\w+)\s*,\s*' + INT + r'\s*,\s*"([^"\\]*)"\s*\)',
                              m.group(1))
            if len(rows) != m.group(1).count("XX("):
                raise SystemExit(f"{rel}: a GPUOPT_STATUS_MAP row is not XX(NAME, value, \"text\")")
            self.status = rows
        for name, body in re.findall(r"typedef\s+enum\s+(\w+)\s*\{(.*?)\}\s*\1\s*;", text, re.S):
            if name == "gpuopt_status":
                continue  # generated from the X-macro: its rows are above
            items = []
            for item in body.split(","):
                item = item.strip()
                if not item:
                    continue
                em = re.fullmatch(r"(GPUOPT_\w+)\s*=\s*" + INT, item)
                if not em:
                    raise SystemExit(f"{rel}: enum {name}: cannot read {item!r}")
                items.append(em.groups())
            self.enums.append((name, items))


def class_name(ename):
    """gpuopt_device_type -> DeviceType."""
    return "".join(w.capitalize() for w in ename[len("gpuopt_"):].split("_"))


def is_flags(items):
    """Single bits written in hex: a set of flags, not a list of choices."""
    values = [int(v, 0) for _, v in items]
    return all(v.lower().startswith("0x") for _, v in items) and \
        all(v > 0 and v & (v - 1) == 0 for v in values) and len(set(values)) == len(values)


def generate(root):
    h = Header(root)
    out = [
        '"""The numbers the binding shares with the C library.',
        "",
        "Generated by tools/python_constants.py from " + " and ".join(HEADERS) + ":",
        "do not edit; run the script after changing a header (CTest checks it).",
        '"""',
        "",
        "import enum",
        "",
    ]
    exported, seen = [], {}

    def claim(name, origin):
        if name in seen:
            raise SystemExit(f"{name} comes from both {seen[name]} and {origin}")
        seen[name] = origin
        exported.append(name)

    def emit(name, value, origin):
        claim(name, origin)
        out.append(f"{name} = {value}")

    def wrapped(pieces, close):
        """Items four spaces in, as many to a line as fit in 99 columns."""
        line = "   "
        for piece in pieces:
            if len(line) + len(piece) > 99:
                out.append(line)
                line = "   "
            line += piece
        out.append(line)
        out.append(close)

    def emit_dict(name, pairs, origin):
        emit(name, "{", origin)
        wrapped((f' {key}: "{text}",' for key, text in pairs), "}")

    # The enums as classes: the C type's values, with their names.
    tables = [("gpuopt_status", [(n, v) for n, v, _ in h.status])] + h.enums
    for ename, items in tables:
        cname = class_name(ename)
        base = "enum.IntFlag" if is_flags(items) else "enum.IntEnum"
        prefix = shared_prefix([n for n, _ in items])
        claim(cname, ename)
        out.append("")
        out.append(f"class {cname}({base}):")
        what = "GPUOPT_STATUS_MAP" if ename == "gpuopt_status" else f"enum {ename}"
        kind = "flags" if base == "enum.IntFlag" else "values"
        out.append(f'    """The {kind} of {what} ({prefix}*)."""')
        out.append("")
        for name, value in items:
            out.append(f"    {name[len(prefix):]} = {value}")
        out.append("")

    out.append("")
    out.append("# GPUOPT_STATUS_MAP and each enum's values as module constants.")
    for ename, items in tables:
        cname = class_name(ename)
        prefix = shared_prefix([n for n, _ in items])
        for name, _ in items:
            emit(short(name), f"{cname}.{name[len(prefix):]}", ename)
    out.append("")
    out.append("# Macros")
    for name, value in h.macros:
        emit(short(name), value, "#define")
    for name, value in h.strings:
        emit(short(name), repr(value), "#define")
    out.append("")

    out.append("# Value -> the enumerator's own word, per type.")
    for ename, items in tables:
        prefix = shared_prefix([n for n, _ in items])
        emit_dict(short(ename.upper()), [(v, n[len(prefix):].lower()) for n, v in items], ename)
    out.append("")
    out.append("# gpuopt_status descriptions, as gpuopt_strerror() gives them.")
    emit_dict("STATUS_TEXT", [(v, t) for _, v, t in h.status], "GPUOPT_STATUS_MAP")
    out.append("")
    out.append("__all__ = [")
    wrapped([f' "{name}",' for name in exported], "]")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true",
                    help="compare with the committed file instead of writing it")
    ap.add_argument("--root", default=ROOT, help="the source tree (default: this script's)")
    args = ap.parse_args()
    text = generate(args.root)
    path = os.path.join(args.root, OUTPUT)
    if args.check:
        try:
            with open(path, encoding="utf-8") as f:
                have = f.read()
        except FileNotFoundError:
            have = ""
        if have != text:
            sys.stdout.writelines(difflib.unified_diff(
                have.splitlines(True), text.splitlines(True), OUTPUT + " (committed)",
                OUTPUT + " (from the headers)"))
            print(f"FAIL: {OUTPUT} is out of date with the headers: run tools/python_constants.py")
            return 1
        print(f"{OUTPUT}: up to date")
        return 0
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
