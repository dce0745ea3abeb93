"""Cluster manifests: rendered from the experiment, validated offline, written, and submitted only with kubectl;
and the in-cluster driver's handling of the volume and of roles Ray cannot place."""

import json
import pathlib
import shlex

import pytest
import yaml

from launch import cli, cluster
from agents.d4pg import D4PGConfig
from launch.cluster_config import ClusterConfig
from launch.experiment import Experiment, RunFailed
from launch.program import CPU_WORKER_CPUS, LEARNER_HOST_RESOURCE, WORKER_RESOURCE, make_program


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
  assert cpu["replicas"] * int(cpu["rayStartParams"]["num-cpus"]) >= 15  # 10 actors, evaluator, a pod for replay
  assert "google.com/tpu" not in cpu["template"]["spec"]["containers"][0]["resources"]["limits"]


def test_the_head_runs_the_driver_on_the_experiment_in_the_config_map():
  manifests = cluster.render(Experiment(out="runs/walker", replicas="gpu:2", agent_config=Experiment().agent_config))
  kinds = _by_kind(manifests)
  saved = json.loads(kinds["ConfigMap"]["data"]["experiment.json"])
  assert saved["out"] == "/rlrep-runs/rlrep-walker" and saved["replicas"] == "gpu:2" and saved["mode"] == "cluster"
  job = kinds["RayJob"]
  assert job["spec"]["entrypoint"].startswith("python -m launch.cluster /etc/rlrep/experiment.json --submission ")
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
     "more than 80% of the replay's CPU worker pod's 17.2 GB of memory: lower --max-replay-size to at most 619,317"),
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


def test_dry_run_writes_yaml_manifests_and_calls_no_kubectl(tmp_path, capsys, fake_kubectl):
  out = tmp_path / "walker"
  assert cli.main(["train", "--mode", "cluster", "--replicas", "tpu", "--dry-run", "--out", str(out)]) == 0
  written = sorted((out / "manifests").glob("*.yaml"))
  assert [p.name for p in written] == ["00-configmap.yaml", "01-rayjob.yaml", "02-networkpolicy.yaml"]
  documents = [yaml.safe_load(p.read_text()) for p in written]
  cluster.validate(documents)
  assert '"submitted": false' in capsys.readouterr().out
  assert fake_kubectl.calls() == []  # nothing applied (any call would also be unexpected)


def test_without_kubectl_the_error_says_what_is_missing(tmp_path, monkeypatch, capsys):
  monkeypatch.setenv("PATH", str(tmp_path))  # no kubectl anywhere
  out = tmp_path / "walker"
  assert cli.main(["train", "--mode", "cluster", "--replicas", "tpu", "--out", str(out)]) == 2
  error = capsys.readouterr().err
  assert "needs kubectl" in error and f"kubectl apply -f {out}/manifests" in error
  assert (out / "manifests" / "01-rayjob.yaml").exists()


def test_a_kubectl_without_a_cluster_is_reported(tmp_path, capsys, fake_kubectl):
  fake_kubectl.scenario(["config current-context", [{"err": "The connection to the server localhost:8080 was "
                                                            "refused\n", "code": 1}]])
  assert cli.main(["train", "--mode", "cluster", "--replicas", "tpu", "--out", str(tmp_path / "w")]) == 2
  error = capsys.readouterr().err
  assert "connection to the server" in error and "get-credentials" in error
  assert fake_kubectl.argvs() == ["config current-context"]  # nothing applied


