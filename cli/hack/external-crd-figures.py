#!/usr/bin/env python3
"""Counts what the external CRDs of cli/tests/data/external-crds/ hold, what rkb's round
trip keeps, and what kopium keeps: the table of the README's "External APIs" section.

For each CRD (the version testdata/project-external was made from), under `spec` and
`status`:
  - input: the CRD's schema;
  - rkb: the schema rkb derives from the types `rkb create api --external-crd` wrote
    (testdata/project-external; its types' tests write it, with RKB_EXTERNAL_DERIVED_DIR);
  - kopium: the Rust `kopium -f <crd>` writes, where each property is a field and a
    string enum a Rust enum; every other keyword counts as kept only if its value appears
    in that output (kopium writes no validation attributes, so this is an upper bound).

Usage: cli/hack/external-crd-figures.py [--kopium PATH]   (kopium: `cargo install kopium`)
Run from anywhere; it runs `cargo test -p external-operator` (CARGO_TARGET_DIR is honoured).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "cli/tests/data/external-crds"
CRDS = [
    ("Certificate", DATA / "cert-manager/cert-manager.io_certificates.yaml", "v1"),
    ("ServiceMonitor", DATA / "prometheus-operator/monitoring.coreos.com_servicemonitors.yaml", "v1"),
    ("HTTPRoute", DATA / "gateway-api/gateway.networking.k8s.io_httproutes.yaml", "v1"),
    ("Shape", DATA / "shapes/shapes.example.org_shapes.yaml", "v1beta1"),
]

# (row, how to count it in one schema node)
BOUNDS = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
          "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"]
ROWS = [
    ("properties", None),
    ("required", "required"),
    ("descriptions", "description"),
    ("formats", "format"),
    ("enums", "enum"),
    ("patterns", "pattern"),
    ("bounds", BOUNDS),
    ("defaults", "default"),
    ("CEL rules", "x-kubernetes-validations"),
    ("list types", "x-kubernetes-list-type"),
    ("list-map keys", "x-kubernetes-list-map-keys"),
    ("map types", "x-kubernetes-map-type"),
    ("preserve-unknown-fields", "x-kubernetes-preserve-unknown-fields"),
    ("int-or-string", "x-kubernetes-int-or-string"),
    ("embedded resources", "x-kubernetes-embedded-resource"),
]


def nodes(schema, path=""):
    """Every schema node below spec and status, with its path."""
    yield path, schema
    for name, child in (schema.get("properties") or {}).items():
        yield from nodes(child, f"{path}.{name}")
    if isinstance(schema.get("items"), dict):
        yield from nodes(schema["items"], f"{path}[]")
    if isinstance(schema.get("additionalProperties"), dict):
        yield from nodes(schema["additionalProperties"], f"{path}.*")


def version_schema(crd, version):
    for v in crd["spec"]["versions"]:
        if v["name"] == version:
            return v["schema"]["openAPIV3Schema"]
    sys.exit(f"no version {version}")


def counts(schema):
    """Row -> count, and row -> list of (path, value) for kopium's check."""
    out = {row: 0 for row, _ in ROWS}
    items = {row: [] for row, _ in ROWS}
    for top in ("spec", "status"):
        if top not in schema.get("properties", {}):
            continue
        for path, node in nodes(schema["properties"][top], f".{top}"):
            out["properties"] += path != f".{top}"
            for row, keys in ROWS[1:]:
                for key in keys if isinstance(keys, list) else [keys]:
                    if key not in node:
                        continue
                    value = node[key]
                    n = len(value) if key in ("required", "x-kubernetes-validations") else 1
                    out[row] += n
                    items[row].append((path, key, value))
    return out, items


def derived_crds():
    out = Path(tempfile.mkdtemp(prefix="rkb-derived-"))
    env = dict(os.environ, RKB_EXTERNAL_DERIVED_DIR=str(out))
    subprocess.run(["cargo", "test", "-q", "-p", "external-operator", "--lib", "types_derive_the_external_crd"],
                   cwd=REPO, env=env, check=True, stdout=subprocess.DEVNULL)
    return {p.stem: json.loads(p.read_text()) for p in out.glob("*.json")}


def kopium_counts(kopium, file, version, items):
    """What kopium's Rust keeps of each row."""
    crd = yaml.safe_load(file.read_text())
    text = subprocess.run([kopium, "-f", str(file), "--api-version", version], capture_output=True,
                          text=True, check=True).stdout
    fields = len(re.findall(r"^\s*pub [a-z_][a-z0-9_]*(?:#[a-z_]+)?\s*:", text, re.M)) + \
        len(re.findall(r"^\s*pub r#[a-z_]+\s*:", text, re.M))
    enum_types = len(re.findall(r"^pub enum ", text, re.M))
    out = {"properties": fields}
    for row, _ in ROWS[1:]:
        kept = 0
        for path, key, value in items[row]:
            if row == "required":
                kept += len(value)  # a field without Option<...>
            elif row == "descriptions":
                first = str(value).strip().splitlines()[0][:60]
                kept += first in text
            elif row == "enums":
                kept += 0  # counted below, as Rust enums
            elif row == "formats":
                kept += {"int32": "i32", "int64": "i64", "double": "f64", "float": "f32"}.get(value) is not None
            elif row == "int-or-string":
                kept += "IntOrString" in text
            elif row == "preserve-unknown-fields":
                kept += "serde_json::Value" in text or "BTreeMap<String, serde_json::Value>" in text
            elif row == "CEL rules":
                kept += sum(1 for rule in value if rule["rule"] in text)
            elif row in ("patterns",):
                kept += json.dumps(value)[1:-1] in text
            else:
                kept += key in text or f"{key}=" in text
        out[row] = kept
    out["enums"] = enum_types
    return out, text


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kopium", default=os.environ.get("KOPIUM", "kopium"))
    args = parser.parse_args()
    derived = derived_crds()
    columns = []
    for name, file, version in CRDS:
        crd = yaml.safe_load(file.read_text())
        crd_name = crd["metadata"]["name"]
        given, items = counts(version_schema(crd, version))
        back, _ = counts(version_schema(derived[crd_name], version))
        try:
            kop, _ = kopium_counts(args.kopium, file, version, items)
        except (OSError, subprocess.CalledProcessError) as e:
            print(f"(kopium not run: {e})", file=sys.stderr)
            kop = {}
        columns.append((name, given, back, kop))
    print("| keyword (under spec, status) | " + " | ".join(
        f"{name}: input | rkb | kopium" for name, *_ in columns) + " |")
    print("|---|" + "---:|" * (3 * len(columns)))
    for row, _ in ROWS:
        cells = []
        for _, given, back, kop in columns:
            cells += [str(given[row]), str(back[row]), str(kop.get(row, "-"))]
        print(f"| {row} | " + " | ".join(cells) + " |")

if __name__ == "__main__":
    main()
