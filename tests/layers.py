#!/usr/bin/env python3
"""The layer picture, checked (make check): fcgi -> sandbox -> registry ->
conf, nothing upward; no include cycle between the modules of a folder (a
module is foo.c with foo.h); and every header declares only its own
module's functions, but for a folder's face (sandbox/sandbox.h,
registry/registry.h, conf/conf.h), which may declare any of its folder's
that a layer above calls (what only the folder uses stays in its module's
header, so that a call into a module is never hidden behind the face).

Prints what breaks and exits 1; prints a summary and exits 0 otherwise."""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAYERS = ["conf", "registry", "sandbox", "fcgi"]   # bottom first
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
            tmod = module_of(target)
            if tmod != mod and os.path.dirname(tmod) == os.path.dirname(mod):
                graph.setdefault(mod, set()).add(tmod)

    # Cycles between the modules of one folder.
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
    faces = {os.path.join(layer, layer) for layer in LAYERS}
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
            face = mod in faces and os.path.dirname(owner) == os.path.dirname(mod)
            if not (same or face):
                problems.append(f"{path}: declares {name}(), which {owner}.c defines")
            if face and not same:
                layer = layer_of(path)
                above = LAYERS[LAYERS.index(layer) + 1:]
                if not any(re.search(r"\b%s\(" % re.escape(name), read(f))
                           for f in files if layer_of(f) in above):
                    problems.append(f"{path}: declares {name}(), which no layer above "
                                    f"{layer}/ calls: declare it in {owner}.h")
    for name, owner in sorted(defined.items()):
        header = owner + ".h"
        face = os.path.join(os.path.dirname(owner), os.path.basename(os.path.dirname(owner)))
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
