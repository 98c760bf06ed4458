#!/usr/bin/env python3
"""Regenerates manifests/src/k8s_semantics.json: what Kubernetes' own schemas say about
the types k8s-openapi lets operators embed (PodSpec, JobTemplateSpec, Condition, ...),
and k8s-openapi's JSON schemas leave out.

Usage: manifests/hack/k8s-semantics.py [--check]   (from anywhere)

The Kubernetes release is rkb_envtest::KUBERNETES_VERSION (envtest/src/assets.rs), the
API server rkb's tests run on and k8s-openapi's feature matches. The sources come from the
Go module proxy (`go mod download`, which uses the module cache when it has them):

- k8s.io/kubernetes api/openapi-spec/v3/*.json, per definition and property:
  x-kubernetes-list-type, x-kubernetes-list-map-keys, x-kubernetes-map-type (also of a
  whole definition: structType=atomic), format, and defaults that are not a Go zero value
  ("", 0, false, {}): those are openapi-gen's for required fields, not `+default` markers,
  and would make the API server fill in a required field it should refuse. A zero default
  of an optional list-map key stays (imagePullSecrets' `name: ""`): the API server refuses
  a list-map key that is neither required nor defaulted;
- k8s.io/apimachinery and k8s.io/api Go sources: the `+kubebuilder:validation:` and
  `+default=` markers on fields of their structs, also where a struct is embedded inline
  (metav1.Condition's pattern, lengths, enum, format; LocalObjectReference's `name: ""` in
  every selector that embeds it), which controller-gen applies and the spec leaves out or
  cannot tell from a zero value;
- Quantity's pattern, written from the grammar in its description (the spec gives none).

--check regenerates in memory and exits 1 if the checked-in file differs.
"""
import glob, json, os, re, subprocess, sys

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
target = os.path.join(root, "manifests/src/k8s_semantics.json")
assets = open(os.path.join(root, "envtest/src/assets.rs")).read()
k8s = re.search(r'pub const KUBERNETES_VERSION: &str = "(v[0-9.]+)";', assets).group(1)
staging = "v0" + k8s[2:]  # k8s.io/api and apimachinery v0.34.4 go with Kubernetes v1.34.4


def module_dir(module, version):
    out = subprocess.check_output(["go", "mod", "download", "-json", f"{module}@{version}"], cwd=root)
    return json.loads(out)["Dir"]


ZERO = ("", 0, False, {})
SEMANTICS = ("x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-map-type", "format")

definitions = {}


def entry(name):
    return definitions.setdefault(name, {})


spec_dir = os.path.join(module_dir("k8s.io/kubernetes", k8s), "api/openapi-spec/v3")
schemas = {}
for path in sorted(glob.glob(os.path.join(spec_dir, "*.json"))):
    schemas.update(json.load(open(path)).get("components", {}).get("schemas", {}))


def referenced(schema):
    refs = [s["$ref"] for s in schema.get("allOf", [])] + [schema.get("$ref")]
    return next((r.rsplit("/", 1)[1] for r in refs if r), None)


# (definition, property) pairs that key a list-map and are not required.
optional_keys = set()
for schema in schemas.values():
    for sub in schema.get("properties", {}).values():
        item = referenced(sub.get("items", {}))
        for key in sub.get("x-kubernetes-list-map-keys", []) if item else []:
            if key not in schemas[item].get("required", []):
                optional_keys.add((item, key))

for name, schema in sorted(schemas.items()):
    whole = {k: schema[k] for k in ("x-kubernetes-map-type",) if k in schema}
    if whole:
        entry(name)["self"] = whole
    for prop, sub in schema.get("properties", {}).items():
        found = {k: sub[k] for k in SEMANTICS if k in sub}
        if sub.get("format") == "int-or-string":
            found.pop("format")  # k8s-openapi writes x-kubernetes-int-or-string
        default = sub.get("default")
        zero = any(default == z and type(default) is type(z) for z in ZERO)
        if "default" in sub and (not zero or (name, prop) in optional_keys):
            found["default"] = default
        if found:
            entry(name).setdefault("properties", {})[prop] = found

