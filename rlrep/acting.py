"""The actor loop: environment -> policy (current weights + exploration) -> replay writer.

Roles receive what they need (an environment, a policy function, a Reverb client); they never know whether
they run as a thread, a local process or a pod.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from typing import Callable, Sequence

import dm_env
import numpy as np

from rlrep.replay.adder import NStepFrameAdder
from rlrep.replay.weights import WeightClient

Params = Sequence[np.ndarray]
PolicyFn = Callable[[Params, dict, np.random.Generator], np.ndarray]


@dataclasses.dataclass
class ActorStats:
  frames: int = 0          # environment frames (agent steps x action repeat)
  steps: int = 0
  episodes: int = 0
  last_return: float = float("nan")
  last_length: int = 0
  weights_version: int | None = None
  weights_staleness: int = 0
  frames_per_second: float = 0.0


class Actor:
  """Steps `environment` with `policy(params, observation, rng)`, writing every step to replay.

  Before the learner publishes weights, `initial_params` are used (e.g. the learner's initial weights,
  so early experience comes from the same network family); weights are pulled every `update_period`
  agent steps through `weights`.
  """

  def __init__(self, environment: dm_env.Environment, policy: PolicyFn, adder: NStepFrameAdder,
               weights: WeightClient, initial_params: Params, *, seed: int = 0,
               episode_callback: Callable[[ActorStats], None] | None = None):
    self._environment = environment
    self._policy = policy
    self._adder = adder
    self._weights = weights
    self._params = list(initial_params)
    self._rng = np.random.default_rng(seed)
    self._episode_callback = episode_callback
    self._frames_per_step = getattr(environment, "action_repeat", 1)
    self._timestep: dm_env.TimeStep | None = None  # None: the next run() starts an episode
    self._episode_return, self._episode_length = 0.0, 0
    self.stats = ActorStats()

  def run(self, num_steps: int | None = None, should_stop: Callable[[], bool] = lambda: False) -> ActorStats:
    """Runs `num_steps` agent steps (None: until `should_stop()`); the next call continues the episode."""
    start, start_frames = time.perf_counter(), self.stats.frames
    if self._timestep is None:
      self._begin_episode()
    steps = 0
    while (num_steps is None or steps < num_steps) and not should_stop():
      if self._weights.maybe_update():
        self._params = self._weights.params
      self.stats.weights_version = self._weights.version
      self.stats.weights_staleness = self._weights.staleness
      action = self._policy(self._params, self._timestep.observation, self._rng)
      self._timestep = self._environment.step(action)
      self._adder.observe(action, self._timestep)
      steps += 1
      self.stats.steps += 1
      self.stats.frames += self._frames_per_step
      self._episode_return += float(self._timestep.reward)
      self._episode_length += 1
      if self._timestep.last():
        self.stats.episodes += 1
        self.stats.last_return, self.stats.last_length = self._episode_return, self._episode_length
        logging.info("episode %d: return %.1f, length %d", self.stats.episodes, self._episode_return,
                     self._episode_length)
        if self._episode_callback:
          self._episode_callback(self.stats)
        self._begin_episode()
    self.stats.frames_per_second = (self.stats.frames - start_frames) / (time.perf_counter() - start)
    return self.stats

  def _begin_episode(self) -> None:
    self._timestep = self._environment.reset()
    self._adder.observe_first(self._timestep)
    self._episode_return, self._episode_length = 0.0, 0
