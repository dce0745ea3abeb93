"""Submitting and following cluster jobs through kubectl, against a fake kubectl (no cluster is reachable here).

The fake (tests/launch/conftest.py) records every call and answers from the test's scenario of rules; a call no
rule expects fails the test. The tests assert the calls made, and that nothing is applied where nothing may be.
"""

import json

import pytest

from launch import cli
from launch.cluster import kube

NOT_FOUND = {"err": 'Error from server (NotFound): rayjobs.ray.io "rlrep-walker" not found\n', "code": 1}
CRD = {"spec": {"versions": [{"name": "v1", "schema": {"openAPIV3Schema": {"properties": {"spec": {"properties": {
    "backoffLimit": {"type": "integer"}, "entrypoint": {"type": "string"}}}}}}}]}}


def _status(**status):
  return {"out": json.dumps({"kind": "RayJob", "status": status})}


def _events(*events):
  return {"out": json.dumps({"items": [{"involvedObject": {"kind": kind, "name": name}, "reason": reason,
                                        "message": message} for kind, name, reason, message in events]})}


LOGS = "logs -f -n default job/rlrep-walker --pod-running-timeout=60s"
HEALTHY = [
    ["config current-context", [{"out": "gke_project_zone_cluster\n"}]],
    ["api-resources", [{"out": "rayclusters.ray.io\nrayjobs.ray.io\nrayservices.ray.io\n"}]],
    ["get crd rayjobs.ray.io", [{"out": json.dumps(CRD)}]],
    ["get pvc", [{"out": '["ReadWriteMany"]'}]],
    ["get events", [_events()]],
    ["apply -f", [{"out": "configmap/rlrep-walker-experiment created\nrayjob.ray.io/rlrep-walker created\n"}]],
]


CHECKS = ["config current-context", "api-resources --api-group=ray.io -o name", "get crd rayjobs.ray.io -o json",
          "get pvc rlrep-runs -n default -o jsonpath={.spec.accessModes}"]  # check_cluster's, with a claim
FETCH = [["wait", [{}]], ["exec", [{}]], ["cp", [{}]], ["delete -n default pod/", [{}]]]


@pytest.fixture
def fake(fake_kubectl, monkeypatch):
  """The fake kubectl; returns (set the scenario's extra rules, before a healthy cluster's; read the calls)."""
  monkeypatch.setattr(kube, "POLL_S", 0.0)

  def scenario(*rules, healthy=True):
    fake_kubectl.scenario(*rules, *(HEALTHY if healthy else []))

  scenario()
  return scenario, fake_kubectl.calls


def _argvs(calls):
  return [" ".join(call["argv"]) for call in calls()]


def _train(out, *extra):
  return cli.main(["train", "--mode", "cluster", "--replicas", "tpu", "--out", str(out), *extra])


def _dry_run(out):
  assert _train(out, "--dry-run") == 0


def test_without_kubectl_the_follow_up_commands_say_what_is_missing(tmp_path, monkeypatch, capsys):
  _dry_run(tmp_path / "walker")
  monkeypatch.setenv("PATH", str(tmp_path))
  assert cli.main(["cluster", "status", str(tmp_path / "walker")]) == 2
  assert "needs kubectl" in capsys.readouterr().err


def test_a_kubectl_without_a_context_is_told_how_to_get_one(tmp_path, fake, capsys):
  scenario, calls = fake
  scenario(["config current-context", [{"err": "error: current-context is not set\n", "code": 1}]])
  assert _train(tmp_path / "walker") == 2
  error = capsys.readouterr().err
  assert "no current context" in error and "gcloud container clusters get-credentials" in error
  assert f"kubectl apply -f {tmp_path}/walker/manifests" in error  # how to submit by hand once fixed
  assert _argvs(calls) == ["config current-context"]  # nothing applied


def test_a_cluster_without_kuberay_is_told_to_install_it(tmp_path, fake, capsys):
  scenario, calls = fake
  scenario(["api-resources", [{"out": "\n"}]])
  assert _train(tmp_path / "walker") == 2
  error = capsys.readouterr().err
  assert "no RayJob resource (CRD rayjobs.ray.io)" in error and "RayOperator=ENABLED" in error
  assert _argvs(calls) == CHECKS[:2]


