"""The networks every actor-critic agent here shares: an observation encoder and a deterministic policy; the agent
brings its critic.

The encoder is the DMC tech report's: uint8 pixels scaled on the device, two 3x3 conv layers (32 channels,
the first with stride 2), then FC-`feature_dim` + LayerNorm + tanh. In state mode the same FC + LN + tanh
head sits directly on the features. Only the critic's loss trains the encoder; the policy reads its output
with the gradient stopped.

>>> import numpy as np
>>> from dm_env import specs
>>> nets = make_networks({"features": specs.Array((5,), np.float32)}, specs.BoundedArray((2,), np.float32, -1, 1),
...                      ActorCriticConfig.for_state_features(), critic=None)
>>> features = nets.encoder({"features": np.zeros((3, 5), np.float32)})
>>> features.shape, nets.policy(features).shape
(TensorShape([3, 50]), TensorShape([3, 2]))
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np
import tensorflow as tf
from dm_env import specs

from agents.actor_critic.config import ActorCriticConfig


class Encoder(tf.Module):
  """Observation dict -> [batch, feature_dim (+ proprio)] features in (-1, 1)."""

  def __init__(self, observation_spec: dict[str, specs.Array], config: ActorCriticConfig, name: str = "encoder"):
    super().__init__(name=name)
    self._pixels = "pixels" in observation_spec
    if not self._pixels and "features" not in observation_spec:
      raise ValueError(f"the encoder needs 'pixels' or 'features' observations, got {sorted(observation_spec)}.")
    policy = "mixed_bfloat16" if config.precision == "bfloat16" else "float32"
    self._compute_dtype = tf.bfloat16 if config.precision == "bfloat16" else tf.float32
    with self.name_scope:
      if self._pixels:
        self.convs = [tf.keras.layers.Conv2D(config.conv_channels, 3, strides=2, dtype=policy),  # see _first_conv
                      tf.keras.layers.Conv2D(config.conv_channels, 3, strides=1, activation="relu", dtype=policy)]
      self.projection = tf.keras.layers.Dense(config.feature_dim, dtype=policy)
      self.norm = tf.keras.layers.LayerNormalization()

  def __call__(self, observation: dict[str, tf.Tensor]) -> tf.Tensor:
    if self._pixels:
      x = self._first_conv(observation["pixels"])
      for conv in self.convs[1:]:
        x = conv(x)
      x = tf.reshape(x, [tf.shape(x)[0], -1])
    else:
      x = tf.cast(observation["features"], self._compute_dtype)
    features = tf.tanh(self.norm(tf.cast(self.projection(x), tf.float32)))
    if "proprio" in observation:
      features = tf.concat([features, tf.cast(observation["proprio"], tf.float32)], axis=-1)
    return features

  def _first_conv(self, pixels: tf.Tensor) -> tf.Tensor:
    """The first conv layer on pixels scaled to [-0.5, 0.5], computed on the uint8 values as they are.

    conv(x / 255 - 0.5, k) + b == conv(x, k / 255) + (b - 0.5 * sum(k)) for every output, since with 'valid'
    padding each output sees a whole window; the kernel and bias are rescaled instead of every pixel (two
    passes over the batch's pixels fewer). Values 0..255 are exact in bfloat16, and gradients reach the layer's
    own kernel and bias through the rescaling.
    """
    conv = self.convs[0]
    if not conv.built:
      conv.build(pixels.shape)
    kernel = tf.cast(conv.kernel / 255.0, self._compute_dtype)
    bias = tf.cast(conv.bias - 0.5 * tf.reduce_sum(conv.kernel, axis=(0, 1, 2)), self._compute_dtype)
    x = tf.nn.conv2d(tf.cast(pixels, self._compute_dtype), kernel, strides=conv.strides, padding="VALID")
    return tf.nn.relu(tf.nn.bias_add(x, bias))


def layer_norm_mlp(hidden_sizes: tuple[int, ...], outputs: int,
                   output_initializer: str | tf.keras.initializers.Initializer = "glorot_uniform",
                   output_bias_initializer: str | tf.keras.initializers.Initializer = "zeros"
                   ) -> list[tf.keras.layers.Layer]:
  """Acme's LayerNormMLP: Dense + LayerNorm + tanh first (inputs of any scale land in (-1, 1)), then ELU layers."""
  first, *rest = hidden_sizes
  return [tf.keras.layers.Dense(first), tf.keras.layers.LayerNormalization(), tf.keras.layers.Activation("tanh"),
          *(tf.keras.layers.Dense(width, activation="elu") for width in rest),
          tf.keras.layers.Dense(outputs, kernel_initializer=output_initializer,
                                bias_initializer=output_bias_initializer)]


class Policy(tf.Module):
  """Features -> actions within the action spec's bounds (tanh, rescaled).

  The output layer starts near zero (as Acme's D4PG): a policy that starts with large pre-tanh outputs sits
  where tanh is flat, the critic's gradient no longer reaches it, and it stays at an action bound for good.
  Near-zero initialisation alone does not prevent that; the learner can also penalise large pre-tanh outputs
  (`saturation_penalty`).
  """

  def __init__(self, action_spec: specs.BoundedArray, config: ActorCriticConfig, name: str = "policy"):
    super().__init__(name=name)
    self.low = tf.constant(action_spec.minimum, tf.float32)  # the action bounds
    self.high = tf.constant(action_spec.maximum, tf.float32)
    with self.name_scope:
      self.layers = layer_norm_mlp(config.hidden_sizes, int(np.prod(action_spec.shape)),
                                   tf.keras.initializers.VarianceScaling(1e-4))

  def __call__(self, features: tf.Tensor) -> tf.Tensor:
    return self.squash(self.preactivation(features))

  def preactivation(self, features: tf.Tensor) -> tf.Tensor:
    """The policy's output before tanh (where the learner's saturation penalty applies)."""
    x = features
    for layer in self.layers:
      x = layer(x)
    return x

  def squash(self, preactivation: tf.Tensor) -> tf.Tensor:
    return self.low + (tf.tanh(preactivation) + 1.0) * 0.5 * (self.high - self.low)


@dataclasses.dataclass
class Networks:
  encoder: Encoder
  policy: Policy
  critic: tf.Module | None  # the agent's critic; None on actors, which need none

  @property
  def policy_variables(self) -> dict[str, tf.Variable]:
    """What actors need to act, by name: `encoder/00/kernel`, ..., `policy/03/bias`.

    Names are made from the module, the variable's place in it and its own name, not from TensorFlow's
    variable names, which carry per-process layer counters (`dense_7`) and so differ between processes.
    """
    return {f"{module.name}/{index:02d}/{variable.name.split('/')[-1].split(':')[0]}": variable
            for module in (self.encoder, self.policy) for index, variable in enumerate(module.variables)}


def make_networks(observation_spec: dict[str, specs.Array], action_spec: specs.BoundedArray,
                  config: ActorCriticConfig, critic: Callable[[ActorCriticConfig], tf.Module] | None) -> Networks:
  """Builds (creates the variables of) the networks for these specs: the encoder, the policy and
  `critic(config)`, the agent's critic, a module called as `critic(features, action)` (None: no critic, as
  actors need none)."""
  if not isinstance(action_spec, specs.BoundedArray):
    raise ValueError("the policy needs a bounded action spec (it outputs tanh-squashed actions).")
  networks = Networks(Encoder(observation_spec, config), Policy(action_spec, config),
                      critic(config) if critic else None)
  dummy = {key: tf.zeros((1, *spec.shape), spec.dtype) for key, spec in observation_spec.items()}
  features = networks.encoder(dummy)
  actions = networks.policy(features)
  if networks.critic is not None:
    networks.critic(features, actions)
  return networks
