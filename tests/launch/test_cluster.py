"""Cluster manifests: rendered from the experiment, validated offline, written, and submitted only with kubectl."""

import json
import pathlib

import pytest
import yaml

from launch import cli, cluster
from agents.d4pg import D4PGConfig
from launch.cluster_config import ClusterConfig
from launch.experiment import Experiment, RunFailed
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
  manifests = cluster.render(Experiment(out="runs/Walker_Pixels", replicas="tpu", actors=10, cluster=ClusterConfig(
      tpu_accelerator="tpu-v5-lite-podslice", tpu_topology="2x4")))
  cluster.validate(manifests)
  tpu = _groups(manifests)["tpu-learner"]
  pod = tpu["template"]["spec"]
  assert pod["nodeSelector"] == {"cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
                                 "cloud.google.com/gke-tpu-topology": "2x4"}
  resources = pod["containers"][0]["resources"]
  assert resources["limits"]["google.com/tpu"] == resources["requests"]["google.com/tpu"] == "8"
  assert tpu["numOfHosts"] == 1 and tpu["rayStartParams"]["num-cpus"] == "1"  # only the learner fits there
  cpu = _groups(manifests)["cpu"]
  assert cpu["replicas"] * int(cpu["rayStartParams"]["num-cpus"]) >= 12  # 10 actors, replay, evaluator
  assert "google.com/tpu" not in cpu["template"]["spec"]["containers"][0]["resources"]["limits"]