def test_a_kuberay_older_than_1_2_is_refused(tmp_path, fake, capsys):
  scenario, calls = fake
  old = {"spec": {"versions": [{"name": "v1", "schema": {"openAPIV3Schema": {"properties": {"spec": {"properties": {
      "entrypoint": {"type": "string"}}}}}}}]}}
  scenario(["get crd", [{"out": json.dumps(old)}]])
  assert _train(tmp_path / "walker") == 2
  assert "KubeRay operator is older than 1.2" in capsys.readouterr().err
  assert _argvs(calls) == CHECKS[:3]


def test_a_missing_or_single_node_claim_is_refused(tmp_path, fake, capsys):
  scenario, calls = fake
  scenario(["get pvc", [{"err": 'Error from server (NotFound): persistentvolumeclaims "rlrep-runs" not found\n',
                         "code": 1}]])
  assert _train(tmp_path / "walker") == 2
  assert "no PersistentVolumeClaim rlrep-runs in namespace default" in capsys.readouterr().err
  scenario(["get pvc", [{"out": '["ReadWriteOnce"]'}]])
  assert _train(tmp_path / "walker", "--overwrite") == 2
  assert "is not ReadWriteMany" in capsys.readouterr().err
  assert _argvs(calls) == CHECKS * 2


def test_a_bucket_run_checks_the_gcs_fuse_driver_and_service_account_instead_of_a_claim(tmp_path, fake, capsys):
  scenario, calls = fake
  found = [["get csidriver", [{"out": "csidriver.storage.k8s.io/gcsfuse.csi.storage.gke.io\n"}]],
           ["get serviceaccount", [{"out": "serviceaccount/rlrep-writer\n"}]]]
  scenario(["get rayjob", [NOT_FOUND]], *found)
  bucket = ("--volume-bucket", "team-runs", "--service-account", "rlrep-writer")
  assert _train(tmp_path / "walker", *bucket, "--detach") == 0
  assert _argvs(calls) == [*CHECKS[:3], "get csidriver gcsfuse.csi.storage.gke.io -o name",
                           "get serviceaccount rlrep-writer -n default -o name",
                           "get rayjob rlrep-walker -n default -o json", f"apply -f {tmp_path}/walker/manifests"]
  scenario(["get serviceaccount", [{"err": 'Error from server (NotFound): serviceaccounts "x" not found\n',
                                    "code": 1}]], ["get rayjob", [NOT_FOUND]], *found)
  assert _train(tmp_path / "walker", *bucket, "--overwrite") == 2
  error = capsys.readouterr().err
  assert "no ServiceAccount rlrep-writer in namespace default" in error
  assert "kubectl create serviceaccount rlrep-writer -n default" in error and "Workload Identity" in error
  scenario(["get csidriver", [{"err": 'Error from server (NotFound): csidrivers.storage.k8s.io "x" not found\n',
                               "code": 1}]], ["get rayjob", [NOT_FOUND]], *found)
  assert _train(tmp_path / "walker", *bucket, "--overwrite") == 2
  assert "--update-addons GcsFuseCsiDriver=ENABLED" in capsys.readouterr().err
  scenario(["get csidriver", [{"err": "Error from server (Forbidden): csidrivers.storage.k8s.io is forbidden\n",
                               "code": 1}]], ["get rayjob", [NOT_FOUND]], *found)  # may not read it: events will tell
  assert _train(tmp_path / "walker", *bucket, "--overwrite", "--detach") == 0
  assert [argv for argv in _argvs(calls) if argv.startswith("apply")] == [f"apply -f {tmp_path}/walker/manifests"] * 2


def test_a_claim_run_checks_no_service_account(tmp_path, fake):
  scenario, calls = fake
  scenario(["get rayjob", [NOT_FOUND]])
  assert _train(tmp_path / "walker", "--detach") == 0
  assert _argvs(calls) == [*CHECKS, "get rayjob rlrep-walker -n default -o json",
                           f"apply -f {tmp_path}/walker/manifests"]


def test_a_bucket_the_pods_cannot_mount_is_explained(tmp_path, fake, capsys):
  scenario, _ = fake
  _train(tmp_path / "walker", "--volume-bucket", "team-runs", "--dry-run")
  scenario(["get rayjob", [_status(jobDeploymentStatus="Initializing", rayClusterName="rlrep-walker-abcde")]],
           ["get events", [_events(("Pod", "rlrep-walker-abcde-head-x", "FailedMount",
                                    'MountVolume.SetUp failed for volume "runs" : rpc error: code = PermissionDenied '
                                    'desc = failed to get GCS bucket "team-runs": googleapi: Error 403: Forbidden'))]])
  capsys.readouterr()
  assert cli.main(["cluster", "status", str(tmp_path / "walker")]) == 0
  assert "--service-account may read and write it through Workload Identity" in capsys.readouterr().out


