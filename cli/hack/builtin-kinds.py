#!/usr/bin/env python3
"""Regenerates the tables of cli/src/scaffold/builtin_kinds.rs from k8s-openapi's sources.

Usage: cli/hack/builtin-kinds.py   (from the repository root; reads the k8s-openapi
version and API feature the workspace uses from `cargo metadata`)
"""
import json, os, re, subprocess, sys

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
target = os.path.join(root, "cli/src/scaffold/builtin_kinds.rs")
feature = re.search(r'K8S_API_FEATURE: &str = "(v1_\d+)"', open(os.path.join(root, "cli/src/lib.rs")).read()).group(1)
meta = json.loads(subprocess.check_output(["cargo", "metadata", "--format-version=1", "--locked"], cwd=root))
pkg = next(p for p in meta["packages"] if p["name"] == "k8s-openapi")
src = os.path.join(os.path.dirname(pkg["manifest_path"]), "src", feature)

resource = re.compile(
    r'impl crate::Resource for (\w+) \{\s*const API_VERSION[^;]*;\s*const GROUP: &\'static str = "([^"]*)";\s*'
    r'const KIND: &\'static str = "(\w+)";\s*const VERSION: &\'static str = "(\w+)";\s*'
    r'const URL_PATH_SEGMENT: &\'static str = "(\w+)";\s*type Scope = crate::(\w+);')
listable, create_only = [], []
for dirpath, _, files in os.walk(src):
    for name in files:
        text = open(os.path.join(dirpath, name)).read()
        for ty, group, kind, version, plural, scope in resource.findall(text):
            if scope == "SubResourceScope":
                continue
            module = os.path.relpath(os.path.join(dirpath, name[:-3]), src).split(os.sep)[:-1]
            rust_path = "k8s_openapi::" + "::".join(module + [ty])
            entry = (group or "core", version, kind, plural, scope == "NamespaceResourceScope", rust_path)
            (listable if f"impl crate::ListableResource for {ty}" in text else create_only).append(entry)

def table(entries):
    return "".join(
        f'    BuiltinKind {{ group: "{g}", version: "{v}", kind: "{k}", plural: "{p}", namespaced: {str(n).lower()}, rust_path: "{r}" }},\n'
        for g, v, k, p, n, r in sorted(entries))

text = open(target).read()
text = re.sub(r"(pub const BUILTIN_KINDS: &\[BuiltinKind\] = &\[\n).*?(\];)", lambda m: m.group(1) + table(listable) + m.group(2), text, flags=re.S)
text = re.sub(r"(pub const CREATE_ONLY_KINDS: &\[BuiltinKind\] = &\[\n).*?(\];)", lambda m: m.group(1) + table(create_only) + m.group(2), text, flags=re.S)
text = re.sub(r"known to k8s-openapi [0-9.]+ \(feature `v1_\d+`\)", f"known to k8s-openapi {pkg['version']} (feature `{feature}`)", text)
open(target, "w").write(text)
print(f"{target}: {len(listable)} listable and {len(create_only)} create-only kinds from k8s-openapi {pkg['version']} {feature}", file=sys.stderr)
