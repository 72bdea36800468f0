#!/usr/bin/python3
"""Checks what libgpuopt shows the outside world.

  check_library.py exports  --shared LIB.so --static LIB.a --map gpuopt.map
      The shared library exports gpuopt_* functions and nothing else, each in
      a version node of the map; its SONAME is libgpuopt.so.0 and the
      libgpuopt.so -> .so.0 -> .so.X.Y.Z chain is in place; it needs no
      vendor library (DT_NEEDED against an allow-list, ldd against vendor
      names). The static library defines no global symbol outside the
      gpuopt_ / gpo_ name spaces, so it cannot collide with a user's names.
      With --alloc-injection (a test build: src/util/alloc_fail.c) the
      __wrap_ functions ld's --wrap calls are allowed too.

  check_library.py symbols  --shared LIB.so --header gpuopt.h [--header tune.h]
                            --symbols symbols-in-versions --map gpuopt.map
                            --version X.Y.Z
      The symbols file lists every public name of the header with the
      release that introduced it, nothing the header lacks (unless marked
      removed), no version later than this one; the header's functions are
      exactly the library's exports; every enumerator has an explicit value.
      The version script names every function explicitly (no wildcard but
      the first node's "local: *"), each in the node of the release that
      introduced it (GPUOPT_MAJOR.MINOR), nodes in release order, each
      inheriting the one before; the library exports each function with
      that node as its version.

Uses binutils (nm, readelf) and ldd. Prints every problem, exits 1 if any.
"""

import argparse
import os
import re
import subprocess
import sys

# DT_NEEDED entries the shared library may have: the C library and what the
# core links (cJSON, libm, and libdl/libpthread on older glibc), plus the
# sanitizer runtimes of the build-asan tree.
ALLOWED_NEEDED = re.compile(
    r"^(libc\.so\.6|libm\.so\.6|libdl\.so\.2|libpthread\.so\.0|libcjson\.so\.1|"
    r"ld-linux[-\w.]*\.so\.\d|libasan\.so\.\d+|libubsan\.so\.\d+|libgcc_s\.so\.1)$")
# Vendor libraries are dlopened at run time, never linked.
VENDOR = re.compile(r"lib(cuda|cudart|nvrtc|nvidia-\w+|amdhip64|hiprtc|hsa-runtime64|"
                    r"amd_comgr|OpenCL|pocl|rocm\w*)\b")

problems = []


def problem(text):
    problems.append(text)


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def dynamic_exports(lib):
    """{name: version} of the defined dynamic symbols, and the absolute ones."""
    exports, absolute = {}, []
    for line in run("nm", "-D", "--defined-only", lib).splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        kind, sym = parts[-2], parts[-1]
        name, _, version = sym.partition("@")
        version = version.lstrip("@")
        if kind == "A":
            absolute.append(name)  # the version node itself
        else:
            exports[name] = (kind, version)
    return exports, absolute


def read_map(path):
    """[(node, parent or None, [global names], [local names])] of a version
    script, in file order."""
    with open(path, encoding="utf-8") as f:
        text = strip_comments(f.read())
    text = re.sub(r"#[^\n]*", " ", text)
    nodes = []
    pos = 0
    node_re = re.compile(r"\s*([\w.]+)\s*\{(.*?)\}\s*([\w.]*)\s*;", re.S)
    while text[pos:].strip():
        m = node_re.match(text, pos)
        if not m:
            problem(f"{path}: cannot read a version node at: {text[pos:pos + 60].strip()!r}")
            break
        node, body, parent = m.group(1), m.group(2), m.group(3) or None
        glob, local, section = [], [], None
        for item in re.split(r"[;\s]+", body):
            if item in ("global:", "local:"):
                section = glob if item == "global:" else local
            elif item.endswith(":") and item[:-1] in ("global", "local"):
                section = glob if item[:-1] == "global" else local
            elif item:
                if section is None:
                    problem(f"{path}: {node}: '{item}' outside global:/local:")
                else:
                    section.append(item)
        nodes.append((node, parent, glob, local))
        pos = m.end()
    return nodes


def node_of(version):
    """The version node of release X.Y.Z: GPUOPT_X.Y."""
    major, minor = version.split(".")[:2]
    return f"GPUOPT_{major}.{minor}"