def test_an_existing_rayjob_of_the_same_name_is_not_silently_reapplied(tmp_path, fake, capsys):
  scenario, calls = fake
  scenario(["get rayjob", [_status(jobDeploymentStatus="Complete", jobStatus="SUCCEEDED")]])
  assert _train(tmp_path / "walker") == 2
  error = capsys.readouterr().err
  assert "RayJob rlrep-walker already exists" in error and f"rlrep cluster stop {tmp_path}/walker" in error
  assert _argvs(calls) == [*CHECKS, "get rayjob rlrep-walker -n default -o json"]  # nothing applied


def test_submit_follows_the_job_to_success_with_its_log_and_warnings(tmp_path, fake, capsys):
  scenario, calls = fake
  running = dict(jobDeploymentStatus="Running", jobStatus="RUNNING", rayClusterName="rlrep-walker-abcde")
  scenario(["get rayjob", [NOT_FOUND, _status(jobDeploymentStatus="Initializing"), _status(**running),
                           _status(**running), _status(**{**running, "jobDeploymentStatus": "Complete",
                                                          "jobStatus": "SUCCEEDED"})]],
           ["get events", [_events(("Pod", "rlrep-walker-abcde-tpu-learner-x", "FailedScheduling",
                                    "0/3 nodes are available: 3 Insufficient google.com/tpu."),
                                   ("Pod", "rlrep-walker-2-fghij-head-klmno", "BackOff", "not ours"),
                                   ("Pod", "rlrep-walker-x1y2z", "BackOff", "the submitter's"))]],
           [f"{LOGS} --since-time", [{"out": ""}]],  # a stream that ended is resumed from where it ended
           ["logs", [{"out": "driver: evaluation return 12.0\ndriver: done\n"}]])
  assert _train(tmp_path / "walker") == 0
  captured = capsys.readouterr()
  assert "rayjob.ray.io/rlrep-walker created" in captured.out
  assert "[rlrep-walker] Initializing" in captured.out and "[rlrep-walker] Complete (job SUCCEEDED)" in captured.out
  assert captured.out.count("driver: done") == 1 and '"job_status": "SUCCEEDED"' in captured.out
  assert captured.err.count("Insufficient google.com/tpu") == 1 and "TPU/GPU quota" in captured.err
  assert "not ours" not in captured.err and "the submitter's" in captured.err
  argvs = _argvs(calls)
  assert f"apply -f {tmp_path}/walker/manifests" in argvs
  assert LOGS in argvs and any(argv.startswith(f"{LOGS} --since-time=20") for argv in argvs)
  assert "get rayjob rlrep-walker -n default -o json" in argvs


def test_a_failed_job_exits_1_with_its_reason(tmp_path, fake, capsys):
  scenario, _ = fake
  scenario(["get rayjob", [NOT_FOUND, _status(jobDeploymentStatus="Running", rayClusterName="c1"),
                           _status(jobDeploymentStatus="Failed", jobStatus="FAILED", reason="AppFailed", failed=3,
                                   rayClusterName="c1", message="Job failed due to an application error")]],
           ["logs", [{"out": "Traceback: ValueError\n"}]])
  assert _train(tmp_path / "walker") == 1
  captured = capsys.readouterr()
  assert "Traceback: ValueError" in captured.out
  assert ("run failed: RayJob rlrep-walker ended Failed (job FAILED, AppFailed), 3 failed attempts: Job failed due "
          "to an application error") in captured.err
  assert f"rlrep cluster fetch {tmp_path}/walker" in captured.err


def test_detach_submits_without_following(tmp_path, fake, capsys):
  scenario, calls = fake
  scenario(["get rayjob", [NOT_FOUND, _status(jobDeploymentStatus="Running")]])
  assert _train(tmp_path / "walker", "--detach") == 0
  assert f"rlrep cluster logs {tmp_path}/walker" in capsys.readouterr().out
  argvs = _argvs(calls)
  assert argvs[-1] == f"apply -f {tmp_path}/walker/manifests" and not any(a.startswith("logs") for a in argvs)


