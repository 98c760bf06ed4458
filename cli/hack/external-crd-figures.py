#!/usr/bin/env python3
"""Counts what the external CRDs of cli/tests/data/external-crds/ hold, what rkb's round
trip keeps, and what kopium keeps: the table of docs/src/design/external-crd-types.md.

For each CRD (the version testdata/project-external was made from), under `spec` and
`status`:
  - input: the CRD's schema;
  - rkb: the schema rkb derives from the types `rkb create api --external-crd` wrote
    (testdata/project-external; its types' tests write it, with RKB_EXTERNAL_DERIVED_DIR);
  - kopium: the schema kube derives from the types `kopium --auto -f <crd>` writes (doc
    comments, `#[derive(JsonSchema)]`), built in a scratch crate with this workspace's
    lock file.

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


CRATE = """[package]
name = "kopium-figures"
version = "0.0.0"
edition = "2024"
publish = false

[workspace]

[dependencies]
k8s-openapi = { version = "0.29", features = ["v1_37", "schemars"] }
kube = { version = "5.0", default-features = false, features = ["derive"] }
schemars = "1"
serde = { version = "1", features = ["derive"] }
serde_json = "1"
"""


def kopium_crds(kopium):
    """The CRDs kube derives from kopium's types (`kopium --auto`: doc comments and a derived
    schema), by CRD name: a scratch crate, built with this workspace's lock file."""
    crate = Path(tempfile.mkdtemp(prefix="kopium-figures-"))
    (crate / "src").mkdir()
    (crate / "Cargo.toml").write_text(CRATE)
    (crate / "Cargo.lock").write_bytes((REPO / "Cargo.lock").read_bytes())
    modules, prints = [], []
    for i, (_, file, version) in enumerate(CRDS):
        rust = subprocess.run([kopium, "--auto", "-f", str(file), "--api-version", version],
                              capture_output=True, text=True, check=True).stdout
        # kopium's name for the kind (HTTPRoute becomes HttpRoute): its spec struct's, less Spec.
        kind = re.search(r"derive\(CustomResource[^\n]*\n(?:#\[[^\n]*\n)*pub struct (\w+)Spec ", rust).group(1)
        (crate / "src" / f"crd{i}.rs").write_text(rust)
        modules.append(f"#[allow(dead_code, clippy::all)]\nmod crd{i};")
        prints.append(f"    println!(\"{{}}\", serde_json::to_string(&crd{i}::{kind}::crd()).unwrap());")
    (crate / "src" / "main.rs").write_text(
        "use kube::CustomResourceExt;\n" + "\n".join(modules) + "\nfn main() {\n" + "\n".join(prints) + "\n}\n")
    out = subprocess.run(["cargo", "run", "-q", "--offline"], cwd=crate, capture_output=True, text=True)
    if out.returncode != 0:
        raise OSError(f"kopium's types do not build:\n{out.stderr[-3000:]}")
    crds = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
    return {c["metadata"]["name"]: c for c in crds}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kopium", default=os.environ.get("KOPIUM", "kopium"))
    args = parser.parse_args()
    derived = derived_crds()
    try:
        kopium = kopium_crds(args.kopium)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"(kopium not run: {e})", file=sys.stderr)
        kopium = {}
    columns = []
    for name, file, version in CRDS:
        crd = yaml.safe_load(file.read_text())
        crd_name = crd["metadata"]["name"]
        given, _ = counts(version_schema(crd, version))
        back, _ = counts(version_schema(derived[crd_name], version))
        kop = counts(version_schema(kopium[crd_name], version))[0] if crd_name in kopium else {}
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
