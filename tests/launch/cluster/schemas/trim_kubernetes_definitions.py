"""Keeps, from a Kubernetes `swagger.json`, the definitions rlrep's cluster manifests use and all they refer to.

The whole spec is 3-4 MB per Kubernetes version; the definitions reachable from these roots are ~0.2 MB. Each
kept definition is copied unchanged, so `#/definitions/...` references still resolve within the output.

  python trim_kubernetes_definitions.py SWAGGER_JSON OUT_JSON
"""

import json
import sys

ROOTS = ("io.k8s.api.core.v1.ConfigMap", "io.k8s.api.networking.v1.NetworkPolicy",
         "io.k8s.api.core.v1.PodTemplateSpec")


def references(node: object) -> list[str]:
  """The names of the definitions `node` refers to with `$ref`, at any depth."""
  if isinstance(node, dict):
    return [name for key, value in node.items()
            for name in ([value.rsplit("/", 1)[-1]] if key == "$ref" else references(value))]
  if isinstance(node, list):
    return [name for value in node for name in references(value)]
  return []


def trim(definitions: dict) -> dict:
  """The definitions reachable from `ROOTS`."""
  kept, pending = {}, list(ROOTS)
  while pending:
    name = pending.pop()
    if name not in kept:
      kept[name] = definitions[name]
      pending.extend(references(definitions[name]))
  return {"definitions": kept}


if __name__ == "__main__":
  source, out = sys.argv[1:]
  with open(source) as file:
    spec = json.load(file)
  with open(out, "w") as file:
    json.dump(trim(spec["definitions"]), file, indent=2, sort_keys=True)
    file.write("\n")
