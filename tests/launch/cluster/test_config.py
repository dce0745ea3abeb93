"""Cluster mode's settings: validated at once, and the TPU slices GKE offers."""

import pytest

from launch.cluster.config import ClusterConfig, tpu_slice


@pytest.mark.parametrize("accelerator, topology, chips, hosts", [
    ("tpu-v5-lite-podslice", "1x1", 1, 1), ("tpu-v5-lite-podslice", "2x4", 8, 1),
    ("tpu-v5-lite-podslice", "4x4", 16, 4), ("tpu-v4-podslice", "2x2x1", 4, 1), ("tpu-v4-podslice", "2x2x2", 8, 2)])
def test_tpu_slices_have_the_documented_chips_and_hosts(accelerator, topology, chips, hosts):
  tpu = tpu_slice(accelerator, topology)
  assert (tpu.chips, tpu.hosts, tpu.chips_per_host) == (chips, hosts, chips // hosts)


def test_a_topology_is_read_in_lower_case():
  assert tpu_slice("tpu-v5-lite-podslice", "2X2").topology == "2x2"
  assert ClusterConfig(tpu_topology="2X4").tpu.topology == "2x4"


@pytest.mark.parametrize("accelerator, topology, message", [
    ("tpu-v9", "2x2", "unknown TPU accelerator"),
    ("tpu-v6e-slice", "2x2", "came after libtpu 1.9.0, the last TPU runtime for TensorFlow 2.15"),
    ("tpu-v4-podslice", "2x2", "not a slice GKE offers for tpu-v4-podslice; its topologies are 2x2x1, 2x2x2"),
    ("tpu-v4-podslice", "1x1x1", "not a slice GKE offers"), ("tpu-v5p-slice", "2x2x3", "not a slice GKE offers"),
    ("tpu-v5-lite-podslice", "3x3", "not a slice GKE offers"), ("tpu-v5-lite-podslice", "1x2", "not a slice GKE"),
    ("tpu-v5-lite-podslice", "2x3", "not a slice GKE offers"), ("tpu-v5-lite-podslice", "1x8", "not a slice GKE"),
    ("tpu-v5-lite-podslice", "2xA", "not a slice GKE offers")])
def test_bad_tpu_settings_are_refused(accelerator, topology, message):
  with pytest.raises(ValueError, match=message):
    tpu_slice(accelerator, topology)
  with pytest.raises(ValueError, match=message):
    ClusterConfig(tpu_accelerator=accelerator, tpu_topology=topology)


def test_every_problem_is_listed_at_once():
  with pytest.raises(ValueError) as error:
    ClusterConfig(image="", namespace="Team_A", tpu_accelerator="tpu-v4-podslice", tpu_topology="2x2x2",
                  gpu_accelerator="NVIDIA L4", volume_claim="Runs", volume_bucket="gs://my-runs",
                  service_account="-rlrep")
  for message in ("image must name a container image", "namespace 'Team_A' is not a Kubernetes namespace name",
                  "TPU topology 2x2x2 spans 2 hosts; rlrep's learner runs on one host",
                  "gpu_accelerator 'NVIDIA L4' is not a GKE accelerator name",
                  "volume_claim 'Runs' is not a Kubernetes object name",
                  "service_account '-rlrep' is not a Kubernetes object name",
                  "volume_bucket takes the bucket's name: 'my-runs', not 'gs://my-runs'"):
    assert message in str(error.value)


@pytest.mark.parametrize("bucket", ["ab", "My-Runs", "runs-", "runs/checkpoints"])
def test_a_bucket_name_cloud_storage_would_refuse_is_refused(bucket):
  with pytest.raises(ValueError, match="is not a Cloud Storage bucket name"):
    ClusterConfig(volume_bucket=bucket)


def test_the_defaults_and_usual_names_are_valid():
  config = ClusterConfig()
  assert config.volume == "PersistentVolumeClaim rlrep-runs" and config.volume_bucket is None
  named = ClusterConfig(namespace="rl-team", volume_claim="runs.v2", volume_bucket="my_project-rlrep.runs",
                        service_account="rlrep-writer", gpu_accelerator="nvidia-tesla-a100")
  assert named.volume == "gs://my_project-rlrep.runs (GCS FUSE)"


def test_the_settings_load_from_either_experiment_json_layout():
  assert ClusterConfig.from_experiment_json({"cluster": {"image": "a:1", "volume_bucket": "b-1"}}) == ClusterConfig(
      image="a:1", volume_bucket="b-1")
  flat = {"task": "walker-walk", "image": "a:1", "namespace": "ns", "volume_claim": "c"}  # before `cluster`
  assert ClusterConfig.from_experiment_json(flat) == ClusterConfig(image="a:1", namespace="ns", volume_claim="c")


def test_the_placement_timeout_and_job_deadline_are_checked_and_the_deadline_is_in_seconds():
  assert ClusterConfig(job_deadline_hours=1.5).job_deadline_s == 5400
  for settings, message in [({"placement_timeout_s": 0}, "placement_timeout_s must be > 0"),
                            ({"placement_timeout_s": 3600, "job_deadline_hours": 1}, "must exceed the placement"),
                            ({"job_deadline_hours": 1e6}, "be at most 596,523 hours")]:
    with pytest.raises(ValueError, match=message):
      ClusterConfig(**settings)
