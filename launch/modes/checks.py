"""What `rlrep train` checks against the machines a run will use before any role starts: the learner's devices
(`--replicas`), the precision it will compute in, and whether the replay fits in memory.

`rlrep train` runs them before anything starts (launch/modes/train.py), so bad input leaves nothing running and
nothing written; local mode checks the replay again against the nodes of an existing Ray cluster, and cluster mode
against the pod it gives the replay.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from launch.experiment import Experiment

if TYPE_CHECKING:  # rlrep imports TensorFlow: only when a run needs it
  from rlrep.precision import PrecisionChoice
  from rlrep.replicator import ReplicatorSpec


def check_replicas_available(spec: str) -> ReplicatorSpec:
  """Parses `--replicas` (the one place `rlrep train` does) and refuses, with ValueError like every other bad
  input, a spec this machine cannot provide (inprocess and local modes); returns the parsed spec."""
  import rlrep  # the stack check runs here, with its own advice
  import tensorflow as tf
  from rlrep import replicator

  parsed = rlrep.parse_spec(spec)
  if parsed.kind == "gpu":
    gpus = tf.config.list_physical_devices("GPU")
    if len(gpus) < (parsed.count or 1):
      raise ValueError(f"--replicas {spec}: this machine has {len(gpus)} GPU(s). Use cpu or cpu:N here, or run "
                       "the GPU learner where the GPUs are (--mode cluster).")
  elif parsed.kind == "tpu" and parsed.address == "local" and not replicator.tpu_present():
    raise ValueError(f"--replicas {spec}: this host has no TPU. Use cpu or cpu:N here, or --mode cluster to "
                     "run the learner on a TPU slice.")
  elif parsed.kind == "multi_worker":
    replicator.read_tf_config()
  return parsed


def choose_precision(experiment: Experiment) -> PrecisionChoice | None:
  """The precision the learner will compute in when it runs on this machine (inprocess and local modes), and
  why; refuses bfloat16 where this machine would emulate it. None in cluster mode and on an existing Ray cluster
  (--ray-address), where the learner decides on its own devices when it starts (and says so)."""
  if experiment.mode == "cluster" or experiment.ray_address is not None:
    return None
  from rlrep import precision, replicator
  return precision.choose(experiment.agent_config.precision, replicator.device_kind_for_spec(experiment.replicas))


REPLAY_MEMORY_SHARE = 0.8  # of this machine's memory; actors, learner and evaluator need the rest


def check_replay_fits(experiment: Experiment, memory_bytes: int | None = None, where: str = "on this machine") -> None:
  """Refuses a run whose replay, as full as this run can fill it, would not fit in this machine's memory, or in
  `memory_bytes` of memory `where` (e.g. "of the replay's pod"), as the error says.

  The table holds at most `max_replay_size` items and at most one per agent step the run takes.

  >>> from agents.d4pg import D4PGConfig
  >>> big = Experiment(frames=4_000_000, agent_config=D4PGConfig(max_replay_size=2_000_000))
  >>> check_replay_fits(big, memory_bytes=16 * 2**30)
  Traceback (most recent call last):
  ValueError: replay would hold up to 2,000,000 agent steps x 22.2 kB = 44.4 GB, ... at most 619,317 ...
  >>> check_replay_fits(dataclasses.replace(big, frames=200_000), memory_bytes=16 * 2**30)  # 100k steps: fits
  """
  import psutil
  config = experiment.agent_config
  per_step = config.replay_bytes_per_step
  steps = min(config.max_replay_size, experiment.frames // config.action_repeat + 1)
  total = memory_bytes if memory_bytes is not None else psutil.virtual_memory().total
  if steps * per_step > REPLAY_MEMORY_SHARE * total:
    # only this machine's own memory is escaped by running the replay elsewhere
    elsewhere = ", or run the replay where the memory is (--mode cluster)" if memory_bytes is None else ""
    raise ValueError(
        f"replay would hold up to {steps:,d} agent steps x {per_step / 1e3:.1f} kB = {steps * per_step / 1e9:.1f} "
        f"GB, more than {REPLAY_MEMORY_SHARE:.0%} of the {total / 1e9:.1f} GB of memory {where}: lower "
        f"--max-replay-size to at most {int(REPLAY_MEMORY_SHARE * total / per_step):,d} (or --image-size)"
        f"{elsewhere}.")
