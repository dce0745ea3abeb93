"""DDPG's critic: two scalar Q heads (a twin critic), beside the shared encoder and policy.

Each head is a LayerNorm MLP with one output, Q(features, action); the learner's target takes the smaller of the
two (clipped double Q, as TD3 and DrQ-v2). Only the critic's loss trains the encoder.

>>> import numpy as np
>>> from dm_env import specs
>>> nets = make_networks({"features": specs.Array((5,), np.float32)},
...                      specs.BoundedArray((2,), np.float32, -1, 1), DDPGConfig.for_state_features())
>>> features = nets.encoder({"features": np.zeros((3, 5), np.float32)})
>>> nets.policy(features).shape, nets.critic(features, nets.policy(features)).shape
(TensorShape([3, 2]), TensorShape([3, 2]))
"""

from __future__ import annotations

import tensorflow as tf
from dm_env import specs

from agents.actor_critic import networks
from agents.ddpg.config import DDPGConfig

NUM_HEADS = 2


class TwinCritic(tf.Module):
  """(features, action) -> [batch, 2]: column i is head i's Q value. The heads share no weights and start
  from different random weights, so their errors differ and the smaller one curbs overestimation."""

  def __init__(self, config: DDPGConfig, name: str = "critic"):
    super().__init__(name=name)
    with self.name_scope:
      self.heads = [networks.layer_norm_mlp(config.hidden_sizes, 1) for _ in range(NUM_HEADS)]

  def __call__(self, features: tf.Tensor, action: tf.Tensor) -> tf.Tensor:
    inputs = tf.concat([features, action], axis=-1)
    values = []
    for head in self.heads:
      x = inputs
      for layer in head:
        x = layer(x)
      values.append(x)
    return tf.concat(values, axis=-1)


def make_networks(observation_spec: dict[str, specs.Array], action_spec: specs.BoundedArray,
                  config: DDPGConfig) -> networks.Networks:
  """The shared encoder and policy with a `TwinCritic`, all built for these specs."""
  return networks.make_networks(observation_spec, action_spec, config, critic=TwinCritic)
