"""The written cluster manifests against the real schemas, vendored in tests/launch/cluster/schemas/ (see its
README).

KubeRay's RayJob CRD is checked at the oldest release rlrep supports and at the latest, Kubernetes' own kinds and
every pod template at two API versions. The API server checks types and required fields (as `jsonschema` does
here) but silently drops fields a schema does not declare, which kubectl's strict validation refuses:
`undeclared` walks for those.
"""

import functools
import json
import pathlib

import jsonschema
import pytest
import yaml

from launch.cluster import kube
from launch.cluster import manifests as manifests_lib
from launch.cluster.config import ClusterConfig
from launch.experiment import Experiment

SCHEMAS = pathlib.Path(__file__).parent / "schemas"
KUBERAY = ("v1.2.2", "v1.7.0")  # README: KubeRay >= 1.2; and the latest release
KUBERNETES = ("1.30", "1.36")   # the k8s.io/api each of them is built with (v0.30.2, v0.36.0)
OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
KINDS = {"ConfigMap": "io.k8s.api.core.v1.ConfigMap", "NetworkPolicy": "io.k8s.api.networking.v1.NetworkPolicy"}

V5E, V4, V5P = "tpu-v5-lite-podslice", "tpu-v4-podslice", "tpu-v5p-slice"
BUCKET = ClusterConfig(volume_bucket="rlrep-runs-bucket", service_account="rlrep-writer")
VARIANTS = {
    "tpu-v5e-1x1": {"replicas": "tpu", "cluster": ClusterConfig(tpu_accelerator=V5E, tpu_topology="1x1")},
    "tpu-v5e-2x2": {"replicas": "tpu", "cluster": ClusterConfig(tpu_accelerator=V5E, tpu_topology="2x2")},
    "tpu-v5e-2x4": {"replicas": "tpu", "cluster": ClusterConfig(tpu_accelerator=V5E, tpu_topology="2x4")},
    "tpu-v4-2x2x1": {"replicas": "tpu", "cluster": ClusterConfig(tpu_accelerator=V4, tpu_topology="2x2x1")},
    "tpu-v5p-2x2x1": {"replicas": "tpu", "cluster": ClusterConfig(tpu_accelerator=V5P, tpu_topology="2x2x1")},
    "gpu-1": {"replicas": "gpu:1"},
    "gpu-4-a100": {"replicas": "gpu:4", "cluster": ClusterConfig(gpu_accelerator="nvidia-tesla-a100")},
    "cpu-1": {"replicas": "cpu:1"},
    "cpu-4": {"replicas": "cpu:4"},
    "tpu-16-actors-4-envs": {"replicas": "tpu", "actors": 16, "envs_per_actor": 4,
                             "cluster": ClusterConfig(tpu_accelerator=V5E, tpu_topology="2x4")},
    "gpu-64-actors": {"replicas": "gpu:2", "actors": 64, "cluster": ClusterConfig(namespace="rl-team")},
    "tpu-v5e-2x4-gcs-bucket": {"replicas": "tpu", "cluster": ClusterConfig(
        tpu_accelerator=V5E, tpu_topology="2x4", volume_bucket="rlrep-runs-bucket", service_account="rlrep-writer")},
    "gpu-1-gcs-bucket": {"replicas": "gpu:1", "cluster": BUCKET},
    "cpu-4-gcs-bucket-other-namespace": {"replicas": "cpu:4", "cluster": ClusterConfig(
        namespace="rl-team", volume_bucket="team.runs", service_account="default")},
    "cpu-1-other-claim": {"replicas": "cpu:1", "cluster": ClusterConfig(volume_claim="team-runs.v2")},
}


def _int_or_string(validator, types, instance, schema):
  """Kubernetes declares IntOrString as `type: string, format: int-or-string`: integers are valid too."""
  if schema.get("format") == "int-or-string" and validator.is_type(instance, "integer"):
    return
  yield from jsonschema.Draft4Validator.VALIDATORS["type"](validator, types, instance, schema)


Validator = jsonschema.validators.extend(jsonschema.Draft4Validator, {"type": _int_or_string})


@functools.cache
def _definitions(kubernetes: str) -> dict:
  return json.loads((SCHEMAS / f"kubernetes-{kubernetes}-definitions.json").read_text())["definitions"]


