#!/usr/bin/python3
"""Checks the two arrow rules of libgpuopt's layout (docs/architecture.md).

1. Nothing under src/ includes anything under backends/: every #include "..."
   of a file under src/ is resolved the way the compiler resolves it (the
   including file's folder, then src/, backends/, include/ and the generated
   folder of the build) and must not land under backends/.
2. No rings: no two .c files of one folder call each other both ways, directly
   or through other files. The calls are read from the library's built
   objects (those the build's compile_commands.json names for the top-level
   targets; nm: what each object defines and what it needs), so a call through
   a header, a macro or an inline function counts as the linker sees it. A
   ring is a strongly connected group of objects; two or more of its files in
   one folder break the rule.

A ring listed in the allow-list file (one ring per line: its files separated
by spaces; '#' starts a comment) is reported but passes, as long as the ring
found has no file outside that line. The list holds the rings of folders
still being restructured; once they are gone it is empty, and an entry that
no longer matches anything is reported so it can be deleted.

Usage: check_structure.py [--build DIR] [--allow FILE] [--includes] [--calls]
  run from the repository root (or give --root). --includes and --calls print
  every include edge / file-level call edge found. Exit 0 when both rules
  hold, 1 when one does not, 2 when the check cannot run.
Standard library only: it runs with Debian's /usr/bin/python3 in CTest.
"""

import argparse
import json
import os
import re
import shlex
import subprocess
import sys

INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SOURCE_TOPS = ("src", "backends")


def walk_sources(root, top, suffixes):
    """Paths relative to root of the files under root/top with one of suffixes."""
    found = []
    for folder, dirs, files in os.walk(os.path.join(root, top)):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(suffixes):
                found.append(os.path.relpath(os.path.join(folder, name), root))
    return found


def include_edges(root, build):
    """(file, included file) for every quoted #include under src/ and backends/
    that resolves to a file of the tree (or of the build's generated folder)."""
    search = ["src", "backends", "include"]
    generated = os.path.join(build, "generated")
    edges = []
    for top in SOURCE_TOPS:
        for path in walk_sources(root, top, (".c", ".h")):
            with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
                text = f.read()
            for m in INCLUDE_RE.finditer(text):
                name = m.group(1)
                candidates = [os.path.join(os.path.dirname(path), name)]
                candidates += [os.path.join(d, name) for d in search]
                target = next((os.path.normpath(c) for c in candidates
                               if os.path.isfile(os.path.join(root, c))), None)
                if target is None and os.path.isfile(os.path.join(generated, name)):
                    target = os.path.join("<build>", "generated", name)
                if target is not None:
                    edges.append((path, target))
    return edges


def library_objects(build):
    """{source path: object file} for the library's objects: those that
    build/compile_commands.json says the top-level targets compile
    (gpuopt_objects, the registry), so an object left over from a file that
    has since moved never counts."""
    objects = {}
    with open(os.path.join(build, "compile_commands.json"), encoding="utf-8") as f:
        commands = json.load(f)
    for entry in commands:
        if os.path.abspath(entry["directory"]) != os.path.abspath(build):
            continue
        words = shlex.split(entry["command"]) if "command" in entry else entry["arguments"]
        if "-o" not in words:
            continue
        output = words[words.index("-o") + 1]
        parts = output.split("/", 2)
        if len(parts) < 3 or parts[0] != "CMakeFiles" or not parts[1].endswith(".dir"):
            continue
        source = parts[2][: -len(".o")]
        obj = os.path.join(build, output)
        if source.startswith(SOURCE_TOPS) and os.path.isfile(obj):
            objects.setdefault(source, obj)
    return objects


def symbols(objects):
    """{source: (defined, needed)} global symbol names of each object, read
    with one nm run (-A prefixes each line with the object's path)."""
    by_obj = {obj: source for source, obj in objects.items()}
    out = subprocess.run(["nm", "-P", "-A"] + sorted(by_obj), check=True, capture_output=True,
                         text=True).stdout
    table = {source: (set(), set()) for source in objects}
    for line in out.splitlines():
        head, _, rest = line.partition(": ")
        parts = rest.split()
        source = by_obj.get(head)
        if source is None or len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == "U":
            table[source][1].add(name)
        elif kind in "TDBRCGSVW":
            table[source][0].add(name)
    return table


def call_graph(objects):
    """{file: set of files whose symbols it uses}."""
    table = symbols(objects)
    defined_by = {}
    for source, (defined, _) in table.items():
        for name in defined:
            defined_by.setdefault(name, source)
    graph = {source: set() for source in objects}
    for source, (_, needed) in table.items():
        for name in needed:
            other = defined_by.get(name)
            if other is not None and other != source:
                graph[source].add(other)
    return graph


def strongly_connected(graph):
    """Tarjan's algorithm, iterative: the components with more than one node."""
    index, low, on_stack, stack, components = {}, {}, set(), [], []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return components


def rings(graph):
    """Each group of two or more files of one folder inside one component."""
    found = []
    for component in strongly_connected(graph):
        by_folder = {}
        for source in component:
            by_folder.setdefault(os.path.dirname(source), []).append(source)
        found += [sorted(files) for files in by_folder.values() if len(files) > 1]
    return sorted(found)


def read_allow(path):
    allowed = []
    if not path:
        return allowed
    with open(path, encoding="utf-8") as f:
        for line in f:
            files = line.split("#", 1)[0].split()
            if files:
                allowed.append(set(files))
    return allowed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=".", help="repository root (default: .)")
    parser.add_argument("--build", default="build", help="build folder (default: build)")
    parser.add_argument("--allow", help="file of known rings that still pass")
    parser.add_argument("--includes", action="store_true", help="print every include edge")
    parser.add_argument("--calls", action="store_true", help="print every call edge")
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    build = os.path.join(root, args.build) if not os.path.isabs(args.build) else args.build

    failed = False
    edges = include_edges(root, build)
    if args.includes:
        for source, target in edges:
            print(f"include {source} -> {target}")
    up = [(s, t) for s, t in edges if s.startswith("src" + os.sep) and
          t.startswith("backends" + os.sep)]
    for source, target in up:
        print(f"UP-INCLUDE {source} -> {target}")
    failed |= bool(up)

    try:
        objects = library_objects(build)
    except OSError as e:
        print(f"check_structure: {e}: configure and build first", file=sys.stderr)
        return 2
    if not objects:
        print(f"check_structure: {build}/compile_commands.json names no library object: "
              "build first", file=sys.stderr)
        return 2
    graph = call_graph(objects)
    if args.calls:
        for source in sorted(graph):
            for target in sorted(graph[source]):
                print(f"call {source} -> {target}")
    allowed = read_allow(args.allow)
    used = set()
    n_new = 0
    found = rings(graph)
    for ring in found:
        home = next((i for i, a in enumerate(allowed) if set(ring) <= a), None)
        if home is None:
            print(f"RING ({len(ring)} files): {' '.join(ring)}")
            n_new += 1
        else:
            used.add(home)
            print(f"allowed ring ({len(ring)} files): {' '.join(ring)}")
    for i, a in enumerate(allowed):
        if i not in used:
            print(f"stale allow-list entry (no such ring now; delete it): {' '.join(sorted(a))}")
    failed |= n_new > 0
    n_src = sum(1 for s in objects if s.startswith("src" + os.sep))
    print(f"check_structure: {len(edges)} include edges, {len(up)} from src/ into backends/; "
          f"{len(objects)} objects ({n_src} under src/), {len(found)} ring(s) inside a folder, "
          f"{n_new} not on the allow list")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
