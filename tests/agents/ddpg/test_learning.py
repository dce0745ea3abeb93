"""The DDPG update: clipped double-Q target, losses, target noise, replication on 2 replicas, exact save/restore."""

import dataclasses
import types

import numpy as np
import pytest
import tensorflow as tf
from dm_env import specs

import rlrep
from agents.ddpg import learning
from agents.ddpg.config import DDPGConfig
from rlrep import testing

OBSERVATION_SPEC = {"pixels": specs.BoundedArray((12, 12, 6), np.uint8, 0, 255)}
ACTION_SPEC = specs.BoundedArray((2,), np.float32, -1, 1)
# float32 pinned: exact comparisons, whatever the machine would choose for "auto".
CONFIG = DDPGConfig(precision="float32",
                    frame_stack=2, batch_size=8, hidden_sizes=(16,), conv_channels=4, feature_dim=8, augment=False,
                    learning_rate=1e-3)


def _batches(count):
  """`count` random transition batches that fit the specs and batch size above."""
  return testing.random_transitions(OBSERVATION_SPEC["pixels"].shape, ACTION_SPEC.shape[0], CONFIG.batch_size, count)


def _constant_heads(critic, values):
  """Makes head i output values[i] whatever its input: zero output kernel, bias values[i]."""
  for head, value in zip(critic.heads, values, strict=True):
    head[-1].kernel.assign(tf.zeros_like(head[-1].kernel))
    head[-1].bias.assign([value])


@pytest.mark.parametrize("heads", [(5.0, 2.0), (-1.0, 3.0)])
def test_the_target_bootstraps_from_the_smaller_target_head_and_both_heads_regress_to_it(heads):
  online_heads = (1.0, 4.0)
  repl = rlrep.make_replicator("cpu:1")
  with repl.scope():
    state = learning.make_state(OBSERVATION_SPEC, ACTION_SPEC, CONFIG, seed=0)
  _constant_heads(state.target_networks.critic, heads)
  _constant_heads(state.networks.critic, online_heads)
  batch = _batches(1)[0]
  target = repl.local_results(repl.run(lambda: learning.td_target(
      state, {"pixels": tf.constant(batch["next_observation"]["pixels"])}, tf.constant(batch["reward"]),
      tf.constant(batch["discount"]), CONFIG)))[0].numpy()
  expected = batch["reward"] + batch["discount"] * min(heads)
  np.testing.assert_allclose(target, expected, rtol=1e-6)
  assert np.any(batch["discount"] == 0)  # a terminal step bootstraps nothing: its target is its reward

  metrics = repl.local_results(repl.function(lambda: learning.update(state, batch, CONFIG))())[0]
  # Both heads' mean squared errors, summed; the policy maximises the smaller online head.
  critic_loss = sum(np.mean((value - expected) ** 2) for value in online_heads)
  assert float(metrics["critic_loss"]) == pytest.approx(critic_loss, rel=1e-5)
  assert float(metrics["policy_loss"]) == pytest.approx(-min(online_heads), rel=1e-5)
  assert float(metrics["target_mean"]) == pytest.approx(expected.mean(), rel=1e-5)


def test_target_noise_is_clipped_and_the_same_however_many_replicas_share_the_batch():
  config = dataclasses.replace(CONFIG, target_noise=1.0, target_noise_clip=0.3)
  state = types.SimpleNamespace(num_steps=tf.constant(7, tf.int64), seed=0)

  def noise(spec):
    repl = rlrep.make_replicator(spec)
    rows = 64 // repl.num_replicas
    parts = repl.local_results(repl.run(lambda: learning.target_noise(state, tf.zeros((rows, 2)), config)))
    return np.concatenate([part.numpy() for part in parts])

  one, two = noise("cpu:1"), noise("cpu:2")
  np.testing.assert_array_equal(one, two)
  assert one.shape == (64, 2) and np.abs(one).max() == pytest.approx(0.3) and one.std() > 0.2
  state.num_steps = tf.constant(8, tf.int64)
  assert not np.array_equal(noise("cpu:1"), one)  # a new draw every step


def test_update_on_two_replicas_matches_one_device():
  report = testing.assert_replicates(lambda: learning.make_state(OBSERVATION_SPEC, ACTION_SPEC, CONFIG, seed=0),
                                     lambda state, batch: learning.update(state, batch, CONFIG), _batches(3),
                                     num_replicas=2, atol=1e-5, rtol=1e-4)
  assert report.steps == 3


def _learner(config, batches, spec="cpu:1"):
  repl = rlrep.make_replicator(spec)
  dataset = repl.distribute_dataset(lambda context: tf.data.Dataset.from_tensor_slices(
      tf.nest.map_structure(lambda *rows: np.stack(rows), *batches)), per_replica=True)
  return learning.Learner(repl, OBSERVATION_SPEC, ACTION_SPEC, config, 0, lambda: iter(dataset))


def _values(learner):
  return [v.numpy() for v in learner.state.variables]


def test_save_restore_then_step_is_bit_identical_to_continuing(tmp_path):
  config = dataclasses.replace(CONFIG, augment=True)
  metrics = testing.assert_resumes_exactly(lambda batches: _learner(config, batches), _batches(4),
                                           str(tmp_path / "ckpt"), _values)
  assert set(metrics) == {"critic_loss", "policy_loss", "q_mean", "target_mean", "reward_mean"}
