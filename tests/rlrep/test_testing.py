"""rlrep.testing: the replication kit passes correct steps and catches the classic bugs, even under Adam; the agent
config kit passes a config that keeps the launchers' contract and names what a broken one breaks."""

import dataclasses
import json
import pathlib

import numpy as np
import pytest
import tensorflow as tf

import rlrep
from rlrep import testing

BATCHES = testing.random_batches({"x": (6,), "y": (1,)}, global_batch=16, steps=3)


def _build(wrap=True, learning_rate=1e-3):
  def build():
    tf.keras.utils.set_random_seed(0)
    model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="tanh"), tf.keras.layers.Dense(1)])
    model.build((None, 6))
    # Adam at a usual rate: it divides by the gradient's scale, so only the gradients show a wrong reduction.
    optimizer = tf.keras.optimizers.Adam(learning_rate)
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


def step_dividing_twice(state, batch):
  model, optimizer = state  # a loss already divided by the global batch, which wrap_optimizer averages again
  optimizer.minimize(lambda: tf.nn.compute_average_loss((model(batch["x"]) - batch["y"]) ** 2),
                     model.trainable_variables)


def step_with_local_normalisation(state, batch):
  model, optimizer = state
  x = (batch["x"] - tf.reduce_mean(batch["x"], axis=0))  # local mean: differs from the global batch's
  optimizer.minimize(lambda: tf.reduce_mean((model(x) - batch["y"]) ** 2), model.trainable_variables)


@pytest.mark.parametrize("num_replicas", [2, 4, 8])
def test_a_correct_adam_step_replicates(num_replicas):
  report = testing.assert_replicates(_build(), correct_step, BATCHES, num_replicas=num_replicas)
  assert report.steps == 3 and report.max_abs_difference < 1e-5 and report.max_gradient_difference < 1e-5
  assert "kernel" in report.worst_gradient or "bias" in report.worst_gradient


@pytest.mark.parametrize("build, step, cause", [
    (_build(wrap=False), step_without_reduction, "applied different gradients, each its own batch's"),
    (_build(wrap=False), step_reducing_twice, "applied 4x the 1-device gradient: summed where they should be"),
    (_build(wrap=False), correct_step, "applied 4x the 1-device gradient: summed where they should be"),
    (_build(), step_dividing_twice, "applied 1/4 of the 1-device gradient: divided by the replica count"),
    (_build(), step_with_local_normalisation, "a statistic over the local batch"),
], ids=["never reduced", "reduced twice", "summed instead of averaged", "divided twice", "local statistic"])
def test_the_kit_catches_broken_adam_steps_at_the_default_tolerance(build, step, cause):
  with pytest.raises(testing.ReplicationMismatch, match="differs from 1-device training in 3 step") as caught:
    testing.assert_replicates(build, step, BATCHES, num_replicas=4)
  message = str(caught.value)
  assert "gradient of dense" in message and "update 1 of 3: max |difference|" in message, message
  assert cause in message.split("Likely cause: ")[1], message


def test_a_step_that_moves_nothing_fails():
  with pytest.raises(testing.NothingTrained, match="moved no trainable variable in 3 step"):
    testing.assert_replicates(_build(), lambda state, batch: None, BATCHES)


def test_a_step_outside_the_optimizers_is_refused():
  def build():
    return tf.Variable(1.0, aggregation=tf.VariableAggregation.MEAN)

  def step(weight, batch):  # plain SGD by hand: the kit has no optimizer to watch
    with tf.GradientTape() as tape:
      loss = tf.reduce_mean(weight * batch["x"])
    weight.assign_sub(0.1 * tape.gradient(loss, weight))
  with pytest.raises(ValueError, match="applied no gradient through a Keras optimizer"):
    testing.assert_replicates(build, step, BATCHES)


def test_a_difference_outside_the_optimizers_is_reported_as_such():
  def build():
    model, optimizer = _build()()
    return model, optimizer, tf.Variable(0.0, aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)

  def step(state, batch):
    model, optimizer, target_mean = state
    correct_step((model, optimizer), batch)
    target_mean.assign(tf.reduce_mean(batch["y"]))  # the local batch's mean, where one device has the global one
  with pytest.raises(testing.ReplicationMismatch, match="every applied gradient agrees") as caught:
    testing.assert_replicates(build, step, BATCHES)
  assert "variable Variable:0: max |difference|" in str(caught.value)


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