def check_exports(args):
    nodes = {node for node, _, _, _ in read_map(args.map)}
    exports, absolute = dynamic_exports(args.shared)
    if not exports:
        problem(f"{args.shared} exports nothing")
    for name, (kind, version) in sorted(exports.items()):
        if not name.startswith("gpuopt_"):
            problem(f"exported symbol outside gpuopt_*: {name} ({kind})")
        elif kind != "T":
            problem(f"exported {name} is not a function (nm type {kind})")
        elif version not in nodes:
            problem(f"{name} is in version node '{version}', which {args.map} does not define")
    if set(absolute) != nodes:
        problem(f"the library defines the version nodes {sorted(absolute)}, "
                f"{args.map} {sorted(nodes)}")

    dynamic = run("readelf", "-d", args.shared)
    soname = re.findall(r"\(SONAME\)\s+Library soname: \[([^\]]+)\]", dynamic)
    if soname != ["libgpuopt.so.0"]:
        problem(f"SONAME is {soname}, expected ['libgpuopt.so.0']")
    for needed in re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic):
        if not ALLOWED_NEEDED.match(needed):
            problem(f"links {needed}: not on the allow-list of tests/api/check_library.py")

    for line in run("ldd", args.shared).splitlines():
        if VENDOR.search(line):
            problem(f"ldd shows a vendor library: {line.strip()}")

    libdir = os.path.dirname(args.shared)
    real = os.path.basename(os.path.realpath(args.shared))
    if not re.fullmatch(r"libgpuopt\.so\.0\.\d+\.\d+", real):
        problem(f"the shared library file is {real}, expected libgpuopt.so.0.MINOR.PATCH")
    for link, target in (("libgpuopt.so", "libgpuopt.so.0"), ("libgpuopt.so.0", real)):
        path = os.path.join(libdir, link)
        if not os.path.islink(path) or os.readlink(path) != target:
            problem(f"{path} should be a symlink to {target}")

    for line in run("nm", "--defined-only", "--extern-only", args.static).splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue  # "file.o:" headers and blank lines
        name = parts[-1]
        # ASan's ODR indicators (__odr_asan.NAME, __odr_asan_gen_NAME) carry
        # the name of the global they guard.
        plain = re.sub(r"^__odr_asan(?:\.|_gen_)", "", name)
        if args.alloc_injection and plain in WRAPPED:
            continue
        if not plain.startswith(("gpuopt_", "gpo_")):
            problem(f"{args.static} defines global {name} ({parts[-2]}): internal names "
                    "are static or carry the gpo_ prefix")


# What src/util/alloc_fail.c defines for ld's --wrap; they must be global.
WRAPPED = {"__wrap_" + f for f in ("malloc", "calloc", "realloc", "strdup", "strndup")}


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def version_tuple(v):
    return tuple(int(x) for x in v.split("."))


