"""Cluster manifests: rendered from the experiment and validated offline (against the real schemas:
test_manifest_schemas.py)."""

import json
import pathlib
import shlex

import pytest

from agents.d4pg import D4PGConfig
from launch.cluster import manifests as manifests_lib
from launch.cluster.config import ClusterConfig
from launch.experiment import Experiment
from launch.program import LEARNER_HOST_RESOURCE, WORKER_RESOURCE


def _by_kind(manifests):
  return {m["kind"]: m for m in manifests}


def _groups(manifests):
  return {g["groupName"]: g for g in _by_kind(manifests)["RayJob"]["spec"]["rayClusterSpec"]["workerGroupSpecs"]}


def _templates(manifests):
  """Every pod template of the RayJob: the head's and each worker group's."""
  return [_by_kind(manifests)["RayJob"]["spec"]["rayClusterSpec"]["headGroupSpec"]["template"],
          *(group["template"] for group in _groups(manifests).values())]


def test_a_tpu_learner_gets_its_own_group_with_selectors_and_chip_limits():
  manifests = manifests_lib.render(Experiment(out="runs/Walker_Pixels", replicas="tpu", actors=10,
                                              cluster=ClusterConfig(tpu_accelerator="tpu-v5-lite-podslice",
                                                                    tpu_topology="2x4")))
  manifests_lib.validate(manifests)
  tpu = _groups(manifests)["tpu-learner"]
  pod = tpu["template"]["spec"]
  assert pod["nodeSelector"] == {"cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
                                 "cloud.google.com/gke-tpu-topology": "2x4"}
  resources = pod["containers"][0]["resources"]
  assert resources["limits"]["google.com/tpu"] == resources["requests"]["google.com/tpu"] == "8"
  assert tpu["numOfHosts"] == 1 and tpu["rayStartParams"]["num-cpus"] == "1"  # only the learner fits there
  cpu = _groups(manifests)["cpu"]
  assert cpu["replicas"] * int(cpu["rayStartParams"]["num-cpus"]) >= 15  # 10 actors, evaluator, a pod for replay
  assert "google.com/tpu" not in cpu["template"]["spec"]["containers"][0]["resources"]["limits"]


