"""The program: which roles a run has and what each needs, whatever launches it.

Every mode runs the same roles (`launch/roles/`); only how they are placed differs. In-process mode runs
them as threads and ignores resources; local mode gives each role a Ray actor with these resources;
cluster mode also sizes the Kubernetes worker groups from them.

>>> from launch.experiment import Experiment
>>> [role.name for role in make_program(Experiment(actors=2))]
['counter', 'replay', 'learner', 'evaluator', 'actor-0', 'actor-1']
>>> [role.name for role in make_program(Experiment(mode="local", learner_hosts=2))]
['counter', 'replay', 'learner', 'learner-1', 'evaluator', 'actor-0']
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
CPU_WORKER_CPUS = 4  # Ray CPUs (and cores) per CPU worker pod in cluster mode
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


def learner_name(host: int) -> str:
  """The learner role on host `host` of the learner's hosts: "learner" for the first (the chief), else
  "learner-1", "learner-2", ..."""
  return "learner" if host == 0 else f"learner-{host}"


def make_program(experiment: Experiment) -> tuple[Role, ...]:
  """The roles of `experiment`: counter, replay, learner, evaluator and one role per actor."""
  accelerator, count, learner_cpus = learner_devices(experiment)
  return (Role("counter", "counter", cpus=0.0),  # bookkeeping only; never worth a core
          # In cluster mode replay takes a whole CPU worker pod, so the memory its table fills is its own.
          Role("replay", "replay", cpus=CPU_WORKER_CPUS if experiment.mode == "cluster" else 1.0,
               placement=WORKER_RESOURCE),
          *(Role(learner_name(host), "learner", cpus=learner_cpus, accelerator=accelerator, accelerator_count=count,
                 placement=LEARNER_HOST_RESOURCE) for host in range(experiment.learner_hosts)),
          Role("evaluator", "evaluator", cpus=1.0, restartable=True, placement=WORKER_RESOURCE),
          *(Role(f"actor-{i}", "actor", cpus=1.0, restartable=True, placement=WORKER_RESOURCE)
            for i in range(experiment.actors)))


# An existing Ray cluster (`--ray-address`) may also advertise this on one node: the replay server goes there (it is
# the role whose loss ends a run, and its memory grows with the replay), e.g. a large-memory node that is never
# preempted. Without it replay goes where the actors go.
REPLAY_HOST_RESOURCE = "rlrep_replay_host"


def fit_to_nodes(experiment: Experiment, nodes: list[dict[str, float]]) -> tuple[Role, ...]:
  """The program of `experiment` as the Ray cluster whose nodes offer `nodes` (each node's total resources, as
  `ray.nodes()` lists them when the run starts) runs it in local mode: its private Ray instance (one node) or an
  existing Ray cluster (`--ray-address`).

  * A role keeps its placement resource only where some node advertises it: on a cluster without rlrep's custom
    resources Ray places each role wherever its CPUs fit (it keeps CPU-only roles off GPU nodes while it can).
  * Replay needs `REPLAY_HOST_RESOURCE` instead when a node advertises it.
  * A learner given no device count (`--replicas gpu` or `auto`) takes every GPU of the largest node that may
    host it, so that MirroredStrategy spans them all; `auto` stays on CPUs where those nodes have no GPU.

  >>> cluster = [{"CPU": 8.0, "GPU": 4.0, LEARNER_HOST_RESOURCE: 1.0}, {"CPU": 32.0, WORKER_RESOURCE: 1000.0}]
  >>> roles = {role.name: role for role in fit_to_nodes(Experiment(replicas="gpu"), cluster)}
  >>> roles["learner"].accelerator_count, roles["learner"].placement, roles["replay"].placement
  (4, 'rlrep_learner_host', 'rlrep_worker')
  >>> [role.placement for role in fit_to_nodes(Experiment(replicas="gpu"), [{"CPU": 8.0, "GPU": 2.0}])]
  [None, None, None, None, None]
  """
  import rlrep  # loads TensorFlow: only for a run, not for rendering cluster manifests
  advertised = {name for node in nodes for name in node}
  spec = rlrep.parse_spec(experiment.replicas)
  learner_nodes = [node for node in nodes if LEARNER_HOST_RESOURCE in node] or nodes
  gpus = max((int(node.get("GPU", 0)) for node in learner_nodes), default=0)

  def fitted(role: Role) -> Role:
    placement = REPLAY_HOST_RESOURCE if role.kind == "replay" and REPLAY_HOST_RESOURCE in advertised else role.placement
    changes = {"placement": placement if placement in advertised else None}
    if role.kind == "learner" and spec.kind in ("gpu", "auto") and spec.count is None and gpus:
      changes.update(accelerator="gpu", accelerator_count=gpus)
    return dataclasses.replace(role, **changes)

  return tuple(fitted(role) for role in make_program(experiment))


def demand(role: Role) -> dict[str, float]:
  """The Ray resources `role` needs on one node: its CPUs, its accelerators and its placement resource.

  >>> demand(Role("learner", "learner", cpus=1.0, accelerator="gpu", accelerator_count=2, placement="host"))
  {'CPU': 1.0, 'GPU': 2, 'host': 1}
  """
  need = {"CPU": role.cpus} if role.cpus else {}
  if role.accelerator:
    need["GPU" if role.accelerator == "gpu" else "TPU"] = role.accelerator_count
  if role.placement:
    need[role.placement] = 1
  return need


def fits(role: Role, node: dict[str, float]) -> bool:
  """Whether a node offering `node` (its total resources) can host `role`."""
  return all(node.get(name, 0) >= amount for name, amount in demand(role).items())
