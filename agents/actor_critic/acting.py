"""The actor-side policy of every actor-critic agent here: the encoder and policy networks on the actor's CPU, fed
published weights.

Implements `rlrep.core.Policy`, `policy(params, observations, rng) -> actions` on a batch (one row
per environment): actors pass the newest weights they pulled; the network is only reassigned when those
change. Exploration follows an `Exploration` schedule over the run's frames (uniform random actions first,
then Gaussian noise falling from `sigma_start` to `sigma`), clipped to the action bounds; the evaluation
policy has no exploration.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import tensorflow as tf
from dm_env import specs

from agents.actor_critic.config import ActorCriticConfig
from agents.actor_critic.networks import make_networks
from rlrep import core
from rlrep.core import Params


@dataclasses.dataclass(frozen=True)
class Exploration:
  """Where in the run an actor is decides how it explores (frames summed over all actors).

  >>> schedule = Exploration(sigma_start=1.0, sigma=0.2, decay_frames=1000, random_frames=100)
  >>> schedule.uniform(50), schedule.uniform(100), schedule.sigma_at(500), schedule.sigma_at(5000)
  (True, False, 0.6, 0.2)
  """
  sigma_start: float
  sigma: float
  decay_frames: int
  random_frames: int = 0

  @classmethod
  def from_config(cls, config: ActorCriticConfig) -> "Exploration":
    return cls(config.sigma_start, config.sigma, config.sigma_decay_frames, config.random_frames)

  def uniform(self, frames: int) -> bool:
    """Whether actions are drawn uniformly from the action bounds instead of from the policy."""
    return frames < self.random_frames

  def sigma_at(self, frames: int) -> float:
    if frames >= self.decay_frames:
      return self.sigma
    return self.sigma_start + (self.sigma - self.sigma_start) * frames / self.decay_frames


class PolicyNetwork:
  """The deterministic policy plus optional exploration, evaluated on a batch of observations.

  `exploration=None` is the deterministic evaluation policy. Actors tell the policy how far the run has
  come with `set_frames` (the counter's total); the schedule is read from there.
  """

  def __init__(self, observation_spec: dict[str, specs.Array], action_spec: specs.BoundedArray,
               config: ActorCriticConfig, exploration: Exploration | None = None):
    if exploration is not None and min(exploration.sigma, exploration.sigma_start) < 0:
      raise ValueError(f"exploration noise must be >= 0, got {exploration}.")
    # Actors run on CPUs, where bfloat16 is usually emulated; the weights are float32 either way.
    networks = make_networks(observation_spec, action_spec, dataclasses.replace(config, precision="float32"),
                             critic=None)
    self._variables = networks.policy_variables
    self._action_spec = action_spec
    self._exploration = exploration
    self.frames = 0
    self._loaded: Params | None = None
    batched = {key: tf.TensorSpec((None, *spec.shape), spec.dtype) for key, spec in observation_spec.items()}
    self._act = tf.function(lambda observations: networks.policy(networks.encoder(observations)),
                            input_signature=[batched])  # one trace for every batch size

  def set_frames(self, frames: int) -> None:
    """The run's frames so far (all actors): where the exploration schedule stands."""
    self.frames = frames

  @property
  def sigma(self) -> float:
    """The Gaussian noise now applied (0 without exploration)."""
    return self._exploration.sigma_at(self.frames) if self._exploration else 0.0

  def params(self) -> dict[str, np.ndarray]:
    """The weights loaded now (at construction, this network's own initialisation: actors act with the
    learner's published weights instead)."""
    return {name: variable.numpy() for name, variable in self._variables.items()}

  def __call__(self, params: Params, observations: dict[str, np.ndarray],
               rng: np.random.Generator) -> np.ndarray:
    low, high = self._action_spec.minimum, self._action_spec.maximum
    count = len(next(iter(observations.values())))
    if self._exploration and self._exploration.uniform(self.frames):
      shape = (count, *self._action_spec.shape)
      return rng.uniform(np.broadcast_to(low, shape), np.broadcast_to(high, shape)).astype(self._action_spec.dtype)
    if params is not self._loaded:
      if self._loaded is None:  # weights of another shape would fail later, or silently: say so now
        core.check_params(self.variable_specs(), params, "the weights given to the policy")
      for name, variable in self._variables.items():
        variable.assign(params[name])
      self._loaded = params
    actions = self._act(observations).numpy()
    sigma = self.sigma
    if sigma:
      actions = np.clip(actions + rng.normal(0.0, sigma, size=actions.shape), low, high)
    return actions.astype(self._action_spec.dtype)

  def variable_specs(self) -> dict[str, tf.TensorSpec]:
    return {name: tf.TensorSpec(v.shape, v.dtype) for name, v in self._variables.items()}
