#!/usr/bin/env python3
"""Size figures of rkb's crates: lines per crate, the longest files and functions, and modules that import each other.

Run from anywhere in the checkout:

    python3 hack/code-figures.py            # both tables
    python3 hack/code-figures.py --top 20   # more functions

Lines are raw lines (blank and comment lines included). A crate's lines are split
into its non-test source, its inline `#[cfg(test)]` modules, its test files
(`tests/` and `tests.rs` files) and its benches. A function's length runs from
the line of its `fn` to the line of its closing brace; functions inside
`#[cfg(test)]` modules and test files are left out of the function table.

Two modules import each other when code (not a comment or a doc link) of each names
the other through `crate::` or `super::` paths, and neither is inside the other (a
folder's `mod.rs` may be used by the phases it runs): ARCHITECTURE.md's rule.
"""

import argparse
import os
import re
import sys
from pathlib import Path

CRATES = ["cli", "manager", "manifests", "derive", "envtest", "testing", "core", "runtime"]

TOKEN = re.compile(
    r"""
    (?P<comment>//[^\n]*)
  | (?P<block>/\*)
  | (?P<raw>b?r(?P<hashes>\#*)")
  | (?P<string>b?")
  | (?P<char>b?'(?:[^'\\\n]|\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]{1,6}\}|.))')
  | (?P<lifetime>'[A-Za-z_][A-Za-z0-9_]*)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<attr>\#!?\[)
  | (?P<punct>[{}()\[\];<>])
  | (?P<newline>\n)
  | (?P<other>.)
    """,
    re.VERBOSE | re.DOTALL,
)


def tokens(text):
    """(kind, value, line) for the tokens that matter, comments and literals skipped."""
    line = 1
    pos = 0
    while pos < len(text):
        m = TOKEN.match(text, pos)
        kind = m.lastgroup
        if kind == "hashes":
            kind = "raw"
        if kind == "block":
            depth, end = 1, m.end()
            while depth and end < len(text):
                if text.startswith("/*", end):
                    depth, end = depth + 1, end + 2
                elif text.startswith("*/", end):
                    depth, end = depth - 1, end + 2
                else:
                    end += 1
            line += text.count("\n", pos, end)
            pos = end
            continue
        if kind == "raw":
            close = '"' + m.group("hashes")
            end = text.find(close, m.end())
            end = len(text) if end < 0 else end + len(close)
            line += text.count("\n", pos, end)
            pos = end
            continue
        if kind == "string":
            end = m.end()
            while end < len(text) and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            end += 1
            line += text.count("\n", pos, end)
            pos = end
            continue
        if kind == "newline":
            line += 1
        elif kind in ("ident", "punct", "attr"):
            yield kind, m.group(kind), line
        pos = m.end()


def analyse(text):
    """Test line ranges (inline #[cfg(test)] items) and functions (name, start, end)."""
    toks = list(tokens(text))
    test_ranges = []
    functions = []
    # Scopes: (kind, name, line) for each open brace; kind is 'impl', 'fn', 'test' or ''.
    scopes = []
    pending = None  # what the next `{` opens: (kind, name, line)
    cfg_test_at = None
    paren = 0
    i = 0
    while i < len(toks):
        kind, value, line = toks[i]
        if kind == "attr":
            # #[cfg(test)] marks the item that follows.
            words = [t[1] for t in toks[i + 1 : i + 5]]
            if words[:4] == ["cfg", "(", "test", ")"]:
                cfg_test_at = line
        elif value == "impl" and pending is None:
            # impl<..> Trait for Type { / impl Type {
            j, name, angle = i + 1, None, 0
            while j < len(toks) and not (toks[j][1] == "{" and angle == 0):
                v = toks[j][1]
                if v == "<":
                    angle += 1
                elif v == ">":
                    angle -= 1
                elif v == "for" and angle == 0:
                    name = None
                elif v == "where" and angle == 0:
                    break
                elif toks[j][0] == "ident" and angle == 0 and v not in ("dyn", "mut"):
                    name = v
                j += 1
            pending = ("impl", name, line)
        elif value == "fn" and i + 1 < len(toks) and toks[i + 1][0] == "ident":
            pending = ("fn", toks[i + 1][1], line)
            paren = 0
        elif value == "mod" and cfg_test_at is not None:
            pending = ("test", None, cfg_test_at)
        elif value in ("(", "["):
            paren += 1
        elif value in (")", "]"):
            paren -= 1
        elif value == ";" and paren <= 0:
            if pending and pending[0] == "fn":
                pending = None  # a declaration without a body
            if pending and pending[0] == "test":
                pending = None
            if cfg_test_at is not None and pending is None:
                cfg_test_at = None
        elif value == "{":
            if pending is not None and not (pending[0] == "fn" and paren > 0):
                scopes.append(pending)
                pending = None
                cfg_test_at = None
            else:
                if cfg_test_at is not None and pending is None:
                    # #[cfg(test)] on an item with a body that is not a module.
                    scopes.append(("test", None, cfg_test_at))
                    cfg_test_at = None
                else:
                    scopes.append(("", None, line))
        elif value == "}":
            if scopes:
                skind, name, start = scopes.pop()
                in_test = any(s[0] == "test" for s in scopes)
                if skind == "test":
                    test_ranges.append((start, line))
                elif skind == "fn" and not in_test:
                    owner = next((s[1] for s in reversed(scopes) if s[0] == "impl"), None)
                    full = f"{owner}::{name}" if owner else name
                    functions.append((full, start, line))
        i += 1
    return test_ranges, functions


