"""The shared learner: augmentation, target updates, and the loop every actor-critic agent's update runs in (several
updates per call, input that ends and restarts, weights for actors, exact save/restore), driven here by a minimal
agent of its own."""

import dataclasses
import logging
import time

import numpy as np
import pytest
import reverb
import tensorflow as tf
from dm_env import specs

import rlrep
from agents.actor_critic import learning, networks
from agents.actor_critic.config import ActorCriticConfig
from rlrep import replay, testing

OBSERVATION_SPEC = {"pixels": specs.BoundedArray((12, 12, 6), np.uint8, 0, 255)}
ACTION_SPEC = specs.BoundedArray((2,), np.float32, -1, 1)
# float32 pinned: exact comparisons, whatever the machine would choose for "auto".
CONFIG = ActorCriticConfig(precision="float32", frame_stack=2, batch_size=8, hidden_sizes=(16,), conv_channels=4,
                           feature_dim=8, target_update_period=2, augment=False)


class _ScalarCritic(tf.Module):
  """(features, action) -> [batch] values: the least critic an agent can bring."""

  def __init__(self, config, name="critic"):
    super().__init__(name=name)
    with self.name_scope:
      self.layers = networks.layer_norm_mlp(config.hidden_sizes, 1)

  def __call__(self, features, action):
    x = tf.concat([features, action], axis=-1)
    for layer in self.layers:
      x = layer(x)
    return x[:, 0]


def _update(state, batch, config):
  """A one-step TD update of the critic and a policy that climbs it: enough of an agent to drive the loop."""
  online, target = state.networks, state.target_networks
  observation, next_observation = learning.augment(state, batch["observation"], batch["next_observation"], config)
  next_features = target.encoder(next_observation)
  td_target = tf.stop_gradient(batch["reward"] + batch["discount"] * target.critic(next_features,
                                                                                   target.policy(next_features)))
  with tf.GradientTape(persistent=True) as tape:
    features = online.encoder(observation)
    critic_loss = tf.reduce_mean((online.critic(features, tf.cast(batch["action"], tf.float32)) - td_target) ** 2)
    fixed_features = tf.stop_gradient(features)
    policy_loss = -tf.reduce_mean(online.critic(fixed_features, online.policy(fixed_features)))
  learning.apply_and_update_targets(state, tape, critic_loss, policy_loss, config)
  return rlrep.all_mean({"critic_loss": critic_loss, "policy_loss": policy_loss,
                         "reward_mean": tf.reduce_mean(batch["reward"])})


def _make_state(observation_spec, action_spec, config, seed):
  return learning.LearnerState(observation_spec, action_spec, config, _ScalarCritic, seed)


class _Learner(learning.Learner):
  make_state = staticmethod(_make_state)
  update_fn = staticmethod(_update)


def _batches(count):
  """`count` random transition batches that fit the specs and batch size above."""
  return testing.random_transitions(OBSERVATION_SPEC["pixels"].shape, ACTION_SPEC.shape[0], CONFIG.batch_size, count)


def _dataset(repl, batches):
  return repl.distribute_dataset(lambda context: tf.data.Dataset.from_tensor_slices(
      tf.nest.map_structure(lambda *rows: np.stack(rows), *batches)), per_replica=True)


def _learner(config, batches, spec="cpu:1", seed=0):
  repl = rlrep.make_replicator(spec)
  dataset = _dataset(repl, batches)
  return _Learner(repl, OBSERVATION_SPEC, ACTION_SPEC, config, seed, lambda: iter(dataset))


def _values(learner):
  return [v.numpy() for v in learner.state.variables]


def test_random_shift_moves_images_by_at_most_the_pad_and_repeats_with_the_seed():
  images = tf.constant(np.arange(2 * 10 * 10, dtype=np.float32).reshape(2, 10, 10, 1))
  seed = tf.constant([3, 7], tf.int64)
  shifted = learning.random_shift(images, seed, pad=2).numpy()
  np.testing.assert_array_equal(shifted, learning.random_shift(images, seed, pad=2).numpy())
  assert shifted.shape == images.shape
  for b in range(2):  # the centre 6x6 of each image appears inside the shifted image at some offset <= 2
    centre = images.numpy()[b, 2:8, 2:8]
    found = [(dy, dx) for dy in range(5) for dx in range(5) if np.array_equal(shifted[b, dy:dy + 6, dx:dx + 6], centre)]
    assert found
  assert not np.array_equal(shifted, learning.random_shift(images, tf.constant([3, 8], tf.int64), pad=2).numpy())


def test_three_steps_per_call_equal_three_single_steps():
  batches = _batches(6)
  single, triple = _learner(CONFIG, batches), _learner(dataclasses.replace(CONFIG, steps_per_call=3), batches)
  for _ in range(3):
    single.step()
  last = triple.step()
  assert triple.num_steps == single.num_steps == 3
  for a, b in zip(_values(single), _values(triple), strict=True):
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
  assert set(last) == {"critic_loss", "policy_loss", "reward_mean"}
  assert last["reward_mean"] == pytest.approx(float(batches[2]["reward"].mean()))  # the third step's batch