def test_status_is_one_line_plus_warnings_with_advice(tmp_path, fake, capsys):
  scenario, calls = fake
  _dry_run(tmp_path / "walker")
  scenario(["get rayjob", [_status(jobDeploymentStatus="Initializing", startTime="2025-01-02T03:04:05Z",
                                   rayClusterName="rlrep-walker-abcde")]],
           ["get events", [_events(("RayCluster", "rlrep-walker-abcde", "FailedToCreateWorkerPod",
                                    'pods "x" is forbidden: exceeded quota: compute, requested: cpu=4'),
                                   ("Pod", "rlrep-walker-2-fghij-head-klmno", "Failed", "another job's"))]])
  capsys.readouterr()
  assert cli.main(["cluster", "status", str(tmp_path / "walker")]) == 0
  line, warning = capsys.readouterr().out.splitlines()
  assert line == "rlrep-walker in namespace default: Initializing, started 2025-01-02T03:04:05Z"
  assert "exceeded quota" in warning and "kubectl describe resourcequota" in warning
  assert "get events -n default --field-selector type=Warning -o json" in _argvs(calls)


def test_status_of_a_job_that_is_not_there(tmp_path, fake, capsys):
  scenario, _ = fake
  _dry_run(tmp_path / "walker")
  scenario(["get rayjob", [NOT_FOUND]])
  assert cli.main(["cluster", "status", str(tmp_path / "walker")]) == 1
  assert "no RayJob rlrep-walker in namespace default: it was stopped" in capsys.readouterr().err


def test_logs_of_a_finished_job_whose_pods_are_gone(tmp_path, fake, capsys):
  scenario, _ = fake
  _dry_run(tmp_path / "walker")
  scenario(["get rayjob", [_status(jobDeploymentStatus="Complete", jobStatus="SUCCEEDED", rayClusterName="c1")]],
           ["logs", [{"err": 'error: jobs.batch "rlrep-walker" not found\n', "code": 1}]])
  assert cli.main(["cluster", "logs", str(tmp_path / "walker")]) == 0  # the job's result, though its log is gone
  assert "no driver log" in capsys.readouterr().err
  assert cli.main(["cluster", "logs", "--no-follow", str(tmp_path / "walker")]) == 1
  assert "rlrep cluster fetch" in capsys.readouterr().err


def test_stop_deletes_what_was_submitted(tmp_path, fake, capsys):
  scenario, calls = fake
  _dry_run(tmp_path / "walker")
  scenario(["delete", [{"out": 'rayjob.ray.io "rlrep-walker" deleted\n'}, {"out": ""}]])
  assert cli.main(["cluster", "stop", str(tmp_path / "walker")]) == 0
  assert 'rayjob.ray.io "rlrep-walker" deleted' in capsys.readouterr().out
  assert _argvs(calls)[-1] == f"delete -f {tmp_path}/walker/manifests --ignore-not-found --timeout=120s"
  assert cli.main(["cluster", "stop", str(tmp_path / "walker")]) == 0
  assert "nothing to stop" in capsys.readouterr().out


def test_fetch_copies_through_a_helper_pod_that_mounts_the_claim(tmp_path, fake, capsys):
  scenario, calls = fake
  _dry_run(tmp_path / "walker")
  scenario(*FETCH)
  assert cli.main(["cluster", "fetch", str(tmp_path / "walker"), str(tmp_path / "copy")]) == 0
  assert f"copied rlrep-walker's outputs to {tmp_path}/copy" in capsys.readouterr().out
  recorded = calls()
  assert [" ".join(call["argv"]) for call in recorded] == [
      "apply -f -",
      "wait -n default pod/rlrep-walker-fetch --for=condition=Ready --timeout=600s",
      "exec -n default rlrep-walker-fetch -c fetch -- test -d /rlrep-runs/rlrep-walker",
      f"cp -n default -c fetch rlrep-walker-fetch:/rlrep-runs/rlrep-walker {tmp_path}/copy",
      "delete -n default pod/rlrep-walker-fetch --ignore-not-found --wait=false"]
  pod = json.loads(recorded[0]["stdin"])["spec"]
  assert pod["volumes"] == [{"name": "runs", "persistentVolumeClaim": {"claimName": "rlrep-runs", "readOnly": True}}]
  assert pod["containers"][0]["image"] == "rlrep:0.1.0" and pod["activeDeadlineSeconds"] == 3600