def _kind(kubernetes: str, name: str) -> dict:
  """A self-contained schema for one Kubernetes definition."""
  return {"$ref": f"#/definitions/{name}", "definitions": _definitions(kubernetes)}


@functools.cache
def _ray_job(kuberay: str, kubernetes: str) -> dict:
  """The CRD's schema for ray.io/v1 RayJob; its root `metadata` is checked as ObjectMeta, as the API server does."""
  crd = yaml.load((SCHEMAS / f"kuberay-{kuberay}-ray.io_rayjobs.yaml").read_text(), Loader=yaml.CSafeLoader)
  schema = next(version["schema"]["openAPIV3Schema"] for version in crd["spec"]["versions"] if version["name"] == "v1")
  return {**schema, "properties": {**schema["properties"], "metadata": {"$ref": f"#/definitions/{OBJECT_META}"}},
          "definitions": _definitions(kubernetes)}


def undeclared(instance, schema: dict, definitions: dict, path: str = "$") -> list[str]:
  """Paths of the fields of `instance` that `schema` does not declare, i.e. that the API server would drop."""
  while "$ref" in schema:
    schema = definitions[schema["$ref"].rsplit("/", 1)[-1]]
  if isinstance(instance, list):
    return [where for index, item in enumerate(instance)
            for where in undeclared(item, schema.get("items", {}), definitions, f"{path}[{index}]")]
  if not isinstance(instance, dict):
    return []
  properties, others = schema.get("properties", {}), schema.get("additionalProperties", False)
  found = []
  for key, value in instance.items():
    where = f"{path}.{key}"
    if key in properties or isinstance(others, dict):
      found += undeclared(value, properties.get(key, others), definitions, where)
    elif others is not True and not schema.get("x-kubernetes-preserve-unknown-fields"):
      found.append(where)
  return found


def problems(manifest: dict, schema: dict, label: str) -> list[str]:
  """Schema violations and undeclared fields of `manifest`, each with its path."""
  errors = [f"{label}: {error.json_path}: {error.message}" for error in Validator(schema).iter_errors(manifest)]
  return errors + [f"{label}: {where}: not declared"
                   for where in undeclared(manifest, schema, schema["definitions"])]


def all_problems(manifests: list[dict]) -> list[str]:
  """What any of the vendored schemas finds in the ConfigMap, RayJob and NetworkPolicy."""
  found = []
  for manifest in manifests:
    kind = manifest["kind"]
    if kind == "RayJob":
      spec = manifest["spec"]["rayClusterSpec"]
      templates = {"head": spec["headGroupSpec"]["template"],
                   **{group["groupName"]: group["template"] for group in spec["workerGroupSpecs"]}}
      found += [problem for kuberay, kubernetes in zip(KUBERAY, KUBERNETES)
                for problem in problems(manifest, _ray_job(kuberay, kubernetes), f"KubeRay {kuberay} RayJob")]
      found += [problem for kubernetes in KUBERNETES for group, template in templates.items()
                for problem in problems(template, _kind(kubernetes, "io.k8s.api.core.v1.PodTemplateSpec"),
                                        f"Kubernetes {kubernetes} {group} pod template")]
    else:
      found += [problem for kubernetes in KUBERNETES
                for problem in problems(manifest, _kind(kubernetes, KINDS[kind]), f"Kubernetes {kubernetes} {kind}")]
  return found


def _written(tmp_path: pathlib.Path, **settings) -> list[dict]:
  """The manifests as written for kubectl."""
  paths = manifests_lib.write(manifests_lib.render(Experiment(out="runs/walker", **settings)), tmp_path)
  return [yaml.safe_load(path.read_text()) for path in paths]


@pytest.mark.parametrize("settings", VARIANTS.values(), ids=VARIANTS.keys())
def test_every_manifest_matches_kuberay_and_kubernetes_schemas(tmp_path, settings):
  manifests = _written(tmp_path, **settings)
  assert [m["kind"] for m in manifests] == ["ConfigMap", "RayJob", "NetworkPolicy"]
  assert all_problems(manifests) == []
  for kubernetes in KUBERNETES:  # the apiVersion names the group and version the definitions are for
    for manifest in (m for m in manifests if m["kind"] in KINDS):
      [kind] = _definitions(kubernetes)[KINDS[manifest["kind"]]]["x-kubernetes-group-version-kind"]
      assert manifest["apiVersion"] == "/".join(filter(None, (kind["group"], kind["version"])))


