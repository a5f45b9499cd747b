#!/usr/bin/env python3
"""The lists of languages in the docs, written from registry/registry.yaml,
the one list: README.md's table and docs/llms.txt's list, each between its
two `languages:` marker lines.

  tests/languages_doc.py check    fails, naming `make docs`, if one is stale,
                                  or if API.md's line-buffering table (by
                                  hand) lacks a language
  tests/languages_doc.py write    rewrites them (`make docs`)

The registry is read line by line (its entries keep one layout: `  - name:`
starts one, its keys are indented four spaces, `versions` items are flow
maps on lines of their own), so that `make check` needs no YAML module."""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REGISTRY = os.path.join(ROOT, "registry", "registry.yaml")


def languages():
    out, lang = [], None
    with open(REGISTRY, encoding="utf-8") as f:
        for line in f:
            if m := re.match(r"  - name: (\S+)$", line):
                lang = {"name": m.group(1), "aliases": [], "others": [], "note": "", "compiled": False}
                out.append(lang)
            elif lang is None:
                continue
            elif m := re.match(r"    aliases: \[(.*)\]$", line):
                lang["aliases"] = [a.strip() for a in m.group(1).split(",") if a.strip()]
            elif m := re.match(r'    version: "([^"]+)"$', line):
                lang["version"] = m.group(1)
            elif m := re.match(r'    note: "(.*)"$', line):
                lang["note"] = m.group(1)
            elif re.match(r"    compile: ", line):
                lang["compiled"] = True
            elif m := re.match(r'\s+- \{version: "([^"]+)", image: [^,}]+(?:, note: "(.*)")?\}$', line):
                lang["others"].append((m.group(1), m.group(2) or ""))
    return out


def readme_table(langs):
    rows = ["| language | aliases | version (the default first) | |",
            "|---|---|---|---|"]
    for lang in langs:
        versions = ", ".join([lang["version"]] + [v for v, _ in lang["others"]])
        notes = " ".join(n for n in [lang["note"]] + [f"{v}: {n}" for v, n in lang["others"] if n] if n)
        kind = "compiled" if lang["compiled"] else ""
        rows.append(f"| {lang['name']} | {', '.join(lang['aliases'])} | {versions} | "
                    f"{'; '.join(x for x in [kind, notes] if x)} |")
    return "\n".join(rows)


def llms_list(langs):
    names = ", ".join(lang["name"] for lang in langs)
    compiled = ", ".join(lang["name"] for lang in langs if lang["compiled"])
    text = (f"{len(langs)} languages: {names}. Compiled (a `compile` phase first): {compiled}. "
            "GET /runtimes lists them with their versions, aliases, limits and a hello-world `sample`.")
    lines, line = [], "  "
    for word in text.split(" "):
        if len(line) + len(word) + 1 > 74 and line.strip():
            lines.append(line.rstrip())
            line = "  "
        line += word + " "
    return "\n".join(lines + [line.rstrip()])


TARGETS = [("README.md", readme_table), (os.path.join("docs", "llms.txt"), llms_list)]
START, END = "<!-- languages: written by `make docs` from registry/registry.yaml -->", "<!-- languages: end -->"


def rewritten(path, make, langs):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        text = f.read()
    a, b = text.find(START), text.find(END)
    if a < 0 or b < a:
        sys.exit(f"languages_doc: {path} lacks the marker lines {START} ... {END}")
    return text, text[:a + len(START)] + "\n" + make(langs) + "\n" + text[b:]


# API.md's table of what makes each language's output line by line is
# written by hand (each row says why): every language must be in a row.
LINES_TABLE = os.path.join("docs", "API.md"), "| language | what makes it line by line |"


def unexplained(langs):
    """The languages that no row of API.md's line-buffering table names."""
    path, head = LINES_TABLE
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        text = f.read()
    at = text.find(head)
    if at < 0:
        sys.exit(f"languages_doc: {path} lacks its table that starts {head}")
    named = set()
    for row in text[at:].split("\n")[2:]:
        if not row.startswith("|"):
            break
        named.update(n.strip() for n in row.split("|")[1].split(","))
    return [lang["name"] for lang in langs if lang["name"] not in named]


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "check"
    langs = languages()
    if missing := unexplained(langs):
        sys.exit(f"languages_doc: {LINES_TABLE[0]}'s line-buffering table does not say how "
                 f"{', '.join(missing)} get their lines out: add them to a row")
    stale = []
    for path, make in TARGETS:
        old, new = rewritten(path, make, langs)
        if old != new:
            if mode == "write":
                with open(os.path.join(ROOT, path), "w", encoding="utf-8") as f:
                    f.write(new)
                print(f"languages_doc: wrote {path}")
            else:
                stale.append(path)
    if stale:
        sys.exit(f"languages_doc: {', '.join(stale)} do not list registry.yaml's languages: run `make docs`")
    print(f"languages_doc: {len(langs)} languages, the docs list them")


if __name__ == "__main__":
    main()
