"""The program: which roles a run has and what each needs, whatever launches it.

Every mode runs the same roles (`launch/roles.py`); only how they are placed differs. In-process mode runs
them as threads and ignores resources; local mode gives each role a Ray actor with these resources;
cluster mode also sizes the Kubernetes worker groups from them.

>>> from launch.experiment import Experiment
>>> [role.name for role in make_program(Experiment(actors=2))]
['counter', 'replay', 'learner', 'evaluator', 'actor-0', 'actor-1']
"""

from __future__ import annotations

import dataclasses
import math

from launch.experiment import Experiment

# TPU chips per host. Single-host v5e/v6e slices may hold 1, 4 or 8 chips; every multi-host slice has 4 per host.
_SINGLE_HOST_MAX_CHIPS = {"tpu-v4-podslice": 4, "tpu-v5p-slice": 4, "tpu-v5-lite-podslice": 8, "tpu-v6e-slice": 8}
TPU_ACCELERATORS = tuple(_SINGLE_HOST_MAX_CHIPS)


@dataclasses.dataclass(frozen=True)
class Role:
  """One process of a run.

  Attributes:
    name: unique within the program, e.g. "actor-3".
    kind: counter, replay, learner, evaluator or actor.
    cpus: CPU cores to reserve.
    accelerator: "tpu" or "gpu" when the role needs accelerator devices (the learner), else None.
    accelerator_count: devices of that kind (TPU chips or GPUs).
    restartable: the launcher restarts the role when its process dies (actors hold no state worth keeping).
  """
  name: str
  kind: str
  cpus: float
  accelerator: str | None = None
  accelerator_count: int = 0
  restartable: bool = False


@dataclasses.dataclass(frozen=True)
class TPUSlice:
  """A TPU slice: its GKE accelerator type, topology, chip count and hosts."""
  accelerator: str
  topology: str
  chips: int
  hosts: int

  @property
  def chips_per_host(self) -> int:
    return self.chips // self.hosts


def tpu_slice(accelerator: str, topology: str) -> TPUSlice:
  """Chips and hosts of a slice, e.g. v5e 2x2 = 4 chips on one host; v4 2x2x2 = 8 chips on 2 hosts."""
  if accelerator not in _SINGLE_HOST_MAX_CHIPS:
    raise ValueError(f"unknown TPU accelerator {accelerator!r}; use one of {', '.join(TPU_ACCELERATORS)}.")
  try:
    dims = [int(d) for d in topology.lower().split("x")]
  except ValueError:
    dims = []
  expected_dims = 3 if accelerator in ("tpu-v4-podslice", "tpu-v5p-slice") else 2
  if len(dims) != expected_dims or min(dims) < 1:
    example = "2x2x1" if expected_dims == 3 else "2x2"
    raise ValueError(f"TPU topology {topology!r} does not fit {accelerator}: give {expected_dims} dimensions, "
                     f"e.g. {example}.")
  chips = math.prod(dims)
  single_host = chips <= _SINGLE_HOST_MAX_CHIPS[accelerator]
  return TPUSlice(accelerator, topology, chips, 1 if single_host else chips // 4)


def learner_devices(experiment: Experiment) -> tuple[str | None, int, float]:
  """(accelerator, count, cpus) for the learner described by `experiment.replicas`."""
  import rlrep
  spec = rlrep.parse_spec(experiment.replicas)
  if spec.kind == "tpu":
    return "tpu", tpu_slice(experiment.tpu_accelerator, experiment.tpu_topology).chips_per_host, 1.0
  if spec.kind == "gpu":
    return "gpu", spec.count or 1, 1.0
  if spec.kind == "cpu":
    return None, 0, float(spec.count)
  return None, 0, 1.0  # auto / multi_worker: whatever the learner's host offers


def make_program(experiment: Experiment) -> tuple[Role, ...]:
  """The roles of `experiment`: counter, replay, learner, evaluator and one role per actor."""
  accelerator, count, learner_cpus = learner_devices(experiment)
  return (Role("counter", "counter", cpus=0.0),  # bookkeeping only; never worth a core
          Role("replay", "replay", cpus=1.0),
          Role("learner", "learner", cpus=learner_cpus, accelerator=accelerator, accelerator_count=count),
          Role("evaluator", "evaluator", cpus=1.0),
          *(Role(f"actor-{i}", "actor", cpus=1.0, restartable=True) for i in range(experiment.actors)))
