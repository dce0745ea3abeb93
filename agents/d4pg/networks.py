"""D4PG's critic: logits over a fixed categorical support of returns, beside the shared encoder and policy.

>>> import numpy as np
>>> from dm_env import specs
>>> nets = make_networks({"features": specs.Array((5,), np.float32)},
...                      specs.BoundedArray((2,), np.float32, -1, 1), D4PGConfig.for_state_features())
>>> features = nets.encoder({"features": np.zeros((3, 5), np.float32)})
>>> nets.policy(features).shape, nets.critic(features, nets.policy(features)).shape
(TensorShape([3, 2]), TensorShape([3, 51]))
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf
from dm_env import specs

from agents.actor_critic import networks
from agents.d4pg.config import D4PGConfig


def initial_logits(config: D4PGConfig, width_atoms: float = 1.0) -> np.ndarray:
  """Log-probabilities of a Gaussian over the atoms, centred on `critic_initial_value` (clipped into the
  support), `width_atoms` atom spacings wide: the critic's starting belief about every return.

  >>> config = D4PGConfig(vmin=0.0, vmax=10.0, num_atoms=11, critic_initial_value=-5.0)
  >>> probabilities = np.exp(initial_logits(config))
  >>> int(np.argmax(probabilities)), round(float(probabilities.sum()), 6)
  (0, 1.0)
  """
  atoms = np.linspace(config.vmin, config.vmax, config.num_atoms)
  centre = np.clip(config.critic_initial_value, config.vmin, config.vmax)
  logits = -0.5 * ((atoms - centre) / (width_atoms * (atoms[1] - atoms[0]))) ** 2
  return (logits - np.log(np.exp(logits).sum())).astype(np.float32)


class Critic(tf.Module):
  """(features, action) -> logits over the `num_atoms` atoms of the return distribution.

  The output layer's bias starts as the log of a narrow distribution around `critic_initial_value` (see
  the config), so initial values sit near that return, not at the middle of [vmin, vmax].
  """

  def __init__(self, config: D4PGConfig, name: str = "critic"):
    super().__init__(name=name)
    self.atoms = tf.linspace(tf.constant(config.vmin, tf.float32), config.vmax, config.num_atoms)
    with self.name_scope:
      self.layers = networks.layer_norm_mlp(config.hidden_sizes, config.num_atoms, output_bias_initializer=
                                            tf.keras.initializers.Constant(initial_logits(config)))

  def __call__(self, features: tf.Tensor, action: tf.Tensor) -> tf.Tensor:
    x = tf.concat([features, action], axis=-1)
    for layer in self.layers:
      x = layer(x)
    return x

  def expected_value(self, logits: tf.Tensor) -> tf.Tensor:
    return tf.reduce_sum(tf.nn.softmax(logits) * self.atoms, axis=-1)


def make_networks(observation_spec: dict[str, specs.Array], action_spec: specs.BoundedArray,
                  config: D4PGConfig) -> networks.Networks:
  """The shared encoder and policy with D4PG's `Critic`, all built for these specs."""
  return networks.make_networks(observation_spec, action_spec, config, critic=Critic)
