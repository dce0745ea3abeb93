"""Roles and resources of a program, and TPU slice arithmetic."""

import pytest

from launch.experiment import Experiment
from launch.program import make_program, tpu_slice


def test_every_role_is_present_once_with_restartable_actors_and_evaluator():
  roles = make_program(Experiment(actors=3))
  assert [r.kind for r in roles] == ["counter", "replay", "learner", "evaluator", "actor", "actor", "actor"]
  assert len({r.name for r in roles}) == len(roles)
  assert [r.name for r in roles if r.restartable] == ["evaluator", "actor-0", "actor-1", "actor-2"]


@pytest.mark.parametrize("replicas, accelerator, count, cpus", [
    ("cpu:4", None, 0, 4.0), ("gpu:2", "gpu", 2, 1.0), ("tpu", "tpu", 4, 1.0), ("auto", None, 0, 1.0)])
def test_the_learner_asks_for_the_devices_its_replicas_need(replicas, accelerator, count, cpus):
  learner = next(r for r in make_program(Experiment(replicas=replicas, tpu_topology="2x2")) if r.kind == "learner")
  assert (learner.accelerator, learner.accelerator_count, learner.cpus) == (accelerator, count, cpus)


@pytest.mark.parametrize("accelerator, topology, chips, hosts", [
    ("tpu-v5-lite-podslice", "1x1", 1, 1), ("tpu-v5-lite-podslice", "2x4", 8, 1),
    ("tpu-v5-lite-podslice", "4x4", 16, 4), ("tpu-v4-podslice", "2x2x1", 4, 1), ("tpu-v4-podslice", "2x2x2", 8, 2)])
def test_tpu_slices_have_the_documented_chips_and_hosts(accelerator, topology, chips, hosts):
  tpu = tpu_slice(accelerator, topology)
  assert (tpu.chips, tpu.hosts, tpu.chips_per_host) == (chips, hosts, chips // hosts)


def test_a_topology_is_read_in_lower_case():
  assert tpu_slice("tpu-v5-lite-podslice", "2X2").topology == "2x2"


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