def test_tpu_v6e_is_refused_rather_than_rendered():
  with pytest.raises(ValueError, match="TPU v6e .* the last TPU runtime for TensorFlow 2.15"):
    manifests_lib.render(Experiment(out="runs/x", replicas="tpu",
                                    cluster=ClusterConfig(tpu_accelerator="tpu-v6e-slice")))


@pytest.mark.parametrize("config", [ClusterConfig(), BUCKET], ids=["claim", "gcs-bucket"])
def test_fetchs_helper_pod_matches_the_kubernetes_schemas_and_mounts_what_the_job_does(tmp_path, config):
  """A Pod is apiVersion, kind and a pod template's metadata and spec (the trimmed definitions hold no Pod)."""
  pod = kube.fetch_pod(kube.Job(name="rlrep-walker", namespace="default", out=tmp_path, cluster=config))
  assert set(pod) == {"apiVersion", "kind", "metadata", "spec"} and (pod["apiVersion"], pod["kind"]) == ("v1", "Pod")
  template = {"metadata": pod["metadata"], "spec": pod["spec"]}
  assert [problem for kubernetes in KUBERNETES
          for problem in problems(template, _kind(kubernetes, "io.k8s.api.core.v1.PodTemplateSpec"), kubernetes)] == []
  head = _written(tmp_path, replicas="cpu:1", cluster=config)[1]["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]
  job_volume = head["spec"]["volumes"][0]
  [kind] = set(job_volume) - {"name"}  # persistentVolumeClaim or csi
  assert pod["spec"]["volumes"] == [{**job_volume, kind: {**job_volume[kind], "readOnly": True}}]  # read-only
  assert pod["spec"]["containers"][0]["volumeMounts"] == [{"name": "runs", "mountPath": "/rlrep-runs",
                                                            "readOnly": True}]
  assert pod["metadata"].get("annotations") == head["metadata"].get("annotations")
  assert pod["spec"].get("serviceAccountName") == head["spec"].get("serviceAccountName")


def test_the_checks_name_misspelled_fields_wrong_types_and_missing_fields(tmp_path):
  config_map, ray_job, policy = _written(tmp_path, replicas="tpu")
  ray_job["metadata"]["label"] = ray_job["metadata"].pop("labels")
  group = ray_job["spec"]["rayClusterSpec"]["workerGroupSpecs"][1]
  group["replica"] = group.pop("replicas")
  group["numOfHosts"] = "1"
  group["template"]["spec"]["nodeSelectors"] = group["template"]["spec"].pop("nodeSelector")
  del ray_job["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]["name"]
  policy["spec"]["ingress"][1]["ports"][0]["port"] = [8265]
  config_map["data"]["experiment.json"] = 1
  found = all_problems([config_map, ray_job, policy])
  for kuberay in KUBERAY:
    label = f"KubeRay {kuberay} RayJob: $"
    assert f"{label}.metadata.label: not declared" in found
    assert f"{label}.spec.rayClusterSpec.workerGroupSpecs[1].replica: not declared" in found
    assert f"{label}.spec.rayClusterSpec.workerGroupSpecs[1].numOfHosts: '1' is not of type 'integer'" in found
    assert f"{label}.spec.rayClusterSpec.workerGroupSpecs[1].template.spec.nodeSelectors: not declared" in found
    assert f"{label}.spec.rayClusterSpec.workerGroupSpecs[0].template.spec.containers[0]: 'name' is a required " \
        "property" in found
  for kubernetes in KUBERNETES:
    assert f"Kubernetes {kubernetes} tpu-learner pod template: $.spec.nodeSelectors: not declared" in found
    assert f"Kubernetes {kubernetes} cpu pod template: $.spec.containers[0]: 'name' is a required property" in found
    assert f"Kubernetes {kubernetes} ConfigMap: $.data['experiment.json']: 1 is not of type 'string'" in found
    assert f"Kubernetes {kubernetes} NetworkPolicy: $.spec.ingress[1].ports[0].port: [8265] is not of type 'string'" \
        in found
  assert len(found) == 5 * len(KUBERAY) + 4 * len(KUBERNETES)