def test_fetch_before_the_job_wrote_anything_still_removes_the_helper_pod(tmp_path, fake, capsys):
  scenario, calls = fake
  _dry_run(tmp_path / "walker")
  scenario(["exec", [{"err": "command terminated with exit code 1\n", "code": 1}]], *FETCH)
  assert cli.main(["cluster", "fetch", str(tmp_path / "walker"), "--image", "busybox:1.36"]) == 1
  assert "has no /rlrep-runs/rlrep-walker" in capsys.readouterr().err
  assert json.loads(calls()[0]["stdin"])["spec"]["containers"][0]["image"] == "busybox:1.36"
  assert [argv.split(" ")[0] for argv in _argvs(calls)] == ["apply", "wait", "exec", "delete"]  # no cp


def test_fetch_mounts_the_bucket_a_bucket_run_wrote_to(tmp_path, fake, capsys):
  scenario, calls = fake
  _train(tmp_path / "walker", "--volume-bucket", "team-runs", "--dry-run")
  scenario(*FETCH)
  assert cli.main(["cluster", "fetch", str(tmp_path / "walker"), str(tmp_path / "copy")]) == 0
  pod = json.loads(calls()[0]["stdin"])
  assert pod["spec"]["volumes"] == [{"name": "runs", "csi": {
      "driver": "gcsfuse.csi.storage.gke.io", "readOnly": True,
      "volumeAttributes": {"bucketName": "team-runs", "mountOptions": "implicit-dirs"}}}]
  assert pod["metadata"]["annotations"] == {"gke-gcsfuse/volumes": "true"}
  assert pod["spec"]["serviceAccountName"] == "rlrep"


def test_a_run_whose_experiment_json_predates_the_cluster_settings_group_is_still_found(tmp_path, fake, capsys):
  scenario, calls = fake
  _dry_run(tmp_path / "walker")
  scenario(*FETCH)
  saved = json.loads((tmp_path / "walker" / "experiment.json").read_text())
  (tmp_path / "walker" / "experiment.json").write_text(json.dumps({**saved.pop("cluster"), **saved,
                                                                    "image": "r/old:1", "volume_claim": "old"}))
  assert cli.main(["cluster", "fetch", str(tmp_path / "walker"), str(tmp_path / "copy")]) == 0
  pod = json.loads(calls()[0]["stdin"])["spec"]
  assert pod["containers"][0]["image"] == "r/old:1" and pod["volumes"][0]["persistentVolumeClaim"]["claimName"] == "old"


def test_a_dry_run_calls_no_kubectl_and_applies_nothing(tmp_path, fake):
  _, calls = fake
  _dry_run(tmp_path / "walker")
  assert calls() == []


def test_an_unschedulable_pod_for_cpu_or_memory_gets_what_to_change(tmp_path, fake, capsys):
  scenario, calls = fake
  _train(tmp_path / "walker", "--replicas", "gpu:1", "--dry-run")
  scenario(["get rayjob", [_status(jobDeploymentStatus="Initializing", rayClusterName="rlrep-walker-abcde")]],
           ["get events", [_events(("Pod", "rlrep-walker-abcde-gpu-learner-worker-x", "FailedScheduling",
                                    "0/4 nodes are available: 1 Insufficient cpu, 3 Insufficient memory."))]])
  capsys.readouterr()
  assert cli.main(["cluster", "status", str(tmp_path / "walker")]) == 0
  _, warning = capsys.readouterr().out.splitlines()
  assert "Insufficient cpu" in warning and "a GPU learner pod 6 and 24 GiB" in warning
  assert "CPU worker pods request 4 CPUs and 16 GiB" in warning and "larger machines" in warning
  assert _argvs(calls) == ["get rayjob rlrep-walker -n default -o json",
                           "get events -n default --field-selector type=Warning -o json"]


def test_the_fake_kubectl_fails_a_call_no_rule_expects(fake_kubectl):
  fake_kubectl.scenario(["get pods", [{"out": "pod/x\n"}]])
  assert kube.kubectl("get", "pods") == "pod/x\n"
  with pytest.raises(kube.KubectlFailed, match="fake kubectl: unexpected call: kubectl delete pod x"):
    kube.kubectl("delete", "pod", "x")
  assert fake_kubectl.argvs() == ["get pods", "delete pod x"] and fake_kubectl.unexpected() == ["delete pod x"]
  (fake_kubectl.state / "calls.jsonl").unlink()  # seen: the fixture would fail the test for it
