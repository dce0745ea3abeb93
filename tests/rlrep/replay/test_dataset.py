"""From one Reverb item to one transition: stacks rebuilt oldest frame first, n-step sums and products."""

import numpy as np
import pytest
import tensorflow as tf
from dm_env import specs

from rlrep import replay


def _layout():
  return replay.StepLayout.from_specs({"pixels": specs.BoundedArray((2, 2, 6), np.uint8, 0, 255)},
                                      specs.BoundedArray((1,), np.float32, -1, 1), frame_stack=2, n_step=3)


def _item(rewards, discounts, valid):
  frames = tf.constant(np.stack([np.full((2, 2, 3), i, np.uint8) for i in (1, 2)]))  # oldest (1) first
  return {"observation": {"pixels": frames}, "next_observation": {"pixels": frames + 10},
          "action": tf.constant([0.5]), "reward": tf.constant(rewards, tf.float32),
          "discount": tf.constant(discounts, tf.float32), "valid": tf.constant(valid, tf.float32)}


def test_stacks_are_rebuilt_along_channels_oldest_frame_first():
  transition = replay.item_to_transition(_item([1, 1, 1], [1, 1, 1], [1, 1, 1]), _layout(), discount=0.9)
  pixels = transition["observation"]["pixels"].numpy()
  assert pixels.shape == (2, 2, 6)
  np.testing.assert_array_equal(pixels[0, 0], [1, 1, 1, 2, 2, 2])
  np.testing.assert_array_equal(transition["next_observation"]["pixels"].numpy()[0, 0], [11, 11, 11, 12, 12, 12])


def test_n_step_reward_is_the_discounted_sum_and_discount_the_product():
  transition = replay.item_to_transition(_item([1.0, 2.0, 4.0], [1, 1, 1], [1, 1, 1]), _layout(), discount=0.5)
  assert float(transition["reward"]) == pytest.approx(1 + 0.5 * 2 + 0.25 * 4)
  assert float(transition["discount"]) == pytest.approx(0.5 ** 3)


def test_a_termination_stops_bootstrapping_and_padding_steps_add_nothing():
  # step 2 ends the episode (discount 0); the third record is padding (valid 0) with a reward of 0
  transition = replay.item_to_transition(_item([1.0, 2.0, 0.0], [1, 0, 1], [1, 1, 0]), _layout(), discount=0.5)
  assert float(transition["reward"]) == pytest.approx(1 + 0.5 * 2)
  assert float(transition["discount"]) == 0.0


def test_a_wrapped_batch_reaches_python_as_one_tensor_and_unwraps_to_the_same_values():
  dataset = tf.data.Dataset.from_tensors(_item([1, 2, 3], [1, 0.5, 1], [1, 1, 0]))
  plain, wrapped = next(iter(dataset)), next(iter(replay.wrap_batches(dataset)))
  assert len(tf.nest.flatten(plain)) == 6
  assert len(tf.nest.flatten(wrapped, expand_composites=True)) == 1
  unwrapped = tf.function(replay.unwrap_batch)(wrapped)  # where a learner opens it: in its compiled step
  tf.nest.map_structure(np.testing.assert_array_equal, unwrapped, plain)
  assert replay.unwrap_batch(plain) is plain
