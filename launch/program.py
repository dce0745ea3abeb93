"""The program: which roles a run has and what each needs, whatever launches it.

Every mode runs the same roles (`launch/roles/`); only how they are placed differs. In-process mode runs
them as threads and ignores resources; local mode gives each role a Ray actor with these resources;
cluster mode also sizes the Kubernetes worker groups from them.

>>> from launch.experiment import Experiment
>>> [role.name for role in make_program(Experiment(actors=2))]
['counter', 'replay', 'learner', 'evaluator', 'actor-0', 'actor-1']
"""

from __future__ import annotations

import dataclasses

from launch.experiment import Experiment

# Custom Ray resources that place roles in cluster mode: only the learner's pod advertises the first and only
# CPU worker pods the second, so no actor or replay can take the CPU the learner's pod offers, whichever pod
# joins the Ray cluster first.
LEARNER_HOST_RESOURCE = "rlrep_learner_host"
WORKER_RESOURCE = "rlrep_worker"
WORKER_RESOURCE_PER_POD = 1000
# glibc's malloc arenas in every role process (local mode's Ray processes, cluster mode's pods). Its default, up to 8
# per core, lets a thread-heavy process (TensorFlow, gRPC) fragment: in a 35-minute local soak the evaluator grew
# 12.6%/h with the default and 0.7%/h with 2 (benchmarks/results/soak/).
MALLOC_ARENA_MAX = "2"


@dataclasses.dataclass(frozen=True)
class Role:
  """One process of a run.

  Attributes:
    name: unique within the program, e.g. "actor-3".
    kind: counter, replay, learner, evaluator or actor.
    cpus: CPU cores to reserve.
    accelerator: "tpu" or "gpu" when the role needs accelerator devices (the learner), else None.
    accelerator_count: devices of that kind (TPU chips or GPUs).
    restartable: the launcher restarts the role when its process dies (actors and the evaluator hold no
      state worth keeping: the evaluator's log is its CSV).
    placement: the custom Ray resource the role needs in cluster mode (`LEARNER_HOST_RESOURCE` or
      `WORKER_RESOURCE`), or None to run wherever it fits (the counter, which needs no CPU).
  """
  name: str
  kind: str
  cpus: float
  accelerator: str | None = None
  accelerator_count: int = 0
  restartable: bool = False
  placement: str | None = None


def learner_devices(experiment: Experiment) -> tuple[str | None, int, float]:
  """(accelerator, count, cpus) for the learner described by `experiment.replicas`."""
  import rlrep
  spec = rlrep.parse_spec(experiment.replicas)
  if spec.kind == "tpu":
    return "tpu", experiment.cluster.tpu.chips_per_host, 1.0
  if spec.kind == "gpu":
    return "gpu", spec.count or 1, 1.0
  if spec.kind == "cpu":
    return None, 0, float(spec.count)
  return None, 0, 1.0  # auto / multi_worker: whatever the learner's host offers


def make_program(experiment: Experiment) -> tuple[Role, ...]:
  """The roles of `experiment`: counter, replay, learner, evaluator and one role per actor."""
  accelerator, count, learner_cpus = learner_devices(experiment)
  return (Role("counter", "counter", cpus=0.0),  # bookkeeping only; never worth a core
          Role("replay", "replay", cpus=1.0, placement=WORKER_RESOURCE),
          Role("learner", "learner", cpus=learner_cpus, accelerator=accelerator, accelerator_count=count,
               placement=LEARNER_HOST_RESOURCE),
          Role("evaluator", "evaluator", cpus=1.0, restartable=True, placement=WORKER_RESOURCE),
          *(Role(f"actor-{i}", "actor", cpus=1.0, restartable=True, placement=WORKER_RESOURCE)
            for i in range(experiment.actors)))
