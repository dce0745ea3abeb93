"""Cluster manifests: rendered from the experiment, validated offline, written, and submitted only with kubectl."""

import json

import pytest
import yaml

from launch import cli, cluster
from launch.experiment import Experiment


def _by_kind(manifests):
  return {m["kind"]: m for m in manifests}


def _groups(manifests):
  return {g["groupName"]: g for g in _by_kind(manifests)["RayJob"]["spec"]["rayClusterSpec"]["workerGroupSpecs"]}


def test_a_tpu_learner_gets_its_own_group_with_selectors_and_chip_limits():
  manifests = cluster.render(Experiment(out="runs/Walker_Pixels", replicas="tpu", actors=10,
                                        tpu_accelerator="tpu-v5-lite-podslice", tpu_topology="2x4"))
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


def test_the_network_policy_admits_only_the_jobs_own_pods():
  manifests = cluster.render(Experiment(out="runs/walker", replicas="cpu:8"))
  policy = _by_kind(manifests)["NetworkPolicy"]["spec"]
  label = {cluster.JOB_LABEL: "rlrep-walker"}
  assert policy["podSelector"]["matchLabels"] == label and policy["policyTypes"] == ["Ingress"]
  own_pods, submitter = policy["ingress"]
  assert own_pods == {"from": [{"podSelector": {"matchLabels": label}}]}
  assert submitter["ports"] == [{"protocol": "TCP", "port": cluster.RAY_JOB_PORT}]
  for template in [_by_kind(manifests)["RayJob"]["spec"]["rayClusterSpec"]["headGroupSpec"]["template"],
                   *(g["template"] for g in _groups(manifests).values())]:
    assert template["metadata"]["labels"] == label  # every pod is covered by the policy
  assert set(_groups(manifests)) == {"cpu"}  # a CPU learner needs no accelerator group


@pytest.mark.parametrize("settings, message", [
    ({"replicas": "auto"}, "name the learner's devices"),
    ({"replicas": "tpu", "tpu_accelerator": "tpu-v4-podslice", "tpu_topology": "2x2x2"}, "spans 2 hosts"),
])
def test_unrenderable_settings_are_refused(settings, message):
  with pytest.raises(ValueError, match=message):
    cluster.render(Experiment(out="runs/x", **settings))


def test_validation_catches_what_the_cluster_would_reject():
  manifests = cluster.render(Experiment(out="runs/x", replicas="tpu"))
  tpu_pod = _groups(manifests)["tpu-learner"]["template"]["spec"]
  tpu_pod["containers"][0]["resources"]["requests"]["google.com/tpu"] = "2"
  del tpu_pod["nodeSelector"]
  manifests[0]["metadata"]["name"] = "Bad_Name"
  with pytest.raises(ValueError) as error:
    cluster.validate(manifests)
  for problem in ("limits and requests must be equal", "node selectors", "not a valid Kubernetes name"):
    assert problem in str(error.value)


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
  assert "kubectl apply failed" in error and "connection to the server" in error