def test_the_head_runs_the_driver_on_the_experiment_in_the_config_map():
  manifests = cluster.render(Experiment(out="runs/walker", replicas="gpu:2", agent_config=Experiment().agent_config))
  kinds = _by_kind(manifests)
  saved = json.loads(kinds["ConfigMap"]["data"]["experiment.json"])
  assert saved["out"] == "/rlrep-runs/rlrep-walker" and saved["replicas"] == "gpu:2" and saved["mode"] == "cluster"
  job = kinds["RayJob"]
  assert job["spec"]["entrypoint"] == "python -m launch.cluster /etc/rlrep/experiment.json"
  assert job["spec"]["rayClusterSpec"]["headGroupSpec"]["rayStartParams"]["num-cpus"] == "0"
  gpu = _groups(manifests)["gpu-learner"]["template"]["spec"]
  assert gpu["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "2"
  assert gpu["nodeSelector"] == {"cloud.google.com/gke-accelerator": "nvidia-l4"}


def test_every_pod_renders_headless_and_with_two_malloc_arenas():
  manifests = cluster.render(Experiment(out="runs/walker", replicas="tpu", actors=4))
  for template in _templates(manifests):
    environment = {e["name"]: e["value"] for e in template["spec"]["containers"][0]["env"]}
    assert environment["MUJOCO_GL"] == "egl" and environment["MALLOC_ARENA_MAX"] == "2"


def test_the_network_policy_admits_only_the_jobs_own_pods():
  manifests = cluster.render(Experiment(out="runs/walker", replicas="cpu:8"))
  policy = _by_kind(manifests)["NetworkPolicy"]["spec"]
  label = {cluster.JOB_LABEL: "rlrep-walker"}
  assert policy["podSelector"]["matchLabels"] == label and policy["policyTypes"] == ["Ingress"]
  own_pods, submitter, operator, konnectivity = policy["ingress"]
  assert own_pods == {"from": [{"podSelector": {"matchLabels": label}}]}
  for rule in (submitter, operator, konnectivity):  # the others reach the job port only
    assert rule["ports"] == [{"protocol": "TCP", "port": cluster.RAY_JOB_PORT}]
  assert submitter["from"] == [{"podSelector": {"matchLabels": {"batch.kubernetes.io/job-name": "rlrep-walker"}}}]
  # The KubeRay operator polls the job from its own pod, in whatever namespace it was installed in.
  assert operator["from"] == [{"namespaceSelector": {},
                               "podSelector": {"matchLabels": {"app.kubernetes.io/component": "kuberay-operator"}}}]
  for template in _templates(manifests):
    assert template["metadata"]["labels"] == label  # every pod is covered by the policy
  assert set(_groups(manifests)) == {"cpu", "cpu-learner"}


@pytest.mark.parametrize("settings, message", [  # bad TPU slices are refused sooner: test_cluster_config.py
    ({"replicas": "auto"}, "name the learner's devices"),
    ({"replicas": "tpu", "frames": 10_000_000, "agent_config": D4PGConfig(max_replay_size=2_000_000)},
     "more than 80% of a CPU worker pod's 17.2 GB of memory: lower --max-replay-size to at most 619,317"),
])
def test_unrenderable_settings_are_refused(settings, message):
  with pytest.raises(ValueError, match=message):
    cluster.render(Experiment(out="runs/x", **settings))


def test_validation_catches_what_the_cluster_would_reject():
  manifests = cluster.render(Experiment(out="runs/x", replicas="tpu", cluster=ClusterConfig(volume_bucket="runs-b")))
  tpu_pod = _groups(manifests)["tpu-learner"]["template"]["spec"]
  tpu_pod["containers"][0]["resources"]["requests"]["google.com/tpu"] = "2"
  del tpu_pod["nodeSelector"]
  del _templates(manifests)[0]["metadata"]["annotations"]  # the head's: no sidecar, so nothing would mount it
  del _groups(manifests)["cpu"]["template"]["spec"]["serviceAccountName"]
  manifests[0]["metadata"]["name"] = "Bad_Name"
  with pytest.raises(ValueError) as error:
    cluster.validate(manifests)
  for problem in ("limits and requests must be equal", "node selectors", "not a valid Kubernetes name",
                  "head: a GCS FUSE volume needs the gke-gcsfuse/volumes", "cpu: a GCS FUSE volume needs"):
    assert problem in str(error.value)


def test_every_pod_mounts_the_claim_by_default_and_the_bucket_through_gcs_fuse_when_given():
  for template in _templates(cluster.render(Experiment(out="runs/x", replicas="tpu"))):
    runs = template["spec"]["volumes"][0]
    assert runs == {"name": "runs", "persistentVolumeClaim": {"claimName": "rlrep-runs"}}
    assert "annotations" not in template["metadata"] and "serviceAccountName" not in template["spec"]
  config = ClusterConfig(volume_bucket="team-runs", service_account="rlrep-writer")
  templates = _templates(cluster.render(Experiment(out="runs/x", replicas="gpu:1", cluster=config)))
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


def test_dry_run_writes_yaml_manifests(tmp_path, capsys):
  out = tmp_path / "walker"
  assert cli.main(["train", "--mode", "cluster", "--replicas", "tpu", "--dry-run", "--out", str(out)]) == 0
  written = sorted((out / "manifests").glob("*.yaml"))
  assert [p.name for p in written] == ["00-configmap.yaml", "01-rayjob.yaml", "02-networkpolicy.yaml"]
  documents = [yaml.safe_load(p.read_text()) for p in written]
  cluster.validate(documents)
  assert '"submitted": false' in capsys.readouterr().out


def test_without_kubectl_the_error_says_what_is_missing(tmp_path, monkeypatch, capsys):
  monkeypatch.setenv("PATH", str(tmp_path))  # no kubectl anywhere
  out = tmp_path / "walker"
  assert cli.main(["train", "--mode", "cluster", "--replicas", "tpu", "--out", str(out)]) == 2
  error = capsys.readouterr().err
  assert "needs kubectl" in error and f"kubectl apply -f {out}/manifests" in error
  assert (out / "manifests" / "01-rayjob.yaml").exists()


def test_a_kubectl_without_a_cluster_is_reported(tmp_path, monkeypatch, capsys):
  fake = tmp_path / "bin" / "kubectl"  # a real executable standing in for kubectl with no cluster configured
  fake.parent.mkdir()
  fake.write_text("#!/bin/sh\necho 'The connection to the server localhost:8080 was refused' >&2\nexit 1\n")
  fake.chmod(0o755)
  monkeypatch.setenv("PATH", str(fake.parent))
  assert cli.main(["train", "--mode", "cluster", "--replicas", "tpu", "--out", str(tmp_path / "w")]) == 2
  error = capsys.readouterr().err
  assert "connection to the server" in error and "get-credentials" in error  # and nothing was applied


def test_a_cpu_learner_gets_a_pod_with_the_cores_it_asks_for():
  groups = _groups(cluster.render(Experiment(out="runs/x", replicas="cpu:8", actors=2)))
  learner = groups["cpu-learner"]
  assert learner["rayStartParams"]["num-cpus"] == "8"
  assert learner["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "8"
  assert groups["cpu"]["replicas"] == 1  # replay, evaluator and 2 actors: 4 CPUs


def test_custom_resources_keep_every_role_on_its_own_kind_of_pod():
  groups = _groups(cluster.render(Experiment(out="runs/x", replicas="tpu")))
  assert groups["tpu-learner"]["rayStartParams"]["resources"] == '"{\\"%s\\": 1}"' % LEARNER_HOST_RESOURCE
  assert groups["cpu"]["rayStartParams"]["resources"] == '"{\\"%s\\": 1000}"' % WORKER_RESOURCE


def test_job_names_fit_kuberays_limit_and_finished_slices_are_released_soon():
  manifests = cluster.render(Experiment(out="runs/" + "a-very-long-experiment-name-" * 3, replicas="tpu"))
  job = _by_kind(manifests)["RayJob"]
  assert len(job["metadata"]["name"]) <= 47 and not job["metadata"]["name"].endswith("-")
  assert job["spec"]["ttlSecondsAfterFinished"] <= 300


def test_a_dry_run_into_another_experiments_directory_is_refused(tmp_path, capsys):
  out = tmp_path / "walker"
  assert cli.main(["train", "--mode", "cluster", "--replicas", "tpu", "--dry-run", "--out", str(out)]) == 0
  assert cli.main(["train", "--mode", "cluster", "--replicas", "tpu", "--dry-run", "--out", str(out)]) == 2
  assert "already holds files" in capsys.readouterr().err
  assert cli.main(["train", "--mode", "cluster", "--replicas", "tpu", "--dry-run", "--overwrite", "--out", str(out)]) == 0


def test_a_driver_refuses_a_volume_directory_holding_another_experiment(tmp_path):
  on_volume = tmp_path / "rlrep-walker"
  on_volume.mkdir()
  (on_volume / "experiment.json").write_text(json.dumps(Experiment(out=str(on_volume), task="cheetah-run").to_json()))
  submitted = tmp_path / "config-map"
  submitted.mkdir()
  (submitted / "experiment.json").write_text(json.dumps(Experiment(out=str(on_volume), task="walker-walk").to_json()))
  with pytest.raises(RunFailed, match="holds another experiment"):
    cluster.run_in_cluster(str(submitted / "experiment.json"))


def test_in_a_ray_cluster_the_learner_gets_the_tpu_pod_even_when_that_pod_joins_first():
  """Ray's own placement, on a simulated cluster shaped like the manifests: a head with no CPUs, then the
  TPU pod (1 Ray CPU), then a CPU worker pod. Without the custom resources, replay took the TPU pod's CPU."""
  import ray
  from ray.cluster_utils import Cluster

  from launch import local
  from launch.program import make_program

  simulated = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
  try:
    tpu_pod = simulated.add_node(num_cpus=1, resources={"TPU": 4, LEARNER_HOST_RESOURCE: 1})
    cpu_pod = simulated.add_node(num_cpus=4, resources={WORKER_RESOURCE: 1000})
    ray.init(address=simulated.address)

    @ray.remote
    class Where:
      def node(self) -> str:
        return ray.get_runtime_context().get_node_id()

    program = make_program(Experiment(replicas="tpu", actors=1, cluster=ClusterConfig(tpu_topology="2x2")))
    handles = {role.name: Where.options(**local.ray_options(role, placement=True)).remote() for role in program}
    placed = {name: ray.get(handle.node.remote(), timeout=120) for name, handle in handles.items()}
  finally:
    ray.shutdown()
    simulated.shutdown()
  assert placed["learner"] == tpu_pod.node_id
  assert {placed[name] for name in ("replay", "evaluator", "actor-0")} == {cpu_pod.node_id}


def test_the_image_has_wget_for_older_kuberay_health_probes_and_a_tf_2_15_tpu_target():
  dockerfile = (pathlib.Path(__file__).parents[2] / "docker" / "Dockerfile").read_text()
  assert " wget " in dockerfile.split("apt-get install", 1)[1].split("\n")[0] + " "
  tpu = dockerfile.split("AS tpu", 1)[1].split("FROM", 1)[0]
  assert "tf-2.15.0/tensorflow-2.15.0-cp310-cp310-manylinux" in tpu and "libtpu/1.9.0/libtpu.so" in tpu
  assert "NEXT_PLUGGABLE_DEVICE_USE_C_API=true" in tpu
