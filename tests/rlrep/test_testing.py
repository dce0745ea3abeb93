"""rlrep.testing: the replication kit passes correct steps and catches the classic bugs."""

import numpy as np
import pytest
import tensorflow as tf

import rlrep
from rlrep import testing

BATCHES = testing.random_batches({"x": (6,), "y": (1,)}, global_batch=16, steps=3)


def _build(wrap=True):
  def build():
    tf.keras.utils.set_random_seed(0)
    model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="tanh"), tf.keras.layers.Dense(1)])
    model.build((None, 6))
    optimizer = tf.keras.optimizers.Adam(0.05)
    return model, rlrep.wrap_optimizer(optimizer) if wrap else optimizer
  return build


def _loss(model, batch):
  return tf.reduce_mean((model(batch["x"]) - batch["y"]) ** 2)


def correct_step(state, batch):
  model, optimizer = state
  optimizer.minimize(lambda: _loss(model, batch), model.trainable_variables)


def step_without_reduction(state, batch):
  model, optimizer = state
  with tf.GradientTape() as tape:
    loss = _loss(model, batch)
  gradients = tape.gradient(loss, model.trainable_variables)
  optimizer.apply_gradients(zip(gradients, model.trainable_variables), skip_gradients_aggregation=True)


def step_reducing_twice(state, batch):
  model, optimizer = state
  with tf.GradientTape() as tape:
    loss = _loss(model, batch)
  gradients = rlrep.all_mean(tape.gradient(loss, model.trainable_variables))
  optimizer.apply_gradients(zip(gradients, model.trainable_variables))  # Keras sums them once more


def step_with_local_normalisation(state, batch):
  model, optimizer = state
  x = (batch["x"] - tf.reduce_mean(batch["x"], axis=0))  # local mean: differs from the global batch's
  optimizer.minimize(lambda: tf.reduce_mean((model(x) - batch["y"]) ** 2), model.trainable_variables)


@pytest.mark.parametrize("num_replicas", [2, 4, 8])
def test_a_correct_step_replicates(num_replicas):
  report = testing.assert_replicates(_build(), correct_step, BATCHES, num_replicas=num_replicas)
  assert report.steps == 3 and report.max_abs_difference < 1e-5


@pytest.mark.parametrize("build, step", [
    (_build(wrap=False), step_without_reduction),
    (_build(wrap=False), step_reducing_twice),
    (_build(), step_with_local_normalisation),
], ids=["no reduction", "reduced twice", "local statistic"])
def test_the_kit_catches_broken_steps(build, step):
  with pytest.raises(testing.ReplicationMismatch, match="differs from 1-device training") as caught:
    testing.assert_replicates(build, step, BATCHES, num_replicas=4)
  assert "rlrep.wrap_optimizer" in str(caught.value)


def test_a_batch_that_does_not_divide_is_refused():
  batches = testing.random_batches({"x": (6,), "y": (1,)}, global_batch=10, steps=1)
  with pytest.raises(ValueError, match="does not divide evenly over 4 replicas"):
    testing.assert_replicates(_build(), correct_step, batches, num_replicas=4)


def test_one_replica_is_not_a_comparison():
  with pytest.raises(ValueError, match="num_replicas must be >= 2"):
    testing.assert_replicates(_build(), correct_step, BATCHES, num_replicas=1)


def test_a_build_without_variables_is_explained():
  with pytest.raises(ValueError, match="build\\(\\) created no variables"):
    testing.assert_replicates(lambda: tf.keras.Sequential([tf.keras.layers.Dense(1)]), correct_step, BATCHES)


def test_per_replica_iterator_checks_the_replica_count():
  repl = rlrep.make_replicator("cpu:2")
  with pytest.raises(ValueError, match="values for 3 replicas; the replicator has 2"):
    testing.per_replica_iterator(repl, [np.zeros(1)] * 3)
