#!/usr/bin/env python3
"""Counts the JSON Schema keywords and shapes in the corpus lockfiles (input = a tool's
inputSchema, output = its outputSchema), for the table in tests/corpus/README.md.

    python3 tests/corpus/keywords.py            # markdown tables on stdout

Every lockfile counts (all versions), so a keyword a server kept across five captured
versions counts five times; the "servers" column counts distinct packages.
"""
import collections
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent
SCHEMA_MAPS = {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
SCHEMA_ONE = {"items", "additionalProperties", "additionalItems", "not", "if", "then", "else",
              "contains", "propertyNames", "unevaluatedProperties", "unevaluatedItems"}
SCHEMA_LIST = {"anyOf", "oneOf", "allOf", "prefixItems"}
SAFE = 9007199254740991

kw = collections.Counter()          # (keyword, side) -> occurrences
kw_pkgs = collections.defaultdict(set)
shape = collections.Counter()       # (shape, side)
shape_pkgs = collections.defaultdict(set)
formats = collections.Counter()


def note(counter, pkgs, key, side, pkg):
    counter[(key, side)] += 1
    pkgs[key].add(pkg)


def walk(s, side, pkg, under=None):
    if not isinstance(s, dict):
        if isinstance(s, bool) and under != "additionalProperties":
            note(shape, shape_pkgs, f"boolean schema `{str(s).lower()}` under `{under}`", side, pkg)
        return
    for k, v in s.items():
        note(kw, kw_pkgs, k, side, pkg)
        if k in SCHEMA_MAPS and isinstance(v, dict):
            for sub in v.values():
                walk(sub, side, pkg, k)
        elif k in SCHEMA_ONE:
            if k == "items" and isinstance(v, list):
                note(shape, shape_pkgs, "`items` as an array (draft-07 tuple)", side, pkg)
                for sub in v:
                    walk(sub, side, pkg, k)
            else:
                walk(v, side, pkg, k)
        elif k in SCHEMA_LIST and isinstance(v, list):
            for sub in v:
                walk(sub, side, pkg, k)
    sh = lambda name: note(shape, shape_pkgs, name, side, pkg)
    t = s.get("type")
    if isinstance(t, list):
        sh("`type` as an array" + (" with `null`" if "null" in t else ""))
    if s.get("additionalProperties") is False:
        sh("`additionalProperties: false`")
    elif isinstance(s.get("additionalProperties"), dict):
        sh("`additionalProperties` as a schema" + (" `{}`" if s["additionalProperties"] == {} else ""))
    elif s.get("additionalProperties") is True:
        sh("`additionalProperties: true`")
    for b in ("minimum", "maximum"):
        if abs(s.get(b, 0) if isinstance(s.get(b), (int, float)) else 0) == SAFE:
            sh(f"`{b}: ±9007199254740991` (zod `.int()`)")
    for b in ("exclusiveMinimum", "exclusiveMaximum"):
        if isinstance(s.get(b), bool):
            sh(f"`{b}` as a boolean (draft-04)")
        elif b in s and t == "integer":
            sh(f"`{b}` on an integer")
    for var in ("anyOf", "oneOf"):
        vs = s.get(var)
        if isinstance(vs, list):
            if any(isinstance(x, dict) and x.get("type") == "null" for x in vs):
                sh(f"`{var}` with a `{{type: null}}` variant (Optional)")
            if any(isinstance(x, dict) and "$ref" in x for x in vs):
                sh(f"`$ref` inside `{var}`")
    if "$ref" in s and len(s) > 1:
        sh("`$ref` with sibling keywords")
    if isinstance(s.get("enum"), list) and len(s["enum"]) == 1:
        sh("one-value `enum`")
    if "default" in s and s["default"] is None:
        sh("`default: null`")
    if "format" in s:
        formats[(s["format"], side)] += 1


def main():
    n_locks = 0
    tools = collections.Counter()
    for lock in sorted(ROOT.glob("*/*.lock")):
        n_locks += 1
        pkg = lock.parent.name
        surface = json.loads(lock.read_text())["surface"]
        for tool in surface.get("tools", []):
            tools["tools"] += 1
            tools["with an outputSchema"] += "outputSchema" in tool
            if "inputSchema" in tool:
                walk(tool["inputSchema"], "input", pkg)
            if "outputSchema" in tool:
                walk(tool["outputSchema"], "output", pkg)
    out = sys.stdout
    out.write(f"Across {n_locks} lockfiles of {len({l.parent.name for l in ROOT.glob('*/*.lock')})} packages.\n\n")
    out.write(f"{tools['tools']} tool schemas, {tools['with an outputSchema']} of them with an outputSchema.\n\n")
    out.write("| keyword | input | output | servers |\n|---|---:|---:|---:|\n")
    keys = sorted({k for k, _ in kw}, key=lambda k: -(kw[(k, "input")] + kw[(k, "output")]))
    for k in keys:
        out.write(f"| `{k}` | {kw[(k, 'input')]} | {kw[(k, 'output')]} | {len(kw_pkgs[k])} |\n")
    out.write("\n| shape | input | output | servers |\n|---|---:|---:|---:|\n")
    keys = sorted({k for k, _ in shape}, key=lambda k: -(shape[(k, "input")] + shape[(k, "output")]))
    for k in keys:
        out.write(f"| {k} | {shape[(k, 'input')]} | {shape[(k, 'output')]} | {len(shape_pkgs[k])} |\n")
    if formats:
        out.write("\n| `format` value | input | output |\n|---|---:|---:|\n")
        for f in sorted({f for f, _ in formats}):
            out.write(f"| `{f}` | {formats[(f, 'input')]} | {formats[(f, 'output')]} |\n")


main()