ACROSS_HOSTS = """
import json, sys
import tensorflow as tf
import rlrep
from rlrep import testing
repl = rlrep.make_replicator("multi_worker")  # first: the hosts join before any other TensorFlow op
def build(wrap=rlrep.wrap_optimizer):
  model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
  model.build((None, 3))
  return model, wrap(tf.keras.optimizers.SGD(0.1))
def step(state, batch):
  model, optimizer = state
  optimizer.minimize(lambda: tf.reduce_mean((model(batch["x"]) - batch["y"]) ** 2), model.trainable_variables)
batches = testing.random_batches({"x": (3,), "y": (1,)}, global_batch=8, steps=3, seed=1)
report = testing.assert_replicates(build, step, batches, replicator=repl)
try:  # a plain Keras optimizer sums the hosts' gradients
  testing.assert_replicates(lambda: build(wrap=lambda optimizer: optimizer), step, batches, replicator=repl)
  caught = None
except testing.ReplicationMismatch as mismatch:
  caught = str(mismatch).splitlines()[-1]
print(json.dumps({"replicas": report.num_replicas, "gradient": report.max_gradient_difference, "caught": caught}))
"""


def test_the_kit_checks_a_step_across_two_hosts_and_catches_a_summed_gradient_there():
  """Two processes joined as two hosts (one replica each): each host's replica applies the one-device gradient of
  the global batch, and the kit, run on every host, names the bug of a step that sums the hosts' gradients."""
  outputs = testing.run_hosts(ACROSS_HOSTS, hosts=2, timeout_s=300, cwd=str(pathlib.Path(__file__).parents[2]))
  for output in outputs:
    result = json.loads(output.strip().splitlines()[-1])
    assert result["replicas"] == 2 and result["gradient"] < 1e-5
    assert result["caught"].startswith("Likely cause: the replicas applied 2x the 1-device gradient")


@dataclasses.dataclass(frozen=True)
class _Settings:
  """The least an agent's settings class can be and keep the contract."""
  pixels: bool = True
  action_repeat: int = 2
  precision: str = "auto"
  max_replay_size: int = 100
  weights_update_period: int = 10
  hidden_sizes: tuple[int, ...] = (8,)

  OPTION_GROUPS = {"run": ("pixels", "action_repeat", "precision", "weights_update_period"),
                   "model": ("max_replay_size", "hidden_sizes")}
  EFFICIENCY_SETTINGS = ("precision",)

  @property
  def replay_bytes_per_step(self) -> int:
    return 1024


class TestTheAgentConfigKitPassesAConfigThatKeepsTheContract(testing.AgentConfigTestMixin):
  config_class = _Settings


def test_the_agent_config_kit_names_what_a_config_breaks():
  @dataclasses.dataclass
  class Broken:
    pixels: bool = True
    precision: str = "fp8"
    OPTION_GROUPS = {"run": ("pixels", "pixels", "gone")}
    EFFICIENCY_SETTINGS = ("speed",)

  kit = type("Kit", (testing.AgentConfigTestMixin,), {"config_class": Broken})()
  expected = {"test_it_has_every_setting_launchers_read":
                  "Broken lacks action_repeat, max_replay_size, replay_bytes_per_step, weights_update_period",
              "test_it_is_a_frozen_dataclass": "must be a @dataclasses.dataclass.frozen=True.",
              "test_every_field_is_in_exactly_one_help_section": r"placed twice \['pixels'\], missing \['precision'\], "
                                                                r"unknown \['gone'\]",
              "test_its_efficiency_settings_are_its_fields": r"names no field \['speed'\]"}
  for test, message in expected.items():
    with pytest.raises(AssertionError, match=message):
      getattr(kit, test)()


def test_random_transitions_repeat_with_their_seed_and_fit_the_shapes_asked_for():
  first, again, other = (testing.random_transitions((5, 5, 3), 2, 4, count=3, seed=seed) for seed in (1, 1, 2))
  for a, b in zip(tf.nest.flatten(first), tf.nest.flatten(again), strict=True):
    np.testing.assert_array_equal(a, b)
  assert not np.array_equal(first[0]["action"], other[0]["action"])
  assert not np.array_equal(first[0]["action"], first[1]["action"])  # each batch its own draw
  batch = first[0]
  assert batch["observation"]["pixels"].shape == batch["next_observation"]["pixels"].shape == (4, 5, 5, 3)
  assert batch["observation"]["pixels"].dtype == np.uint8 and batch["action"].shape == (4, 2)
  assert np.abs(batch["action"]).max() <= 1 and 0 <= batch["reward"].min() and batch["reward"].max() <= 2
  assert set(np.concatenate([b["discount"] for b in first]).tolist()) <= {0.0, float(np.float32(0.99 ** 3))}