# The Go packages whose types k8s-openapi names io.k8s.<...>, for their markers:
# `+kubebuilder:validation:*` and `+default=` (the spec cannot tell an explicit `+default=""`
# from a required field's zero value; a `+default=ref(...)` is in the spec resolved).
MARKER = re.compile(r"\+kubebuilder:validation:(\w+)(?:=(.*))?$")
DEFAULT = re.compile(r"^//\s*\+default=(.*)$")
KEYWORDS = {"Pattern": "pattern", "MaxLength": "maxLength", "MinLength": "minLength",
            "Minimum": "minimum", "Maximum": "maximum", "Format": "format", "Enum": "enum"}


def marker_value(key, raw):
    raw = raw.strip()
    if key == "Pattern":
        return raw.strip("`")
    if key == "Enum":
        return raw.split(";")
    if key == "Format":
        return raw
    return int(raw)


for module, prefix in (("k8s.io/apimachinery", "io.k8s.apimachinery"), ("k8s.io/api", "io.k8s.api")):
    base = module_dir(module, staging)
    for path in sorted(glob.glob(os.path.join(base, "**/types.go"), recursive=True)):
        package = os.path.relpath(os.path.dirname(path), base).replace(os.sep, ".")
        fields, inline = {}, {}  # struct -> {json name: markers}; struct -> embedded structs
        struct, markers = None, {}
        for line in open(path):
            line = line.strip()
            m = re.match(r"type (\w+) struct \{", line)
            if m:
                struct, markers = m.group(1), {}
                continue
            if struct is None:
                continue
            if line == "}":
                struct = None
                continue
            if line.startswith("//"):
                m = MARKER.search(line)
                if m and m.group(1) in KEYWORDS:
                    markers[KEYWORDS[m.group(1)]] = marker_value(m.group(1), m.group(2) or "")
                m = DEFAULT.match(line)
                if m and not m.group(1).startswith("ref("):
                    markers["default"] = json.loads(m.group(1))
                continue
            m = re.match(r'(\w+)\s+`json:",inline"', line)
            if m:
                inline.setdefault(struct, []).append(m.group(1))
            m = re.search(r'`json:"([^",]+)', line)
            if m and markers:
                fields.setdefault(struct, {})[m.group(1)] = markers
            markers = {}

        def field_markers(struct, seen=()):
            # An embedded struct's fields are the embedding one's (Go's `json:",inline"`).
            out = {}
            for embedded in inline.get(struct, []):
                if embedded not in seen:
                    out.update(field_markers(embedded, seen + (struct,)))
            out.update(fields.get(struct, {}))
            return out

        for struct in sorted(set(fields) | set(inline)):
            name = f"{prefix}.{package}.{struct}"
            for prop, found in field_markers(struct).items():
                if name in schemas and prop in schemas[name].get("properties", {}):
                    entry(name).setdefault("properties", {}).setdefault(prop, {}).update(found)

# controller-gen writes this pattern for Quantity too; ours follows the grammar in the
# description: sign, digits with an optional fraction, then a binary or decimal SI suffix
# or a decimal exponent.
number = r"(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))"
entry("io.k8s.apimachinery.pkg.api.resource.Quantity")["self"] = {
    "pattern": rf"^(\+|-)?{number}(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?{number}))?$"
}

table = {"kubernetes": k8s, "definitions": {k: definitions[k] for k in sorted(definitions)}}
text = json.dumps(table, indent=1, sort_keys=True) + "\n"
if "--check" in sys.argv:
    if open(target).read() != text:
        print(f"{target} is not what Kubernetes {k8s} says: run {sys.argv[0]}", file=sys.stderr)
        sys.exit(1)
    print(f"{target}: up to date with Kubernetes {k8s}", file=sys.stderr)
else:
    open(target, "w").write(text)
    props = sum(len(d.get("properties", {})) for d in definitions.values())
    print(f"{target}: {len(definitions)} definitions, {props} properties from Kubernetes {k8s}", file=sys.stderr)
