#!/usr/bin/env python3
"""The layer picture, checked (make check): fcgi -> sandbox -> registry ->
conf, nothing upward; no include cycle between modules (a module is foo.c
with foo.h), within a folder or across folders; from outside a folder,
only its face is included (the header named as the folder: sandbox/sandbox.h,
conf/conf.h, conf/store/store.h), but for conf/lib, the toolbox whose
small headers (base, json, fault, yaml_tree) any file may use, and for a
folder's own parents, whose modules a sub-folder may use (the agent's
libc-only headers in sandbox/); and every header declares only its own
module's functions, but for a face, which may declare any of its folder's
that a file outside the folder (and its sub-folders) calls (what only the
folder uses stays in its module's header, so that a call into a module is
never hidden behind the face).

Prints what breaks and exits 1; prints a summary and exits 0 otherwise."""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAYERS = ["conf", "registry", "sandbox", "fcgi"]   # bottom first
TOOLBOX = os.path.join("conf", "lib")
INCLUDE = re.compile(r'^#include "([^"]+)"', re.M)
# A definition: a line that starts with a type and ends its parameter list
# with "{" on the next line (the style of this codebase), not static.
DEFINITION = re.compile(r"^(?!static\b)[A-Za-z_][\w \*]*?\b(\w+)\([^;{]*\)\s*\n\{", re.M)
DECLARATION = re.compile(r"^(?!static\b|#|typedef\b)[A-Za-z_][\w \*]*?\b(\w+)\([^;{}]*\)\s*"
                         r"(?:__attribute__\(\(.*?\)\)|PRINTF\(\d+, \d+\))?\s*;", re.M | re.S)


def sources():
    for layer in LAYERS:
        for dirpath, _, names in os.walk(os.path.join(ROOT, layer)):
            for name in sorted(names):
                if name.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(dirpath, name), ROOT)


def layer_of(path):
    return path.split(os.sep)[0]


def module_of(path):
    return os.path.splitext(path)[0]


def face_of(folder):
    """A folder's face: the module named as the folder (conf/store/store)."""
    return os.path.join(folder, os.path.basename(folder))


def may_include(path, target):
    """May path include target? Its own folder's headers and its parents',
    the toolbox's, and any other folder's face."""
    here, there = os.path.dirname(path), os.path.dirname(target)
    if here == there or (here + os.sep).startswith(there + os.sep) or there == TOOLBOX:
        return True
    return module_of(target) == face_of(there)


def inside(path, folder):
    """Is path in folder or one of its sub-folders?"""
    return (os.path.dirname(path) + os.sep).startswith(folder + os.sep)


def read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


def main():
    problems = []
    files = list(sources())
    graph = {}
    for path in files:
        mod = module_of(path)
        for inc in INCLUDE.findall(read(path)):
            target = os.path.normpath(os.path.join(os.path.dirname(path), inc))
            if target.startswith("bin" + os.sep):
                continue  # generated data (the embedded assets)
            if layer_of(target) not in LAYERS:
                problems.append(f"{path}: includes {inc}, outside the layers")
                continue
            if LAYERS.index(layer_of(target)) > LAYERS.index(layer_of(path)):
                problems.append(f"{path}: includes {inc}, a layer above it")
            elif not may_include(path, target):
                problems.append(f"{path}: includes {inc}, inside {os.path.dirname(target)}/: "
                                f"include its face, {face_of(os.path.dirname(target))}.h")
            tmod = module_of(target)
            if tmod != mod:
                graph.setdefault(mod, set()).add(tmod)

    # Cycles between modules, within a folder or across folders (a
    # sub-folder may include its parents' headers: conf/store/ and conf/).
    state = {}

    def visit(mod, stack):
        state[mod] = "open"
        for nxt in sorted(graph.get(mod, ())):
            if state.get(nxt) == "open":
                cycle = stack[stack.index(nxt):] + [nxt]
                problems.append("include cycle: " + " -> ".join(cycle))
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[mod] = "done"

    for mod in sorted(graph):
        if mod not in state:
            visit(mod, [mod])

    # Who declares what.
    defined = {}
    for path in files:
        if path.endswith(".c"):
            for name in DEFINITION.findall(read(path)):
                defined[name] = module_of(path)
    faces = {face_of(os.path.dirname(p)) for p in files} & {module_of(p) for p in files}
    declared = 0
    for path in files:
        if not path.endswith(".h"):
            continue
        mod = module_of(path)
        for name in DECLARATION.findall(read(path)):
            owner = defined.get(name)
            if owner is None:
                continue  # a callback type's field, or defined elsewhere (libraries)
            declared += 1
            same = owner == mod
            folder = os.path.dirname(mod)
            face = mod in faces and os.path.dirname(owner) == folder
            if not (same or face):
                problems.append(f"{path}: declares {name}(), which {owner}.c defines")
            if face and not same:
                if not any(re.search(r"\b%s\(" % re.escape(name), read(f))
                           for f in files if not inside(f, folder)):
                    problems.append(f"{path}: declares {name}(), which nothing outside "
                                    f"{folder}/ calls: declare it in {owner}.h")
    for name, owner in sorted(defined.items()):
        header = owner + ".h"
        face = face_of(os.path.dirname(owner))
        if name == "main" or owner.endswith("main"):
            continue
        declared_in = [h for h in (header, face + ".h") if os.path.exists(os.path.join(ROOT, h))
                       and re.search(r"\b%s\(" % re.escape(name), read(h))]
        if not declared_in:
            problems.append(f"{owner}.c: {name}() is not static and no header declares it")

    for p in problems:
        print("layers:", p)
    if problems:
        return 1
    print(f"layers: {len(files)} files, {len(graph)} modules with includes, "
          f"{declared} declarations checked: the picture holds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