def test_a_cpu_learner_gets_a_pod_with_the_cores_it_asks_for():
  groups = _groups(cluster.render(Experiment(out="runs/x", replicas="cpu:8", actors=2)))
  learner = groups["cpu-learner"]
  assert learner["rayStartParams"]["num-cpus"] == "8"
  assert learner["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "8"
  assert groups["cpu"]["replicas"] == 2  # a pod for replay; evaluator and 2 actors share the other


def test_custom_resources_keep_every_role_on_its_own_kind_of_pod():
  groups = _groups(cluster.render(Experiment(out="runs/x", replicas="tpu")))
  assert groups["tpu-learner"]["rayStartParams"]["resources"] == """'{"TPU":4,"%s":1}'""" % LEARNER_HOST_RESOURCE
  assert groups["cpu"]["rayStartParams"]["resources"] == """'{"%s":1000}'""" % WORKER_RESOURCE


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
  for existing in ("refuse", "resume"):
    with pytest.raises(RunFailed, match="holds another experiment"):
      cluster.run_in_cluster(str(submitted / "experiment.json"), "20250102T030405Z-abcdef", existing)
  assert json.loads((on_volume / "experiment.json").read_text())["task"] == "cheetah-run"  # left as it was


def _run_on_volume(tmp_path: pathlib.Path, submission: str) -> Experiment:
  """The run's directory on a volume as the driver of `submission` left it: its experiment and a checkpoint."""
  experiment = Experiment(out=str(tmp_path / "rlrep-walker"), mode="cluster")
  assert cluster.prepare_volume_dir(experiment, submission, "refuse") is False  # nothing there yet: a new run
  (experiment.out_dir / "checkpoints").mkdir()
  return experiment


def test_overwrite_replaces_an_earlier_submissions_run_on_the_volume_but_not_its_own_on_a_retry(tmp_path):
  experiment = _run_on_volume(tmp_path, "first")
  assert cluster.prepare_volume_dir(experiment, "second", "overwrite") is False  # a new run
  assert not (experiment.out_dir / "checkpoints").exists()
  assert (experiment.out_dir / "submission").read_text() == "second\n"
  assert (experiment.out_dir / "experiment.json").exists()
  (experiment.out_dir / "checkpoints").mkdir()
  assert cluster.prepare_volume_dir(experiment, "second", "overwrite") is True  # KubeRay retries the driver
  assert (experiment.out_dir / "checkpoints").exists()


def test_without_overwrite_an_earlier_run_is_refused_unless_resumed(tmp_path):
  experiment = _run_on_volume(tmp_path, "first")
  with pytest.raises(RunFailed, match=r"holds an earlier submission's run of this experiment. Continue it with "
                                      r"`rlrep train --resume OUT`.*resubmit with --overwrite"):
    cluster.prepare_volume_dir(experiment, "second", "refuse")
  assert (experiment.out_dir / "checkpoints").exists() and (experiment.out_dir / "submission").read_text() == "first\n"
  assert cluster.prepare_volume_dir(experiment, "third", "resume") is True
  assert (experiment.out_dir / "checkpoints").exists() and (experiment.out_dir / "submission").read_text() == "third\n"
  assert cluster.prepare_volume_dir(experiment, "third", "refuse") is True  # then its retries continue too


def _driver_arguments(out: pathlib.Path):
  job = yaml.safe_load((out / "manifests" / "01-rayjob.yaml").read_text())
  words = shlex.split(job["spec"]["entrypoint"])
  assert words[:3] == ["python", "-m", "launch.cluster"]
  return cluster.driver_parser().parse_args(words[3:])


def test_the_driver_is_told_what_overwrite_and_resume_ask_for_with_a_new_submission_id_each_time(tmp_path, capsys):
  out = tmp_path / "walker"
  train = ["train", "--mode", "cluster", "--replicas", "tpu", "--dry-run"]
  assert cli.main([*train, "--out", str(out)]) == 0
  first = _driver_arguments(out)
  assert first.existing == "refuse" and first.experiment_file == "/etc/rlrep/experiment.json"
  assert "a run an earlier submission left there is refused" in capsys.readouterr().out
  assert cli.main([*train, "--out", str(out), "--overwrite"]) == 0
  second = _driver_arguments(out)
  assert second.existing == "overwrite" and second.submission != first.submission
  (out / "kept").write_text("")
  assert cli.main([*train, "--resume", str(out)]) == 0
  assert _driver_arguments(out).existing == "resume" and (out / "kept").exists()  # --out is kept, not replaced


def test_placement_fails_naming_the_pods_that_never_joined_the_ray_cluster():
  program = make_program(Experiment(mode="cluster", replicas="tpu", actors=3,
                                    cluster=ClusterConfig(tpu_topology="2x2")))
  assert cluster.needed_resources(program) == {"CPU": 9, "TPU": 4, LEARNER_HOST_RESOURCE: 1, WORKER_RESOURCE: 5}
  cpu_pods_only = {"CPU": 8.0, WORKER_RESOURCE: 2000.0, "memory": 1e10}
  with pytest.raises(RunFailed) as error:
    cluster.wait_for_placement(program, lambda: cpu_pods_only, timeout_s=0.05, poll_s=0.01)
  message = str(error.value)
  assert message.startswith("after 0 s the Ray cluster still lacks what the roles need: CPU 8 of 9 (from the CPU "
                            "worker pods and the learner's pod); TPU 0 of 4 (from the learner's TPU pod); "
                            f"{LEARNER_HOST_RESOURCE} 0 of 1 (from the learner's pod).")
  assert "rlrep cluster status OUT" in message and "--placement-timeout-s" in message
  cluster.wait_for_placement(program, lambda: {**cpu_pods_only, "CPU": 9.0, "TPU": 4.0, LEARNER_HOST_RESOURCE: 1.0},
                             timeout_s=0.05)


def test_a_rayjob_attempt_has_a_deadline_from_the_cluster_settings():
  assert _by_kind(cluster.render(Experiment(out="runs/x", replicas="tpu")))["RayJob"]["spec"][
      "activeDeadlineSeconds"] == 48 * 3600
  config = ClusterConfig(job_deadline_hours=2.5)
  assert _by_kind(cluster.render(Experiment(out="runs/x", replicas="gpu:1", cluster=config)))["RayJob"]["spec"][
      "activeDeadlineSeconds"] == 9000


def test_in_a_ray_cluster_the_learner_gets_the_tpu_pod_and_replay_a_cpu_pod_of_its_own():
  """Ray's own placement, on a simulated cluster shaped like the manifests: a head with no CPUs, then the
  TPU pod (1 Ray CPU), then the CPU worker pods. Without the custom resources, replay took the TPU pod's CPU;
  without replay taking a whole CPU pod, other roles shared the memory its table fills. Until the TPU pod has
  joined, the driver's placement wait fails."""
  import ray
  from ray.cluster_utils import Cluster

  from launch import local

  program = make_program(Experiment(mode="cluster", replicas="tpu", actors=3,
                                    cluster=ClusterConfig(tpu_topology="2x2")))
  simulated = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
  try:
    cpu_pods = [simulated.add_node(num_cpus=CPU_WORKER_CPUS, resources={WORKER_RESOURCE: 1000}) for _ in range(2)]
    ray.init(address=simulated.address)
    with pytest.raises(RunFailed, match="TPU 0 of 4"):
      cluster.wait_for_placement(program, ray.cluster_resources, timeout_s=1, poll_s=0.2)
    tpu_pod = simulated.add_node(num_cpus=1, resources={"TPU": 4, LEARNER_HOST_RESOURCE: 1})
    cluster.wait_for_placement(program, ray.cluster_resources, timeout_s=60, poll_s=0.2)

    @ray.remote
    class Where:
      def node(self) -> str:
        return ray.get_runtime_context().get_node_id()

    handles = {}  # held, as the driver holds them: a dropped handle's actor ends and frees its pod

    def place(role):
      handles[role.name] = Where.options(**local.ray_options(role, placement=True)).remote()
      return handles[role.name].node.remote()

    placed = {"replay": ray.get(place(program[1]), timeout=120)}  # first, as the driver places it
    placed.update(zip([role.name for role in program[2:]], ray.get([place(role) for role in program[2:]], timeout=120)))
  finally:
    ray.shutdown()
    simulated.shutdown()
  assert placed["learner"] == tpu_pod.node_id
  replay_pod = placed["replay"]
  others = {placed[name] for name in ("evaluator", "actor-0", "actor-1", "actor-2")}
  assert replay_pod in {pod.node_id for pod in cpu_pods} and others == {pod.node_id for pod in cpu_pods} - {replay_pod}


def test_the_image_has_wget_for_older_kuberay_health_probes_and_a_tf_2_15_tpu_target():
  dockerfile = (pathlib.Path(__file__).parents[2] / "docker" / "Dockerfile").read_text()
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
  for group, template in _named_templates(cluster.render(Experiment(out="runs/x", replicas=replicas))).items():
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
  """g2-standard-8 leaves pods about 7.2 CPUs and 27 GiB (launch/cluster.py says how); a bucket adds the GCS FUSE
  sidecar GKE injects (250m CPU, 256Mi memory requested by default)."""
  group = _groups(cluster.render(Experiment(out="runs/x", replicas="gpu:1", cluster=config)))["gpu-learner"]
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
  spec = _by_kind(cluster.render(experiment))["RayJob"]["spec"]["rayClusterSpec"]
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
  groups = _groups(cluster.render(Experiment(mode="cluster", out="runs/x", replicas="gpu:2", learner_hosts=3)))
  learner = groups["gpu-learner"]
  assert learner["replicas"] == learner["minReplicas"] == learner["maxReplicas"] == 3
  assert kuberay_resources(learner["rayStartParams"]) == {"rlrep_learner_host": 1.0}  # one learner host per pod
  assert learner["rayStartParams"]["num-gpus"] == "2"