def is_test_file(path):
    parts = path.parts
    return "tests" in parts or path.name == "tests.rs" or "ui" in parts


def figures(root):
    rows = []
    functions = []
    files = []
    for crate in CRATES:
        counts = {"src": 0, "inline": 0, "tests": 0, "benches": 0}
        for path in sorted((root / crate).rglob("*.rs")):
            rel = path.relative_to(root)
            if "target" in rel.parts:
                continue
            text = path.read_text(encoding="utf-8")
            total = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
            inner = rel.relative_to(crate)
            if inner.parts[0] == "benches":
                counts["benches"] += total
            elif is_test_file(inner):
                counts["tests"] += total
            else:
                ranges, fns = analyse(text)
                inline = sum(end - start + 1 for start, end in ranges)
                files.append((total - inline, str(rel)))
                counts["inline"] += inline
                counts["src"] += total - inline
                for name, start, end in fns:
                    if not any(s <= start <= e for s, e in ranges):
                        functions.append((end - start + 1, name, f"{rel}:{start}-{end}"))
        rows.append((crate, counts))
    return rows, functions, files


PATH = re.compile(r"\b(crate|super(?:::super)*)::(\{[^}]*\}|[A-Za-z_][A-Za-z0-9_:]*)")


def module_of(src, path):
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts and parts[-1] in ("mod", "lib", "main"):
        parts.pop()
    return tuple(parts)


def import_cycles(root):
    """Pairs of a crate's modules whose non-test code names each other."""
    pairs = []
    for crate in CRATES:
        src = root / crate / "src"
        files = {module_of(src, p): p for p in src.rglob("*.rs") if not is_test_file(p.relative_to(src))}
        uses = {}
        for module, path in files.items():
            text = path.read_text(encoding="utf-8").split("#[cfg(test)]")[0]
            code = "\n".join(l for l in text.splitlines() if not l.strip().startswith("//"))
            named = set()
            for base, rest in PATH.findall(code):
                up = base.count("super")
                start = () if base == "crate" else module[: max(len(module) - up, 0)]
                heads = rest.strip("{}").split(",") if rest.startswith("{") else [rest]
                for head in heads:
                    target = start + tuple(p for p in head.strip().split(" ")[0].split("::") if p)
                    for k in range(len(target), 0, -1):
                        if target[:k] in files:
                            named.add(target[:k])
                            break
            uses[module] = named - {module}
        for a, named in uses.items():
            for b in named:
                inside = a == b[: len(a)] or b == a[: len(b)]
                if a < b and a in uses.get(b, ()) and not inside:
                    pairs.append(f"{crate}: {'::'.join(a)} <-> {'::'.join(b)}")
    return pairs


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=10, help="how many functions to list")
    args = parser.parse_args()
    root = Path(__file__).resolve().parent.parent
    rows, functions, files = figures(root)

    print("| crate | src (non-test) | inline #[cfg(test)] | tests/ + tests.rs | benches |")
    print("|---|---:|---:|---:|---:|")
    totals = {"src": 0, "inline": 0, "tests": 0, "benches": 0}
    for crate, c in rows:
        print(f"| {crate} | {c['src']:,} | {c['inline']:,} | {c['tests']:,} | {c['benches']:,} |")
        for k in totals:
            totals[k] += c[k]
    t = totals
    print(f"| **total** | **{t['src']:,}** | **{t['inline']:,}** | **{t['tests']:,}** | **{t['benches']:,}** |")
    print()
    lengths = sorted(n for n, _, _ in functions)
    median = lengths[len(lengths) // 2] if lengths else 0
    over50 = sum(1 for n in lengths if n > 50)
    print(
        f"{len(functions)} non-test functions; median {median} lines; "
        f"{over50} over 50 lines; longest {args.top}:"
    )
    print()
    print("| # | function | place | lines |")
    print("|---:|---|---|---:|")
    functions.sort(key=lambda f: (-f[0], f[2]))
    for i, (n, name, place) in enumerate(functions[: args.top], 1):
        print(f"| {i} | `{name}` | {place} | {n} |")
    print()
    files.sort(key=lambda f: (-f[0], f[1]))
    over800 = sum(1 for n, _ in files if n > 800)
    print(f"{over800} non-test files over 800 lines; longest 5 (non-test lines):")
    print()
    for n, place in files[:5]:
        print(f"- {place}: {n}")
    print()
    cycles = import_cycles(root)
    print(f"Modules that import each other: {len(cycles)}")
    for pair in cycles:
        print(f"- {pair}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
