"""The interfaces every role talks through; launchers and the acting loop depend on these, not on an agent.

The data's way through a run, naming the interface at each hop:

    environment (dm_env) -> Policy -> Adder -> replay server -> Learner.step (replicated update)
        ^                                                          |
        +------ VariableSource <- weights table <- Learner.policy_params

A `Builder` makes each piece for an agent's config and a task; it and the config's `AgentConfig` part are all a
launcher knows of the agent. Weights travel by name (`Params`): a learner and a policy that disagree on names,
shapes or dtypes are refused when the run starts (`check_params`), never mismatched by position.

These are `typing.Protocol`s: an agent satisfies them by having the methods and attributes, no base class needed.

>>> import numpy as np, tensorflow as tf
>>> specs = {"policy/00/kernel": tf.TensorSpec((3, 2), tf.float32)}
>>> check_params(specs, {"policy/00/kernel": np.zeros((3, 2), np.float32)}, "the learner's weights")
>>> check_params(specs, {"policy/00/kernel": np.zeros((2, 3), np.float32)}, "the learner's weights")
Traceback (most recent call last):
ValueError: the learner's weights do not fit the policy: policy/00/kernel has shape (2, 3) ... expects (3, 2) ...
"""

from __future__ import annotations

from typing import Any, Callable, ClassVar, Mapping, Protocol, runtime_checkable

import dm_env
import numpy as np
import reverb
import tensorflow as tf

from rlrep.precision import PrecisionChoice

Params = Mapping[str, np.ndarray]
"""A policy's weights by name, as the learner publishes them and actors load them."""


@runtime_checkable
class AgentConfig(Protocol):
  """An agent's settings, as much of them as launchers read (rlrep.testing.AgentConfigTestMixin checks a class).

  A frozen dataclass: every field is an `rlrep train` option, its help the field's line in the `Attributes:` sections
  of the docstrings of the class and its bases, its `--help` section the `OPTION_GROUPS` entry that names it; an
  experiment saves the fields as JSON and makes the config again from them by keyword.
  """
  __dataclass_fields__: ClassVar[dict[str, Any]]
  OPTION_GROUPS: ClassVar[Mapping[str, tuple[str, ...]]]
  """`--help` section title -> the fields it shows; every field is in exactly one."""
  EFFICIENCY_SETTINGS: ClassVar[tuple[str, ...]]
  """Fields that change how fast a run computes or how replay stores its items, never what it learns: runs that
  differ only in them are the same run."""
  pixels: bool
  """Pixel observations (per-task presets apply) or state features (`Agent.state_features` gives their defaults)."""
  action_repeat: int
  """Environment frames per agent step: how a frame budget becomes agent steps."""
  precision: str
  """What the learner computes in: auto, float32 or bfloat16 (`rlrep.precision.choose`)."""
  max_replay_size: int
  """Replay items (agent steps) kept at most."""
  replay_bytes_per_step: int
  """Replay memory per stored agent step: with `max_replay_size`, whether replay fits a machine."""
  weights_update_period: int
  """Agent steps between an actor's pulls of new weights."""


class Adder(Protocol):
  """Writes an actor's experience to replay, one environment's episodes at a time."""

  def observe_first(self, timestep: dm_env.TimeStep) -> None:
    """The first timestep of an episode."""

  def observe(self, action: np.ndarray, next_timestep: dm_env.TimeStep) -> None:
    """The action taken and the timestep it led to."""

  def close(self, finish_episode: bool = True) -> None:
    """Writes (or, with `finish_episode=False`, drops) what is still pending and frees the writer."""


class VariableSource(Protocol):
  """The actor's side of the weights: the newest published `params`, their `version` (a learner step) and
  how many learner steps behind they were when last pulled (`staleness`)."""
  params: Params | None
  version: int | None
  staleness: int

  def maybe_update(self, steps: int = 1) -> bool:
    """Pulls when due (after `steps` more agent steps); returns whether the weights changed."""

  def update(self) -> bool:
    """Pulls now if anything is published; returns whether the weights changed."""

  def wait(self, should_stop: Callable[[], bool]) -> bool:
    """Blocks until the learner's first publication (True) or until `should_stop()` (False)."""


