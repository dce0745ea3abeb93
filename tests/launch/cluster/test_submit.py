"""`rlrep train --mode cluster`: the manifests written, and submitted only with kubectl (the submission against a
fake kubectl: test_kube.py)."""

import pathlib
import shlex

import yaml

from launch import cli
from launch.cluster import driver, kube, manifests
from launch.experiment import load_experiment


def test_dry_run_writes_yaml_manifests_and_calls_no_kubectl(tmp_path, capsys, fake_kubectl):
  out = tmp_path / "walker"
  assert cli.main(["train", "--mode", "cluster", "--replicas", "tpu", "--dry-run", "--out", str(out)]) == 0
  written = sorted((out / "manifests").glob("*.yaml"))
  assert [p.name for p in written] == ["00-configmap.yaml", "01-rayjob.yaml", "02-networkpolicy.yaml"]
  documents = [yaml.safe_load(p.read_text()) for p in written]
  manifests.validate(documents)
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


def test_a_dry_run_into_another_experiments_directory_is_refused(tmp_path, capsys):
  out = tmp_path / "walker"
  assert cli.main(["train", "--mode", "cluster", "--replicas", "tpu", "--dry-run", "--out", str(out)]) == 0
  assert cli.main(["train", "--mode", "cluster", "--replicas", "tpu", "--dry-run", "--out", str(out)]) == 2
  assert "already holds files" in capsys.readouterr().err
  assert cli.main(["train", "--mode", "cluster", "--replicas", "tpu", "--dry-run", "--overwrite",
                   "--out", str(out)]) == 0


def _driver_arguments(out: pathlib.Path):
  job = yaml.safe_load((out / "manifests" / "01-rayjob.yaml").read_text())
  words = shlex.split(job["spec"]["entrypoint"])
  assert words[:3] == ["python", "-m", "launch.cluster.driver"]
  return driver.driver_parser().parse_args(words[3:])


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


def test_the_job_submitted_is_the_one_the_follow_up_commands_find_from_out(tmp_path):
  """The submission names its job from the experiment; `rlrep cluster ... OUT` reads it from the written RayJob."""
  out = tmp_path / "Walker_Pixels"
  assert cli.main(["train", "--mode", "cluster", "--replicas", "tpu", "--namespace", "team-a", "--dry-run",
                   "--out", str(out)]) == 0
  job = kube.Job.from_out(out)
  assert (job.name, job.namespace) == ("rlrep-walker-pixels", "team-a")
  assert kube.Job.of(load_experiment(out)) == job