def check_symbols(args):
    code, guards = "", set()
    for header in args.header:
        with open(header, encoding="utf-8") as f:
            text = strip_comments(f.read())
        guards.add(re.search(r"#ifndef (\w+)\s*\n\s*#define \1\b", text).group(1))
        code += text
    # A trailing "_" marks a header-internal helper macro (#undef'd after use).
    names = {n for n in re.findall(r"\b(?:gpuopt|GPUOPT)_\w+\b", code)
             if not n.endswith("_")} - guards
    functions = set(re.findall(r"GPUOPT_API\b[^;{]*?\b(gpuopt_\w+)\s*\(", code))

    listed, removed = {}, set()
    with open(args.symbols, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip() or line.startswith("#"):
                continue
            cols = line.split()
            if len(cols) < 2 or len(cols) > 4:
                problem(f"{args.symbols}:{n}: expected 'name introduced [deprecated [removed]]'")
                continue
            name = cols[0]
            if name in listed:
                problem(f"{args.symbols}:{n}: {name} listed twice")
            try:
                versions = [version_tuple(v) for v in cols[1:] if v != "-"]
            except ValueError:
                problem(f"{args.symbols}:{n}: malformed version in {line.strip()!r}")
                continue
            listed[name] = cols[1]
            if any(v > version_tuple(args.version) for v in versions):
                problem(f"{args.symbols}:{n}: {name} names a release after {args.version}")
            if len(cols) == 4:
                removed.add(name)

    for name in sorted(names - set(listed)):
        problem(f"{name} is in the public headers but not in {args.symbols}: "
                f"add '{name} {args.version}'")
    for name in sorted(set(listed) - names - removed):
        problem(f"{name} is in {args.symbols} but not in the header: a public name never "
                "disappears; mark it removed (4th column) only in a release that may break "
                "the API (a major one, or a minor one before 1.0)")
    for name in sorted(removed & names):
        problem(f"{name} is marked removed but the header still has it")

    exports, _ = dynamic_exports(args.shared)
    for name in sorted(functions - set(exports)):
        problem(f"{name} is declared in the header but the library does not export it")
    for name in sorted(set(exports) - functions):
        problem(f"the library exports {name}, which the header does not declare")

    for body in re.findall(r"\benum\s+\w*\s*\{(.*?)\}", code, flags=re.S):
        # Directives (the X-macro expansion in gpuopt_status) are not
        # enumerators; the X-macro's rows cannot omit their values.
        body = re.sub(r"^\s*#[^\n]*", " ", body, flags=re.M)
        for item in body.split(","):
            item = item.strip()
            if item and "=" not in item:
                problem(f"enumerator {item} has no explicit value: values are pinned")

    check_map(args, functions, listed, removed, exports)


def check_map(args, functions, listed, removed, exports):
    nodes = read_map(args.map)
    if not nodes:
        problem(f"{args.map} has no version node")
        return
    where = {}
    for i, (node, parent, glob, local) in enumerate(nodes):
        if not re.fullmatch(r"GPUOPT_\d+\.\d+", node):
            problem(f"{args.map}: node {node} is not named GPUOPT_MAJOR.MINOR")
        want_parent = nodes[i - 1][0] if i else None
        if parent != want_parent:
            problem(f"{args.map}: node {node} inherits {parent}, expected {want_parent} "
                    "(nodes in release order, each inheriting the one before)")
        if local != (["*"] if i == 0 else []):
            problem(f"{args.map}: node {node} has local: {local}; only the first node has "
                    "'local: *;'")
        for name in glob:
            if any(c in name for c in "*?["):
                problem(f"{args.map}: {node} exports the pattern {name}: name every function")
            elif name in where:
                problem(f"{args.map}: {name} is in {where[name]} and {node}")
            else:
                where[name] = node
    order = [node for node, _, _, _ in nodes]
    if order != sorted(order, key=lambda n: tuple(int(x) for x in n.split("_")[1].split("."))):
        problem(f"{args.map}: nodes {order} are not in release order")

    for name in sorted(functions - set(where)):
        problem(f"{name} is declared in the header but in no node of {args.map}: add it to "
                f"{node_of(listed[name]) if name in listed else 'the node of this release'}")
    for name in sorted(set(where) - functions):
        why = "removed from the header" if name in removed else "not declared in the header"
        problem(f"{args.map} lists {name}, {why}")
    for name in sorted(functions & set(where)):
        if name in listed and node_of(listed[name]) != where[name]:
            problem(f"{name} is in node {where[name]} of {args.map}, but {args.symbols} says "
                    f"{listed[name]}: expected node {node_of(listed[name])}")
        if name in exports and exports[name][1] != where[name]:
            problem(f"the library exports {name} in version node '{exports[name][1]}', "
                    f"{args.map} puts it in {where[name]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=("exports", "symbols"))
    ap.add_argument("--shared", required=True)
    ap.add_argument("--static")
    ap.add_argument("--alloc-injection", action="store_true",
                    help="an allocation-failure-injection build: allow the __wrap_ functions")
    ap.add_argument("--header", action="append", help="a public header (repeatable)")
    ap.add_argument("--symbols")
    ap.add_argument("--map", required=True, help="the linker version script")
    ap.add_argument("--version")
    args = ap.parse_args()
    if args.mode == "exports":
        check_exports(args)
    else:
        check_symbols(args)
    for p in problems:
        print("FAIL:", p)
    if not problems:
        print(f"{args.mode}: ok")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
