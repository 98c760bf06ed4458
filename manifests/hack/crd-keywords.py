#!/usr/bin/env python3
"""Counts the schema keywords that carry Kubernetes semantics in CRD files, to compare
rkb's CRDs with controller-gen's (or an earlier rkb's).

Usage: manifests/hack/crd-keywords.py FILE.yaml...   (one column per file)
Counts keys of schema nodes only (not inside default/enum/example values).
"""
import sys
import yaml

KEYWORDS = ["x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-map-type",
            "default", "pattern", "nullable", "enum", "format", "maxLength"]


def count(schema, counts):
    """Counts the keywords of one schema node and of its subschemas."""
    if not isinstance(schema, dict):
        return
    for key, value in schema.items():
        if key in counts:
            counts[key] += 1
        if key in ("properties", "patternProperties"):
            for sub in value.values():  # keys here are field names, not keywords
                count(sub, counts)
        elif key in ("items", "additionalProperties", "not"):
            count(value, counts)
        elif key in ("allOf", "anyOf", "oneOf"):
            for sub in value:
                count(sub, counts)


columns = []
for path in sys.argv[1:]:
    counts = dict.fromkeys(KEYWORDS, 0)
    for doc in yaml.safe_load_all(open(path)):
        if doc and doc.get("kind") == "CustomResourceDefinition":
            for version in doc["spec"]["versions"]:
                count(version.get("schema", {}).get("openAPIV3Schema", {}), counts)
    columns.append(counts)
print("| keyword | " + " | ".join(sys.argv[1:]) + " |")
print("|---|" + "---:|" * len(columns))
for key in KEYWORDS:
    print(f"| {key} | " + " | ".join(str(c[key]) for c in columns) + " |")
