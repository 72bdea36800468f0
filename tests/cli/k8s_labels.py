#!/usr/bin/env python3
"""Checks node labels against Kubernetes' label syntax and NFD's feature-file
format. Usage: k8s_labels.py nfd FILE | k8s_labels.py json FILE |
k8s_labels.py selftest.

The rules are Kubernetes' own, in its words
(kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/util/validation/
validation.go: IsQualifiedName, IsValidLabelValue, IsDNS1123Subdomain):
  name  ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9], at most 63 characters
  prefix a DNS-1123 subdomain, at most 253 characters
  value empty, or the name's pattern, at most 63 characters
and NFD's (node-feature-discovery pkg/apis/nfd/validate/validate.go): a
prefix is required, kubernetes.io and k8s.io namespaces are denied except
feature.node.kubernetes.io and profile.node.kubernetes.io and their
sub-namespaces. Feature files (source/local/local.go): '#' comments, '# +'
directives, `name[=value]` lines."""
import json
import re
import sys

NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
DNS1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def key_error(key):
    parts = key.split("/")
    if len(parts) != 2:
        return "needs exactly one '/' between prefix and name"
    prefix, name = parts
    if not prefix or len(prefix) > 253 or not DNS1123.match(prefix):
        return "prefix is not a DNS-1123 subdomain of at most 253 characters"
    if len(name) > 63 or not NAME.match(name):
        return "name is not at most 63 of [-A-Za-z0-9_.] with alphanumeric ends"
    allowed = ("feature.node.kubernetes.io", "profile.node.kubernetes.io")
    for denied in ("kubernetes.io", "k8s.io"):
        if (prefix == denied or prefix.endswith("." + denied)) and not any(
                prefix == a or prefix.endswith("." + a) for a in allowed):
            return "prefix is in a namespace NFD denies"
    return None


def value_error(value):
    if value == "":
        return None
    if len(value) > 63 or not NAME.match(value):
        return "value is not at most 63 of [-A-Za-z0-9_.] with alphanumeric ends"
    return None


def check(labels):
    errors = []
    for key, value in labels.items():
        for why in (key_error(key), value_error(value)):
            if why:
                errors.append("%s=%s: %s" % (key, value, why))
    return errors


def parse_nfd(text):
    labels = {}
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line.startswith("#"):
            if line.startswith("# +"):
                raise ValueError("unexpected NFD directive: " + line)
            continue
        key, _, value = line.partition("=")
        labels[key] = value if "=" in line else "true"
    return labels


def selftest():
    bad = {"a.io/-x": "1", "a.io/x": "-1", "A.io/x": "1", "x": "1", "a.io/b/c": "1",
           "a.io/" + "x" * 64: "1", "a.io/x": "y" * 64, "kubernetes.io/x": "1",
           "a.io/x y": "1"}
    good = {"gpuopt.feature.node.kubernetes.io/gpu.count": "4", "a.io/x": "",
            "a.io/x.y_z-1": "NVIDIA-H100-80GB-HBM3", "a.io/" + "x" * 63: "y" * 63}
    for k, v in bad.items():
        if not check({k: v}):
            sys.exit("selftest: %r=%r passed but breaks the rules" % (k, v))
    if check(good):
        sys.exit("selftest: %s" % check(good))


def main():
    if sys.argv[1] == "selftest":
        selftest()
        return
    text = open(sys.argv[2]).read()
    labels = json.loads(text)["labels"] if sys.argv[1] == "json" else parse_nfd(text)
    errors = check(labels)
    if errors:
        sys.exit("\n".join(errors))
    for k, v in labels.items():
        print("%s=%s" % (k, v))


main()
