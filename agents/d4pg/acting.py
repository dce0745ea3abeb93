"""Actor-side D4PG policy: the encoder and policy networks on the actor's CPU, fed published weights.

Implements rlrep's `PolicyFn` protocol, `policy(params, observations, rng) -> actions` on a batch (one row
per environment): actors pass the newest weights they pulled; the network is only reassigned when those
change. Exploration adds Gaussian noise (`sigma`) and clips to the action bounds; evaluation uses
`sigma=0`, the deterministic policy.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import tensorflow as tf
from dm_env import specs

from agents.d4pg.config import D4PGConfig
from agents.d4pg.networks import make_networks


class PolicyNetwork:
  """The deterministic policy plus optional Gaussian exploration noise, evaluated on a batch of observations."""

  def __init__(self, observation_spec: dict[str, specs.Array], action_spec: specs.BoundedArray,
               config: D4PGConfig, sigma: float):
    if sigma < 0:
      raise ValueError(f"sigma must be >= 0, got {sigma}.")
    tf.keras.utils.set_random_seed(config.seed)  # same initial weights as the learner's online networks
    networks = make_networks(observation_spec, action_spec, config)
    self._variables = networks.policy_variables
    self._action_spec = action_spec
    self._sigma = sigma
    self._loaded: Sequence[np.ndarray] | None = None
    batched = {key: tf.TensorSpec((None, *spec.shape), spec.dtype) for key, spec in observation_spec.items()}
    self._act = tf.function(lambda observations: networks.policy(networks.encoder(observations)),
                            input_signature=[batched])  # one trace for every batch size

  def params(self) -> list[np.ndarray]:
    """The current weights (at construction: the learner's initial weights, from the same seed)."""
    return [v.numpy() for v in self._variables]

  def __call__(self, params: Sequence[np.ndarray], observations: dict[str, np.ndarray],
               rng: np.random.Generator) -> np.ndarray:
    if params is not self._loaded:
      for variable, value in zip(self._variables, params, strict=True):
        variable.assign(value)
      self._loaded = params
    actions = self._act(observations).numpy()
    if self._sigma:
      actions = np.clip(actions + rng.normal(0.0, self._sigma, size=actions.shape), self._action_spec.minimum,
                        self._action_spec.maximum)
    return actions.astype(self._action_spec.dtype)

  def variable_specs(self) -> list[tf.TensorSpec]:
    return [tf.TensorSpec(v.shape, v.dtype) for v in self._variables]
