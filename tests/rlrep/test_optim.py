"""rlrep.wrap_optimizer: one average of the gradients, never two."""

import numpy as np
import pytest
import tensorflow as tf

import rlrep
from rlrep import testing


def _replica_gradients(count, size=5):
  return np.random.default_rng(count).normal(size=(count, size)).astype(np.float32)


@pytest.mark.parametrize("count", [1, 2, 4, 8])
@pytest.mark.parametrize("make_optimizer", [lambda: tf.keras.optimizers.SGD(0.5),
                                            lambda: tf.keras.optimizers.Adam(0.01)])
def test_update_equals_a_hand_averaged_single_device_update(count, make_optimizer):
  gradients = _replica_gradients(count)
  initial = np.linspace(-1, 1, gradients.shape[1]).astype(np.float32)
  repl = rlrep.make_replicator(f"cpu:{count}")
  with repl.scope():
    weights = tf.Variable(initial)
    optimizer = rlrep.wrap_optimizer(make_optimizer())
  step = repl.function(lambda g: optimizer.apply_gradients([(g, weights)]), steps_per_call=3)
  step(testing.per_replica_iterator(repl, list(gradients)))

  reference_weights = tf.Variable(initial)
  reference = make_optimizer()
  for _ in range(3):
    reference.apply_gradients([(tf.constant(gradients.mean(axis=0)), reference_weights)])
  for copy in repl.strategy.experimental_local_results(weights):
    np.testing.assert_allclose(copy.numpy(), reference_weights.numpy(), rtol=1e-5, atol=1e-6)


def test_a_plain_keras_optimizer_would_sum_which_is_why_the_wrapper_exists():
  repl = rlrep.make_replicator("cpu:4")
  with repl.scope():
    weights = tf.Variable(0.0)
    plain = tf.keras.optimizers.SGD(1.0)
  repl.function(lambda: plain.apply_gradients([(tf.constant(1.0), weights)]))()
  assert weights.numpy() == pytest.approx(-4.0)  # summed over 4 replicas; wrap_optimizer gives -1.0


def test_minimize_returns_the_replica_loss_and_applies_the_mean_gradient():
  repl = rlrep.make_replicator("cpu:2")
  with repl.scope():
    weight = tf.Variable(3.0)
    optimizer = rlrep.wrap_optimizer(tf.keras.optimizers.SGD(0.1))
  scale = lambda: tf.cast(rlrep.replica_id() + 1, tf.float32)  # replica 0 loss w^2, replica 1 loss 2 w^2
  losses = repl.local_results(repl.function(lambda: optimizer.minimize(lambda: scale() * weight ** 2, [weight]))())
  assert [float(x) for x in losses] == [9.0, 18.0]
  assert weight.numpy() == pytest.approx(3.0 - 0.1 * (6.0 + 12.0) / 2)


def test_wrapped_optimizer_checkpoints_its_state(tmp_path):
  repl = rlrep.make_replicator("cpu:2")
  with repl.scope():
    weight = tf.Variable(1.0)
    optimizer = rlrep.wrap_optimizer(tf.keras.optimizers.Adam(0.1))
  repl.function(lambda: optimizer.apply_gradients([(tf.constant(1.0), weight)]))()
  path = tf.train.Checkpoint(optimizer=optimizer, weight=weight).save(str(tmp_path / "ckpt"))
  names = [name for name, _ in tf.train.list_variables(path)]
  assert any("optimizer/optimizer" in n and "iteration" in n for n in names), names


def test_wrapping_twice_is_refused():
  with pytest.raises(ValueError, match="average gradients twice"):
    rlrep.wrap_optimizer(rlrep.wrap_optimizer(tf.keras.optimizers.SGD(0.1)))


def test_all_none_gradients_are_a_clear_error():
  optimizer = rlrep.wrap_optimizer(tf.keras.optimizers.SGD(0.1))
  with pytest.raises(ValueError, match="every gradient is None"):
    optimizer.apply_gradients([(None, tf.Variable(1.0))])


def test_apply_in_cross_replica_context_is_refused():
  repl = rlrep.make_replicator("cpu:2")
  with repl.scope():
    weight = tf.Variable(1.0)
    optimizer = rlrep.wrap_optimizer(tf.keras.optimizers.SGD(0.1))
    with pytest.raises(rlrep.ReplicaContextError, match="inside the step_fn"):
      optimizer.apply_gradients([(tf.constant(1.0), weight)])
