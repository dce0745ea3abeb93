"""Roles and resources of a program."""

import pytest

from launch.cluster.config import ClusterConfig
from launch.experiment import Experiment
from launch.program import make_program


def test_every_role_is_present_once_with_restartable_actors_and_evaluator():
  roles = make_program(Experiment(actors=3))
  assert [r.kind for r in roles] == ["counter", "replay", "learner", "evaluator", "actor", "actor", "actor"]
  assert len({r.name for r in roles}) == len(roles)
  assert [r.name for r in roles if r.restartable] == ["evaluator", "actor-0", "actor-1", "actor-2"]


@pytest.mark.parametrize("replicas, accelerator, count, cpus", [
    ("cpu:4", None, 0, 4.0), ("gpu:2", "gpu", 2, 1.0), ("tpu", "tpu", 4, 1.0), ("auto", None, 0, 1.0)])
def test_the_learner_asks_for_the_devices_its_replicas_need(replicas, accelerator, count, cpus):
  experiment = Experiment(replicas=replicas, cluster=ClusterConfig(tpu_topology="2x2"))
  learner = next(r for r in make_program(experiment) if r.kind == "learner")
  assert (learner.accelerator, learner.accelerator_count, learner.cpus) == (accelerator, count, cpus)