def test_a_batch_read_before_the_input_ends_is_trained_on_after_the_restart():
  batches = _batches(4)
  config = dataclasses.replace(CONFIG, steps_per_call=3)
  repl = rlrep.make_replicator("cpu:1")
  inputs = iter([_dataset(repl, batches[:2]), _dataset(repl, batches[2:])])  # the first ends after 2 batches
  learner = _Learner(repl, OBSERVATION_SPEC, ACTION_SPEC, config, 0, lambda: iter(next(inputs)))
  with pytest.raises(StopIteration):
    learner.step()
  assert learner.num_steps == 0  # nothing trained on a partial call
  learner.restart_input()
  learner.step()
  assert learner.num_steps == 3


@pytest.mark.parametrize("spec", ["cpu:1", "cpu:2"])
def test_policy_params_are_the_current_encoder_and_policy_weights(spec):
  learner = _learner(CONFIG, _batches(2), spec)
  before = learner.policy_params()
  learner.step()
  after = learner.policy_params()
  variables = learner.state.networks.policy_variables
  assert list(after) == list(variables)
  for name, variable in variables.items():
    np.testing.assert_array_equal(after[name], variable.numpy())
    assert after[name].dtype == variable.dtype.as_numpy_dtype
  assert any(not np.array_equal(before[name], after[name]) for name in variables)  # read after the update


@pytest.mark.parametrize("tau", [0.0, 0.05])
def test_save_restore_then_step_is_bit_identical_to_continuing(tmp_path, tau):
  config = dataclasses.replace(CONFIG, augment=True, target_update_tau=tau)
  testing.assert_resumes_exactly(lambda batches: _learner(config, batches), _batches(4), str(tmp_path / "ckpt"),
                                 _values)


def test_targets_follow_online_networks_only_on_copy_steps():
  learner = _learner(CONFIG, _batches(2))  # target_update_period 2
  state = learner.state
  learner.step()
  assert any(not np.array_equal(t.numpy(), o.numpy()) for t, o in zip(state.target.variables, state.online.variables))
  learner.step()
  for t, o in zip(state.target.variables, state.online.variables):
    np.testing.assert_array_equal(t.numpy(), o.numpy())


def test_with_tau_the_targets_of_encoder_policy_and_critic_move_that_share_of_the_way_each_step():
  learner = _learner(dataclasses.replace(CONFIG, target_update_tau=0.01), _batches(1))
  state = learner.state
  before = [v.numpy() for v in state.target.variables]
  learner.step()
  for old, target, online in zip(before, state.target.variables, state.online.variables, strict=True):
    np.testing.assert_allclose(target.numpy(), 0.01 * online.numpy() + 0.99 * old, atol=1e-7)
  assert {module.name for module in (state.target.encoder, state.target.policy, state.target.critic)} == {
      "encoder", "policy", "critic"}


def test_the_encoder_is_in_the_critic_optimizer_only():
  state = _learner(CONFIG, _batches(1)).state
  assert not set(map(id, state.policy_variables)) & set(map(id, state.critic_variables))
  encoder_ids = {id(v) for v in state.networks.encoder.trainable_variables}
  assert encoder_ids <= set(map(id, state.critic_variables))
  assert {id(v) for v in state.networks.critic.trainable_variables} <= set(map(id, state.critic_variables))


def test_a_long_wait_for_a_sample_is_logged_with_the_replay_state(caplog):
  server = reverb.Server([reverb.Table.queue("replay", 10)])
  watchdog = replay.Watchdog(reverb.Client(f"localhost:{server.port}"), threshold_s=0.3)

  def slow_batches():
    time.sleep(1.5)  # as a learner waits while actors have not filled replay yet
    yield from _batches(1)

  learner = _Learner(rlrep.make_replicator("cpu:1"), OBSERVATION_SPEC, ACTION_SPEC, CONFIG, 0, slow_batches,
                     watchdog=watchdog)
  with caplog.at_level(logging.WARNING, logger="rlrep.replay"):
    learner.step()
  watchdog.close()
  server.stop()
  assert "learner sample has been blocked" in caplog.text and "table replay: 0/10 items" in caplog.text
  assert learner.input_wait_s >= 1.5 and learner.num_steps == 1


def test_the_seed_given_decides_the_initial_weights_and_the_augmentation():
  config = dataclasses.replace(CONFIG, augment=True)
  batches = _batches(2)
  first, again, other = (_learner(config, batches, seed=seed) for seed in (3, 3, 4))
  assert any(not np.array_equal(a, b) for a, b in zip(_values(first), _values(other), strict=True))
  for learner in (first, again):
    learner.step()
    learner.step()
  for a, b in zip(_values(first), _values(again), strict=True):
    np.testing.assert_array_equal(a, b)
