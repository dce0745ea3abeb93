"""The shared networks: bounded features, a policy that starts near the middle of its range, actor variables named
the same in every process, and the folded first convolution."""

import numpy as np
import pytest
import tensorflow as tf
from dm_env import specs

from agents.actor_critic.config import ActorCriticConfig
from agents.actor_critic.networks import make_networks

PIXELS = {"pixels": specs.BoundedArray((16, 16, 6), np.uint8, 0, 255)}
ACTION = specs.BoundedArray((3,), np.float32, [-1, 0, -2], [1, 4, 2])
CONFIG = ActorCriticConfig(frame_stack=2, hidden_sizes=(32, 32), conv_channels=4, feature_dim=8)


def _observations(count=6):
  return {"pixels": tf.constant(np.random.default_rng(0).integers(0, 256, (count, 16, 16, 6), dtype=np.uint8))}


def _networks():
  return make_networks(PIXELS, ACTION, CONFIG, critic=None)


def test_features_are_bounded():
  features = _networks().encoder(_observations())
  assert features.shape == (6, 8) and float(tf.reduce_max(tf.abs(features))) <= 1.0


def test_the_untrained_policy_acts_near_the_middle_of_each_action_range():
  networks = _networks()
  actions = networks.policy(networks.encoder(_observations())).numpy()
  # within 2.5% of each range of its middle (a default-initialised output layer lands far off)
  np.testing.assert_allclose(actions, np.broadcast_to([0, 2, 0], actions.shape), atol=0.05)
  far = networks.policy.squash(tf.constant([[50.0, -50.0, 0.0]])).numpy()
  np.testing.assert_allclose(far, [[1, 0, 0]], atol=1e-5)  # squashed into [minimum, maximum]


def test_actors_get_the_encoder_and_policy_variables():
  networks = _networks()
  assert {id(v) for v in networks.policy_variables.values()} == {
      id(v) for v in [*networks.encoder.variables, *networks.policy.variables]}


def test_weight_names_agree_between_networks_built_apart():
  # The second build gets other TensorFlow layer names (dense_7 ...), as another process's networks would.
  first, second = _networks(), _networks()
  assert {v.name for v in first.policy.variables} != {v.name for v in second.policy.variables}
  assert list(first.policy_variables) == list(second.policy_variables)
  assert list(first.policy_variables)[:2] == ["encoder/00/kernel", "encoder/01/bias"]


def test_an_unbounded_action_spec_is_refused():
  with pytest.raises(ValueError, match="bounded action spec"):
    make_networks(PIXELS, specs.Array((3,), np.float32), CONFIG, critic=None)


def test_the_first_convolution_is_the_layer_on_pixels_scaled_to_half_unit_range_with_the_same_gradients():
  """The encoder rescales the first layer's kernel and bias instead of the pixels; values and gradients must
  be those of the layer applied to x / 255 - 0.5."""
  encoder = _networks().encoder
  pixels = _observations()["pixels"]
  conv = encoder.convs[0]
  with tf.GradientTape(persistent=True) as tape:
    folded = encoder._first_conv(pixels)
    scaled = tf.nn.relu(tf.nn.bias_add(
        tf.nn.conv2d(tf.cast(pixels, tf.float32) / 255.0 - 0.5, conv.kernel, strides=2, padding="VALID"), conv.bias))
    weights = tf.random.stateless_normal(folded.shape, seed=[0, 1])  # a loss that weighs every output
    losses = [tf.reduce_sum(weights * output) for output in (folded, scaled)]
  np.testing.assert_allclose(folded.numpy(), scaled.numpy(), atol=1e-5)
  assert float(tf.reduce_mean(tf.cast(scaled > 0, tf.float32))) > 0.2  # some outputs pass the ReLU
  for variable in (conv.kernel, conv.bias):
    np.testing.assert_allclose(*(tape.gradient(loss, variable).numpy() for loss in losses), rtol=1e-4, atol=1e-4)
