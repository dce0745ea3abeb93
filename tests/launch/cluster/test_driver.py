"""The in-cluster driver: its handling of the run's directory on the volume, and of roles Ray cannot place."""

import dataclasses
import json
import pathlib

import pytest

from launch.cluster import driver
from launch.cluster.config import ClusterConfig
from launch.experiment import Experiment, RunFailed
from launch.program import CPU_WORKER_CPUS, LEARNER_HOST_RESOURCE, WORKER_RESOURCE, make_program


def test_a_driver_refuses_a_volume_directory_holding_another_experiment(tmp_path):
  on_volume = tmp_path / "rlrep-walker"
  on_volume.mkdir()
  (on_volume / "experiment.json").write_text(json.dumps(Experiment(out=str(on_volume), task="cheetah-run").to_json()))
  submitted = tmp_path / "config-map"
  submitted.mkdir()
  (submitted / "experiment.json").write_text(json.dumps(Experiment(out=str(on_volume), task="walker-walk").to_json()))
  for existing in ("refuse", "resume"):
    with pytest.raises(RunFailed, match="holds another experiment"):
      driver.run_in_cluster(str(submitted / "experiment.json"), "20250102T030405Z-abcdef", existing)
  assert json.loads((on_volume / "experiment.json").read_text())["task"] == "cheetah-run"  # left as it was


def _run_on_volume(tmp_path: pathlib.Path, submission: str) -> Experiment:
  """The run's directory on a volume as the driver of `submission` left it: its experiment and a checkpoint."""
  experiment = Experiment(out=str(tmp_path / "rlrep-walker"), mode="cluster")
  assert driver.prepare_volume_dir(experiment, submission, "refuse") is False  # nothing there yet: a new run
  (experiment.out_dir / "checkpoints").mkdir()
  return experiment


def test_overwrite_replaces_an_earlier_submissions_run_on_the_volume_but_not_its_own_on_a_retry(tmp_path):
  experiment = _run_on_volume(tmp_path, "first")
  assert driver.prepare_volume_dir(experiment, "second", "overwrite") is False  # a new run
  assert not (experiment.out_dir / "checkpoints").exists()
  assert (experiment.out_dir / "submission").read_text() == "second\n"
  assert (experiment.out_dir / "experiment.json").exists()
  (experiment.out_dir / "checkpoints").mkdir()
  assert driver.prepare_volume_dir(experiment, "second", "overwrite") is True  # KubeRay retries the driver
  assert (experiment.out_dir / "checkpoints").exists()


def test_without_overwrite_an_earlier_run_is_refused_unless_resumed(tmp_path):
  experiment = _run_on_volume(tmp_path, "first")
  with pytest.raises(RunFailed, match=r"holds an earlier submission's run of this experiment. Continue it with "
                                      r"`rlrep train --resume OUT`.*resubmit with --overwrite"):
    driver.prepare_volume_dir(experiment, "second", "refuse")
  assert (experiment.out_dir / "checkpoints").exists() and (experiment.out_dir / "submission").read_text() == "first\n"
  assert driver.prepare_volume_dir(experiment, "third", "resume") is True
  assert (experiment.out_dir / "checkpoints").exists() and (experiment.out_dir / "submission").read_text() == "third\n"
  assert driver.prepare_volume_dir(experiment, "third", "refuse") is True  # then its retries continue too


def test_a_resubmission_with_another_budget_or_scale_continues_the_run_but_one_with_another_seed_is_refused(
    tmp_path):
  experiment = _run_on_volume(tmp_path, "first")
  bigger = dataclasses.replace(experiment, frames=10 * experiment.frames, actors=4,
                               agent_config=dataclasses.replace(experiment.agent_config, precision="float32"))
  assert driver.prepare_volume_dir(bigger, "second", "resume") is True
  with pytest.raises(RunFailed, match="holds another experiment"):
    driver.prepare_volume_dir(dataclasses.replace(bigger, seed=1), "third", "resume")


def test_placement_fails_naming_the_pods_that_never_joined_the_ray_cluster():
  program = make_program(Experiment(mode="cluster", replicas="tpu", actors=3,
                                    cluster=ClusterConfig(tpu_topology="2x2")))
  assert driver.needed_resources(program) == {"CPU": 9, "TPU": 4, LEARNER_HOST_RESOURCE: 1, WORKER_RESOURCE: 5}
  cpu_pods_only = {"CPU": 8.0, WORKER_RESOURCE: 2000.0, "memory": 1e10}
  with pytest.raises(RunFailed) as error:
    driver.wait_for_placement(program, lambda: cpu_pods_only, timeout_s=0.05, poll_s=0.01)
  message = str(error.value)
  assert message.startswith("after 0 s the Ray cluster still lacks what the roles need: CPU 8 of 9 (from the CPU "
                            "worker pods and the learner's pod); TPU 0 of 4 (from the learner's TPU pod); "
                            f"{LEARNER_HOST_RESOURCE} 0 of 1 (from the learner's pod).")
  assert "rlrep cluster status OUT" in message and "--placement-timeout-s" in message
  driver.wait_for_placement(program, lambda: {**cpu_pods_only, "CPU": 9.0, "TPU": 4.0, LEARNER_HOST_RESOURCE: 1.0},
                            timeout_s=0.05)


def test_in_a_ray_cluster_the_learner_gets_the_tpu_pod_and_replay_a_cpu_pod_of_its_own():
  """Ray's own placement, on a simulated cluster shaped like the manifests: a head with no CPUs, then the
  TPU pod (1 Ray CPU), then the CPU worker pods. Without the custom resources, replay took the TPU pod's CPU;
  without replay taking a whole CPU pod, other roles shared the memory its table fills. Until the TPU pod has
  joined, the driver's placement wait fails."""
  import ray
  from ray.cluster_utils import Cluster

  from launch.modes import local

  program = make_program(Experiment(mode="cluster", replicas="tpu", actors=3,
                                    cluster=ClusterConfig(tpu_topology="2x2")))
  simulated = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
  try:
    cpu_pods = [simulated.add_node(num_cpus=CPU_WORKER_CPUS, resources={WORKER_RESOURCE: 1000}) for _ in range(2)]
    ray.init(address=simulated.address)
    with pytest.raises(RunFailed, match="TPU 0 of 4"):
      driver.wait_for_placement(program, ray.cluster_resources, timeout_s=1, poll_s=0.2)
    tpu_pod = simulated.add_node(num_cpus=1, resources={"TPU": 4, LEARNER_HOST_RESOURCE: 1})
    driver.wait_for_placement(program, ray.cluster_resources, timeout_s=60, poll_s=0.2)

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
