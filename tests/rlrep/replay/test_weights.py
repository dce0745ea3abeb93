"""Weights go learner -> actor through a real one-item Reverb table, with versions and staleness."""

import numpy as np
import pytest
import reverb
import tensorflow as tf

from rlrep import replay


def _weights_server() -> reverb.Server:
  return reverb.Server([replay.weights_table({"kernel": tf.TensorSpec((2, 3), tf.float32),
                                              "steps": tf.TensorSpec((), tf.int32)})])


@pytest.fixture
def client():
  server = _weights_server()
  yield reverb.Client(f"localhost:{server.port}")
  server.stop()


def _params(value):
  return {"kernel": np.full((2, 3), value, np.float32), "steps": np.int32(value)}


def test_round_trip_keeps_values_dtypes_and_version(client):
  replay.WeightPublisher(client).publish(7, _params(1.5))
  weights = replay.WeightClient(client)
  assert weights.update()
  assert weights.version == 7
  np.testing.assert_array_equal(weights.params["kernel"], np.full((2, 3), 1.5, np.float32))
  assert weights.params["steps"].dtype == np.int32 and weights.params["steps"] == 1


def test_nothing_published_yet_does_not_block(client):
  weights = replay.WeightClient(client)
  assert not weights.update()
  assert weights.version is None and weights.params is None


def test_only_the_newest_weights_are_kept_and_staleness_counts_learner_steps(client):
  publisher, weights = replay.WeightPublisher(client), replay.WeightClient(client, update_period=3)
  publisher.publish(100, _params(1))
  assert weights.maybe_update()            # call 0: due
  publisher.publish(150, _params(2))
  publisher.publish(180, _params(3))
  assert not weights.maybe_update()        # calls 1, 2: not due
  assert not weights.maybe_update()
  assert weights.version == 100
  assert weights.maybe_update()            # call 3: due, skips straight to the newest
  assert weights.version == 180 and weights.staleness == 80
  assert weights.params["steps"] == 3
  assert not weights.maybe_update() and weights.staleness == 80  # stays until the next pull
  for _ in range(2):
    weights.maybe_update()
  assert not weights.maybe_update()        # due, nothing new: up to date
  assert weights.staleness == 0


def test_the_period_counts_agent_steps_when_a_call_covers_several(client):
  publisher, weights = replay.WeightPublisher(client), replay.WeightClient(client, update_period=10)
  pulled = []
  for call in range(8):  # rounds of 4 environments: 4 agent steps per call
    publisher.publish(call, _params(call))  # always something new, so every pull changes the weights
    if weights.maybe_update(steps=4):
      pulled.append(call)
  assert pulled == [0, 3, 6]  # first call, then whenever >= 10 steps have passed: 12 steps each time


def test_update_period_must_be_positive(client):
  with pytest.raises(ValueError, match="update_period must be >= 1"):
    replay.WeightClient(client, update_period=0)


def test_weights_travel_by_name_and_other_names_are_refused(client):
  replay.WeightPublisher(client).publish(3, {"steps": np.int32(4), "kernel": np.ones((2, 3), np.float32)})
  weights = replay.WeightClient(client)
  assert weights.wait(should_stop=lambda: False)
  assert sorted(weights.params) == ["kernel", "steps"] and weights.params["steps"] == 4
  with pytest.raises(ValueError, match="kernel is missing; kernels is not a weight of the policy"):
    replay.WeightPublisher(client).publish(4, {"kernels": np.ones((2, 3), np.float32), "steps": np.int32(4)})


def test_publishing_to_a_server_that_is_gone_fails_within_the_timeout(monkeypatch):
  server = _weights_server()
  publisher = replay.WeightPublisher(reverb.Client(f"localhost:{server.port}"))
  publisher.publish(1, _params(1.0))  # the writer is open
  server.stop()
  monkeypatch.setattr(replay.weights, "PUBLISH_TIMEOUT_S", 2.0)
  with pytest.raises(TimeoutError, match="did not take the weights within 2s; is it still running"):
    publisher.publish(2, _params(2.0))