def test_the_head_runs_the_driver_on_the_experiment_in_the_config_map():
  manifests = manifests_lib.render(Experiment(out="runs/walker", replicas="gpu:2",
                                              agent_config=Experiment().agent_config))
  kinds = _by_kind(manifests)
  saved = json.loads(kinds["ConfigMap"]["data"]["experiment.json"])
  assert saved["out"] == "/rlrep-runs/rlrep-walker" and saved["replicas"] == "gpu:2" and saved["mode"] == "cluster"
  job = kinds["RayJob"]
  assert job["spec"]["entrypoint"].startswith(
      "python -m launch.cluster.driver /etc/rlrep/experiment.json --submission ")
  assert job["spec"]["rayClusterSpec"]["headGroupSpec"]["rayStartParams"]["num-cpus"] == "0"
  gpu = _groups(manifests)["gpu-learner"]["template"]["spec"]
  assert gpu["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "2"
  assert gpu["nodeSelector"] == {"cloud.google.com/gke-accelerator": "nvidia-l4"}


def test_every_pod_renders_headless_and_with_two_malloc_arenas():
  manifests = manifests_lib.render(Experiment(out="runs/walker", replicas="tpu", actors=4))
  for template in _templates(manifests):
    environment = {e["name"]: e["value"] for e in template["spec"]["containers"][0]["env"]}
    assert environment["MUJOCO_GL"] == "egl" and environment["MALLOC_ARENA_MAX"] == "2"


def test_the_network_policy_admits_only_the_jobs_own_pods():
  manifests = manifests_lib.render(Experiment(out="runs/walker", replicas="cpu:8"))
  policy = _by_kind(manifests)["NetworkPolicy"]["spec"]
  label = {manifests_lib.JOB_LABEL: "rlrep-walker"}
  assert policy["podSelector"]["matchLabels"] == label and policy["policyTypes"] == ["Ingress"]
  own_pods, submitter, operator, konnectivity = policy["ingress"]
  assert own_pods == {"from": [{"podSelector": {"matchLabels": label}}]}
  for rule in (submitter, operator, konnectivity):  # the others reach the job port only
    assert rule["ports"] == [{"protocol": "TCP", "port": manifests_lib.RAY_JOB_PORT}]
  assert submitter["from"] == [{"podSelector": {"matchLabels": {"batch.kubernetes.io/job-name": "rlrep-walker"}}}]
  # The KubeRay operator polls the job from its own pod, in whatever namespace it was installed in.
  assert operator["from"] == [{"namespaceSelector": {},
                               "podSelector": {"matchLabels": {"app.kubernetes.io/component": "kuberay-operator"}}}]
  for template in _templates(manifests):
    assert template["metadata"]["labels"] == label  # every pod is covered by the policy
  assert set(_groups(manifests)) == {"cpu", "cpu-learner"}


@pytest.mark.parametrize("settings, message", [  # bad TPU slices are refused sooner: test_config.py
    ({"replicas": "auto"}, "name the learner's devices"),
    ({"replicas": "tpu", "frames": 10_000_000, "agent_config": D4PGConfig(max_replay_size=2_000_000)},
     "more than 80% of the 17.2 GB of memory of the replay's CPU worker pod: lower --max-replay-size to at most "
     "619,317"),
])
def test_unrenderable_settings_are_refused(settings, message):
  with pytest.raises(ValueError, match=message):
    manifests_lib.render(Experiment(out="runs/x", **settings))


def test_validation_catches_what_the_cluster_would_reject():
  manifests = manifests_lib.render(Experiment(out="runs/x", replicas="tpu",
                                              cluster=ClusterConfig(volume_bucket="runs-b")))
  tpu_pod = _groups(manifests)["tpu-learner"]["template"]["spec"]
  tpu_pod["containers"][0]["resources"]["requests"]["google.com/tpu"] = "2"
  del tpu_pod["nodeSelector"]
  del _templates(manifests)[0]["metadata"]["annotations"]  # the head's: no sidecar, so nothing would mount it
  del _groups(manifests)["cpu"]["template"]["spec"]["serviceAccountName"]
  manifests[0]["metadata"]["name"] = "Bad_Name"
  with pytest.raises(ValueError) as error:
    manifests_lib.validate(manifests)
  for problem in ("limits and requests must be equal", "node selectors", "not a valid Kubernetes name",
                  "head: a GCS FUSE volume needs the gke-gcsfuse/volumes", "cpu: a GCS FUSE volume needs"):
    assert problem in str(error.value)


def test_every_pod_mounts_the_claim_by_default_and_the_bucket_through_gcs_fuse_when_given():
  for template in _templates(manifests_lib.render(Experiment(out="runs/x", replicas="tpu"))):
    runs = template["spec"]["volumes"][0]
    assert runs == {"name": "runs", "persistentVolumeClaim": {"claimName": "rlrep-runs"}}
    assert "annotations" not in template["metadata"] and "serviceAccountName" not in template["spec"]
  config = ClusterConfig(volume_bucket="team-runs", service_account="rlrep-writer")
  templates = _templates(manifests_lib.render(Experiment(out="runs/x", replicas="gpu:1", cluster=config)))
  assert len(templates) == 3  # head, CPU workers, GPU learner
  for template in templates:
    spec = template["spec"]
    assert spec["volumes"][0] == {"name": "runs", "csi": {
        "driver": "gcsfuse.csi.storage.gke.io",
        "volumeAttributes": {"bucketName": "team-runs", "mountOptions": "implicit-dirs"}}}
    assert not any("persistentVolumeClaim" in volume for volume in spec["volumes"])
    assert spec["containers"][0]["volumeMounts"][0] == {"name": "runs", "mountPath": "/rlrep-runs"}
    assert template["metadata"]["annotations"] == {"gke-gcsfuse/volumes": "true"}
    assert spec["serviceAccountName"] == "rlrep-writer"


def test_a_cpu_learner_gets_a_pod_with_the_cores_it_asks_for():
  groups = _groups(manifests_lib.render(Experiment(out="runs/x", replicas="cpu:8", actors=2)))
  learner = groups["cpu-learner"]
  assert learner["rayStartParams"]["num-cpus"] == "8"
  assert learner["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "8"
  assert groups["cpu"]["replicas"] == 2  # a pod for replay; evaluator and 2 actors share the other


def test_custom_resources_keep_every_role_on_its_own_kind_of_pod():
  groups = _groups(manifests_lib.render(Experiment(out="runs/x", replicas="tpu")))
  assert groups["tpu-learner"]["rayStartParams"]["resources"] == """'{"TPU":4,"%s":1}'""" % LEARNER_HOST_RESOURCE
  assert groups["cpu"]["rayStartParams"]["resources"] == """'{"%s":1000}'""" % WORKER_RESOURCE


def test_job_names_fit_kuberays_limit_and_finished_slices_are_released_soon():
  manifests = manifests_lib.render(Experiment(out="runs/" + "a-very-long-experiment-name-" * 3, replicas="tpu"))
  job = _by_kind(manifests)["RayJob"]
  assert len(job["metadata"]["name"]) <= 47 and not job["metadata"]["name"].endswith("-")
  assert job["spec"]["ttlSecondsAfterFinished"] <= 300


def test_a_rayjob_attempt_has_a_deadline_from_the_cluster_settings():
  assert _by_kind(manifests_lib.render(Experiment(out="runs/x", replicas="tpu")))["RayJob"]["spec"][
      "activeDeadlineSeconds"] == 48 * 3600
  config = ClusterConfig(job_deadline_hours=2.5)
  assert _by_kind(manifests_lib.render(Experiment(out="runs/x", replicas="gpu:1", cluster=config)))["RayJob"]["spec"][
      "activeDeadlineSeconds"] == 9000


def test_the_image_has_wget_for_older_kuberay_health_probes_and_a_tf_2_15_tpu_target():
  dockerfile = (pathlib.Path(__file__).parents[3] / "docker" / "Dockerfile").read_text()
  assert " wget " in dockerfile.split("apt-get install", 1)[1].split("\n")[0] + " "
  tpu = dockerfile.split("AS tpu", 1)[1].split("FROM", 1)[0]
  assert "tf-2.15.0/tensorflow-2.15.0-cp310-cp310-manylinux" in tpu and "libtpu/1.9.0/libtpu.so" in tpu


def _named_templates(manifests):
  spec = _by_kind(manifests)["RayJob"]["spec"]["rayClusterSpec"]
  return {"head": spec["headGroupSpec"]["template"],
          **{group["groupName"]: group["template"] for group in spec["workerGroupSpecs"]}}


@pytest.mark.parametrize("replicas", ["tpu", "gpu:1", "cpu:2"])
def test_only_tpu_learner_pods_load_libtpu(replicas):
  libtpu = {"NEXT_PLUGGABLE_DEVICE_USE_C_API": "true", "TF_PLUGGABLE_DEVICE_LIBRARY_PATH": "/lib/libtpu.so"}
  for group, template in _named_templates(manifests_lib.render(Experiment(out="runs/x", replicas=replicas))).items():
    environment = {e["name"]: e["value"] for e in template["spec"]["containers"][0]["env"]}
    if group == "tpu-learner":
      assert environment.items() >= libtpu.items()
    else:
      assert not set(libtpu) & set(environment), group


def _quantity(text: str) -> float:
  """A Kubernetes CPU or memory quantity: CPUs, or GiB for Gi/Mi amounts."""
  for suffix, scale in (("Gi", 1), ("Mi", 1 / 1024), ("m", 1e-3)):
    if text.endswith(suffix):
      return float(text[:-len(suffix)]) * scale
  return float(text)


@pytest.mark.parametrize("config", [ClusterConfig(), ClusterConfig(volume_bucket="team-runs")], ids=["claim", "bucket"])
def test_the_gpu_learner_pod_fits_the_smallest_l4_machine(config):
  """g2-standard-8 leaves pods about 7.2 CPUs and 27 GiB (launch/cluster/manifests.py says how); a bucket adds the
  GCS FUSE sidecar GKE injects (250m CPU, 256Mi memory requested by default)."""
  group = _groups(manifests_lib.render(Experiment(out="runs/x", replicas="gpu:1", cluster=config)))["gpu-learner"]
  requests = group["template"]["spec"]["containers"][0]["resources"]["requests"]
  sidecar = (0.25, 0.25) if config.volume_bucket else (0, 0)
  assert _quantity(requests["cpu"]) + sidecar[0] <= 7.2 and _quantity(requests["memory"]) + sidecar[1] <= 27
  assert requests["nvidia.com/gpu"] == "1" and group["rayStartParams"]["num-gpus"] == "1"


def kuberay_resources(ray_start_params: dict) -> dict[str, float]:
  """A port of KubeRay's getResourcesMap (ray-operator/controllers/ray/common/pod.go, identical at v1.3.0 and
  v1.7.0), which reads the `resources` rayStartParam before adding a pod's GPUs and TPU chips to `ray start`:
  `strings.Trim(s, "'\"` ")` (quote characters and spaces off both ends), then `json.Unmarshal` into a
  map[string]float64. KubeRay only logs its error, and then adds no accelerator resources; here it raises."""
  if "resources" not in ray_start_params:
    return {}
  parsed = json.loads(ray_start_params["resources"].strip("'\"` "), parse_constant=_go_rejects)
  if not isinstance(parsed, dict) or not all(type(value) in (int, float) for value in parsed.values()):
    raise ValueError(f"not a JSON object of numbers: {ray_start_params['resources']!r}")
  return {name: float(value) for name, value in parsed.items()}


def _go_rejects(constant: str):
  raise ValueError(f"Go's encoding/json has no {constant}")


@pytest.mark.parametrize("param, parsed", [  # TestGenerateRayStartCommand in pod_test.go, v1.3.0 and v1.7.0
    ('"{"custom_resource":2}"', {"custom_resource": 2}),
    ("'{\"custom_resource\":2,\"neuron_cores\":3}'", {"custom_resource": 2, "neuron_cores": 3}),
    ("'{\"custom_resource\":2,\"TPU\":4}'", {"custom_resource": 2, "TPU": 4}),
    ("{", None),  # "HeadNode with invalid resources string": left as written, no accelerators added
    ('"{\\"rlrep_learner_host\\": 1}"', None),  # what rlrep rendered before: the backslashes stay in
])
def test_the_port_of_kuberays_resources_parsing_agrees_with_kuberays_own_tests(param, parsed):
  if parsed is None:
    with pytest.raises(ValueError):
      kuberay_resources({"resources": param})
  else:
    assert kuberay_resources({"resources": param}) == parsed


@pytest.mark.parametrize("settings", [{"replicas": "tpu"}, {"replicas": "tpu", "cluster": ClusterConfig(
    tpu_topology="2x4")}, {"replicas": "gpu:2"}, {"replicas": "cpu:4", "actors": 9}], ids=["tpu-2x2", "tpu-2x4",
                                                                                          "gpu-2", "cpu-4"])
def test_kuberay_reads_every_rendered_resources_param_and_accelerators_are_explicit(settings):
  """Every rayStartParam as KubeRay >= 1.3 reads it, and as `ray start` gets it through the shell KubeRay runs it
  in (KubeRay 1.2 passes it on unread); TPU chips and GPUs are set explicitly, whatever KubeRay adds."""
  experiment = Experiment(out="runs/x", **settings)
  spec = _by_kind(manifests_lib.render(experiment))["RayJob"]["spec"]["rayClusterSpec"]
  groups = {"head": spec["headGroupSpec"], **{group["groupName"]: group for group in spec["workerGroupSpecs"]}}
  for name, group in groups.items():
    params = group["rayStartParams"]
    assert all(isinstance(value, str) for value in params.values()), name
    resources = kuberay_resources(params)
    if "resources" in params:
      [flag] = shlex.split(f"--resources={params['resources']}")
      assert json.loads(flag.split("=", 1)[1]) == resources, name
    limits = group["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert resources.get("TPU", 0) == float(limits.get("google.com/tpu", 0)), name
    assert params.get("num-gpus", "0") == limits.get("nvidia.com/gpu", "0"), name
  learner = next(name for name in groups if name.endswith("-learner"))
  assert kuberay_resources(groups[learner]["rayStartParams"])[LEARNER_HOST_RESOURCE] == 1
  assert kuberay_resources(groups["cpu"]["rayStartParams"]) == {WORKER_RESOURCE: 1000}


def test_a_learner_on_several_gpu_hosts_gets_a_gpu_pod_per_host():
  groups = _groups(manifests_lib.render(Experiment(mode="cluster", out="runs/x", replicas="gpu:2", learner_hosts=3)))
  learner = groups["gpu-learner"]
  assert learner["replicas"] == learner["minReplicas"] == learner["maxReplicas"] == 3
  assert kuberay_resources(learner["rayStartParams"]) == {"rlrep_learner_host": 1.0}  # one learner host per pod
  assert learner["rayStartParams"]["num-gpus"] == "2"
