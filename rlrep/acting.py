"""The actor loop: environments -> one batched policy call (current weights + exploration) -> replay writers.

Roles receive what they need (environments, a policy function, a Reverb client); they never know whether
they run as a thread, a local process or a pod.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from typing import Callable, Sequence

import dm_env
import numpy as np

from rlrep import core


def batch(observations: Sequence[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
  """Stacks per-environment observations along a new leading axis, as a `core.Policy` takes them.

  >>> batch([{"x": np.zeros(2)}, {"x": np.ones(2)}])["x"].shape
  (2, 2)
  """
  return {key: np.stack([observation[key] for observation in observations]) for key in observations[0]}


@dataclasses.dataclass
class ActorStats:
  frames: int = 0          # environment frames (agent steps x action repeat), all environments
  steps: int = 0           # agent steps, all environments
  episodes: int = 0
  last_return: float = float("nan")
  last_length: int = 0
  weights_version: int | None = None
  weights_staleness: int = 0
  frames_per_second: float = 0.0


class Actor:
  """Steps `environments` in lockstep with one batched `policy` call per round, each writing to its adder.

  One policy call for several environments is the point: a small conv net costs about as much to call
  once as to evaluate a few observations (benchmarks/actor.py measures it), while each environment still
  renders and writes its own steps. The actor starts from the learner's weights (`weights` must hold a
  publication: `weights.wait(...)` first) and pulls newer ones as `weights.maybe_update` allows.
  """

  def __init__(self, environments: Sequence[dm_env.Environment], policy: core.Policy,
               adders: Sequence[core.Adder], weights: core.VariableSource, *,
               seed: int = 0, episode_callback: Callable[[ActorStats], None] | None = None):
    if not environments or len(environments) != len(adders):
      raise ValueError(f"an actor needs one adder per environment and at least one environment; got "
                       f"{len(environments)} environment(s) and {len(adders)} adder(s).")
    if weights.params is None:
      raise ValueError("an actor acts with the learner's weights and none are published yet: call "
                       "`weights.wait(should_stop)` before making the actor.")
    self._environments = list(environments)
    self._policy = policy
    self._adders = list(adders)
    self._weights = weights
    self._rng = np.random.default_rng(seed)
    self._episode_callback = episode_callback
    self._frames_per_step = getattr(environments[0], "action_repeat", 1)
    count = len(self._environments)
    # None: that environment starts its next episode at the next round, not when the last one ends, so
    # an actor stopped between episodes leaves no reset (nor an adder's first step) behind.
    self._timesteps: list[dm_env.TimeStep | None] = [None] * count
    self._episode_returns, self._episode_lengths = [0.0] * count, [0] * count
    self.stats = ActorStats()

  def run(self, rounds: int | None = None, should_stop: Callable[[], bool] = lambda: False) -> ActorStats:
    """Runs `rounds` rounds (None: until `should_stop()`, asked before each round), each stepping every
    environment once. The next call continues the same episodes."""
    start, start_frames = time.perf_counter(), self.stats.frames
    done = 0
    while (rounds is None or done < rounds) and not should_stop():
      timesteps = [t if t is not None else self._begin_episode(i) for i, t in enumerate(self._timesteps)]
      self._weights.maybe_update(steps=len(self._environments))
      self.stats.weights_version = self._weights.version
      self.stats.weights_staleness = self._weights.staleness
      actions = self._policy(self._weights.params, batch([t.observation for t in timesteps]), self._rng)
      for i, (environment, adder, action) in enumerate(zip(self._environments, self._adders, actions)):
        timestep = environment.step(action)
        adder.observe(action, timestep)
        self._count_step(i, timestep)
        self._timesteps[i] = None if timestep.last() else timestep
      done += 1
    self.stats.frames_per_second = (self.stats.frames - start_frames) / (time.perf_counter() - start)
    return self.stats

  def _count_step(self, i: int, timestep: dm_env.TimeStep) -> None:
    self.stats.steps += 1
    self.stats.frames += self._frames_per_step
    self._episode_returns[i] += float(timestep.reward)
    self._episode_lengths[i] += 1
    if timestep.last():
      self.stats.episodes += 1
      self.stats.last_return, self.stats.last_length = self._episode_returns[i], self._episode_lengths[i]
      logging.info("episode %d: return %.1f, length %d", self.stats.episodes, self.stats.last_return,
                   self.stats.last_length)
      if self._episode_callback:
        self._episode_callback(self.stats)

  def _begin_episode(self, i: int) -> dm_env.TimeStep:
    timestep = self._environments[i].reset()
    self._adders[i].observe_first(timestep)
    self._episode_returns[i], self._episode_lengths[i] = 0.0, 0
    return timestep


class FixedWeights:
  """A `core.VariableSource` holding one set of weights that never changes.

  The evaluator plays each evaluation with the weights it pulled when the evaluation began, so every
  episode of one evaluation judges the same policy.

  >>> weights = FixedWeights({"policy/00/kernel": np.zeros((3, 2))}, version=7)
  >>> weights.maybe_update(steps=100), weights.version, weights.staleness
  (False, 7, 0)
  """

  def __init__(self, params: core.Params, version: int | None):
    self.params, self.version, self.staleness = params, version, 0

  def maybe_update(self, steps: int = 1) -> bool:
    return False

  def update(self) -> bool:
    return False

  def wait(self, should_stop: Callable[[], bool]) -> bool:
    return True