class Policy(Protocol):
  """`policy(params, observations, rng) -> actions` on a batch (one row per environment)."""

  def __call__(self, params: Params, observations: dict[str, np.ndarray], rng: np.random.Generator) -> np.ndarray:
    ...

  def variable_specs(self) -> dict[str, tf.TensorSpec]:
    """The names, shapes and dtypes `params` must have."""

  def set_frames(self, frames: int) -> None:
    """The run's frames so far, for exploration schedules."""


class Learner(Protocol):
  """Replicated updates from replay, with exact save and restore; `precision` is what its updates compute in
  on its devices, and why (`rlrep.precision.choose`)."""
  num_steps: int
  input_wait_s: float
  precision: PrecisionChoice

  def read_input(self) -> bool:
    """Reads the batches the next `step` trains on, without training; False when replay allowed no sample for the
    input's idle timeout (what was read is kept for the next call). Hosts that train in lockstep read first and
    then agree, through the replicator, whether every one of them can step."""

  def step(self) -> dict[str, float]:
    """One update (or `steps_per_call` of them) on the batches `read_input` read, reading them first if it has
    not; returns scalar metrics. Raises `StopIteration` (or `tf.errors.OutOfRangeError`) when replay allowed no
    sample for the input's idle timeout."""

  def restart_input(self) -> None:
    """A fresh input iterator after one ended on its idle timeout."""

  def policy_params(self) -> Params:
    """The weights actors need, by name."""

  def save(self, path: str) -> str:
    """Writes a checkpoint with prefix `path`; returns what `restore` takes."""

  def restore(self, path: str) -> None:
    ...


class Builder(Protocol):
  """Everything a launcher needs of an agent on one task: `builder = Agent.builder(task, config)`."""
  config: AgentConfig
  observation_spec: dict[str, Any]
  action_spec: Any

  def make_environment(self, seed: int, render_size: int | None = None,
                       time_limit: float | None = None) -> dm_env.Environment:
    """The task as the agent sees it; `render_size` allows larger renders of it (evaluation videos),
    `time_limit` (seconds) longer or shorter episodes than the task's own (diagnostics)."""

  def make_policy(self, evaluation: bool = False) -> Policy:
    """The exploring policy, or the deterministic one for evaluation."""

  def make_tables(self) -> list[reverb.Table]:
    """The replay server's tables: replay and the weights table (see `rlrep.replay.tables`)."""

  def make_adder(self, client: reverb.Client, watchdog: Any = None,
                 should_stop: Callable[[], bool] | None = None) -> Adder:
    ...

  def make_learner(self, replicator: Any, server_address: str, *, seed: int, end_after_idle_s: float | None = None,
                   watchdog: Any = None) -> Learner:
    """The learner, all of whose randomness comes from `seed` (the experiment's: the run has no other)."""


def check_params(specs: Mapping[str, tf.TensorSpec], params: Params, what: str) -> None:
  """Raises ValueError naming every weight that `params` (described as `what`) lacks, adds, or holds with
  another shape or dtype than `specs` says."""
  problems = [f"{name} is missing" for name in specs if name not in params]
  problems += [f"{name} is not a weight of the policy" for name in params if name not in specs]
  for name, spec in specs.items():
    if name in params:
      value = np.asarray(params[name])
      if value.shape != tuple(spec.shape) or value.dtype != spec.dtype.as_numpy_dtype:
        problems.append(f"{name} has shape {value.shape} and dtype {value.dtype}, the policy expects "
                        f"{tuple(spec.shape)} and {spec.dtype.name}")
  if problems:
    raise ValueError(f"{what} do not fit the policy: " + "; ".join(problems))
