"""The adder, through a real Reverb server: sampled transitions equal a naive reference computed from the
episode, each frame is stored once, and blocked inserts end the way they should."""

import threading
import time

import dm_env
import numpy as np
import pytest
import reverb
import tensorflow as tf
from dm_env import specs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rlrep import replay

FRAME = (4, 4, 3)


def _layout(frame_stack, n_step, with_proprio=True):
  observation_spec = {"pixels": specs.BoundedArray(FRAME[:2] + (3 * frame_stack,), np.uint8, 0, 255)}
  if with_proprio:
    observation_spec["proprio"] = specs.Array((2,), np.float32)
  return replay.StepLayout.from_specs(observation_spec, specs.BoundedArray((1,), np.float32, -1, 1),
                                      frame_stack, n_step)


def _episode(length, terminates, rng, episode_id):
  """Frames, proprio, actions, rewards, discounts of one recorded episode (length real steps)."""
  frames = [np.full(FRAME, 10 * episode_id + i, np.uint8) for i in range(length + 1)]
  proprio = [np.array([episode_id, i], np.float32) for i in range(length + 1)]
  actions = [rng.uniform(-1, 1, size=1).astype(np.float32) for _ in range(length)]
  rewards = rng.uniform(0, 1, size=length).astype(np.float32)
  discounts = np.ones(length, np.float32)
  if terminates:
    discounts[-1] = 0.0
  return frames, proprio, actions, rewards, discounts


def _stack(frames, index, k):
  return np.concatenate([frames[max(0, index - j)] for j in reversed(range(k))], axis=-1)


def _reference(episode, k, n, gamma):
  frames, proprio, actions, rewards, discounts = episode
  length = len(actions)
  transitions = []
  for t in range(length):
    m = min(n, length - t)
    total, factor = 0.0, 1.0
    for i in range(m):
      total += factor * rewards[t + i]
      factor *= gamma * discounts[t + i]
    transitions.append({"observation": {"pixels": _stack(frames, t, k), "proprio": proprio[t]},
                        "action": actions[t], "reward": total, "discount": factor,
                        "next_observation": {"pixels": _stack(frames, t + m, k), "proprio": proprio[t + m]}})
  return transitions


def _write(adder, episode, k):
  frames, proprio, actions, rewards, discounts = episode
  observation = lambda i: {"pixels": _stack(frames, i, k), "proprio": proprio[i]}  # noqa: E731
  adder.observe_first(dm_env.restart(observation(0)))
  for i, action in enumerate(actions):
    last = i == len(actions) - 1
    if last and discounts[i] == 0:
      timestep = dm_env.termination(rewards[i], observation(i + 1))
    elif last:
      timestep = dm_env.truncation(rewards[i], observation(i + 1))
    else:
      timestep = dm_env.transition(rewards[i], observation(i + 1))
    adder.observe(action, timestep)


def _queue_server(layout):
  return reverb.Server([reverb.Table.queue(replay.REPLAY_TABLE, 10_000, signature=layout.item_signature())])


def _drain(server, layout, gamma):
  """Every item of the queue table as a transition, keyed by its proprio (episode, t), which is unique."""
  dataset = replay.make_dataset(f"localhost:{server.port}", layout, gamma, batch_size=1, end_after_idle_s=0.5)
  transitions = [tf.nest.map_structure(lambda x: x.numpy()[0], batch) for batch in dataset]
  return {tuple(t["observation"]["proprio"]): t for t in transitions}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lengths=st.lists(st.integers(1, 20), min_size=1, max_size=3), terminates=st.lists(st.booleans(), min_size=3,
       max_size=3), frame_stack=st.integers(1, 4), n_step=st.integers(1, 5), gamma=st.sampled_from([0.9, 0.99, 1.0]),
       chunk_length=st.sampled_from([1, 3, 16]), seed=st.integers(0, 1000))
def test_sampled_transitions_equal_the_naive_reference(lengths, terminates, frame_stack, n_step, gamma, chunk_length,
                                                       seed):
  layout = _layout(frame_stack, n_step)
  rng = np.random.default_rng(seed)
  episodes = [_episode(length, terminates[i], rng, i) for i, length in enumerate(lengths)]
  server = _queue_server(layout)
  try:
    adder = replay.NStepFrameAdder(reverb.Client(f"localhost:{server.port}"), layout, chunk_length=chunk_length)
    for episode in episodes:
      _write(adder, episode, frame_stack)
    expected = [t for episode in episodes for t in _reference(episode, frame_stack, n_step, gamma)]
    assert adder.items_created == len(expected)
    sampled = _drain(server, layout, gamma)
  finally:
    server.stop()
  assert sorted(sampled) == sorted(tuple(t["observation"]["proprio"]) for t in expected)
  for want in expected:
    got = sampled[tuple(want["observation"]["proprio"])]
    for part in ("observation", "next_observation"):
      np.testing.assert_array_equal(got[part]["pixels"], want[part]["pixels"])
      np.testing.assert_array_equal(got[part]["proprio"], want[part]["proprio"])
    np.testing.assert_array_equal(got["action"], want["action"])
    assert got["reward"] == pytest.approx(want["reward"], rel=1e-5, abs=1e-6)
    assert got["discount"] == pytest.approx(want["discount"], rel=1e-5, abs=1e-7)


def test_each_frame_is_stored_once_per_step(tmp_path):
  """Incompressible frames make the checkpoint size a count of stored frames: one per observation."""
  k, n, steps, frame = 3, 3, 60, (32, 32, 3)
  observation_spec = {"pixels": specs.BoundedArray(frame[:2] + (3 * k,), np.uint8, 0, 255)}
  layout = replay.StepLayout.from_specs(observation_spec, specs.Array((1,), np.float32), k, n)
  server = reverb.Server([reverb.Table.queue(replay.REPLAY_TABLE, 10_000, signature=layout.item_signature())],
                         checkpointer=reverb.checkpointers.DefaultCheckpointer(str(tmp_path)))
  client = reverb.Client(f"localhost:{server.port}")
  adder = replay.NStepFrameAdder(client, layout)
  rng = np.random.default_rng(0)
  frames = [rng.integers(0, 256, size=frame, dtype=np.uint8) for _ in range(steps + 1)]
  adder.observe_first(dm_env.restart({"pixels": _stack(frames, 0, k)}))
  for i in range(steps):
    step = dm_env.truncation if i == steps - 1 else dm_env.transition
    adder.observe(np.zeros(1, np.float32), step(0.0, {"pixels": _stack(frames, i + 1, k)}))
  adder.close()
  stored = replay.held_bytes(client)
  server.stop()
  assert adder.items_created == steps
  observations = steps + 1  # each incompressible; the padding copies share a chunk with their original
  frame_bytes = np.prod(frame)
  # One-step chunks (items forced out one by one) measured 1.07 here: the chunking is part of what is tested.
  assert observations * frame_bytes <= stored <= 1.05 * observations * frame_bytes
  naive = steps * 2 * k * frame_bytes  # stacked observation and next observation in every transition
  assert naive / stored > 5


def test_observe_before_observe_first_is_an_error():
  layout = _layout(1, 1)
  server = _queue_server(layout)
  adder = replay.NStepFrameAdder(reverb.Client(f"localhost:{server.port}"), layout)
  with pytest.raises(RuntimeError, match="start each episode with observe_first"):
    adder.observe(np.zeros(1, np.float32), dm_env.transition(0.0, {"pixels": np.zeros((4, 4, 3), np.uint8),
                                                                   "proprio": np.zeros(2, np.float32)}))
  server.stop()


def _blocking_server(layout):
  """A table whose rate limiter lets 2 items in and then waits for samples that never come."""
  limiter = reverb.rate_limiters.SampleToInsertRatio(samples_per_insert=1.0, min_size_to_sample=1, error_buffer=1.0)
  return reverb.Server([reverb.Table(replay.REPLAY_TABLE, reverb.selectors.Uniform(), reverb.selectors.Fifo(), 100,
                                     limiter, signature=layout.item_signature())])


def test_a_rate_limited_insert_waits_past_its_timeout_until_told_to_stop():
  """A blocked insert on a live server is flow control: it outlasts `timeout_s` and ends when the run stops."""
  layout = _layout(1, 1)
  server = _blocking_server(layout)
  started = time.monotonic()
  adder = replay.NStepFrameAdder(reverb.Client(f"localhost:{server.port}"), layout, timeout_s=1.0, chunk_length=1,
                                 should_stop=lambda: time.monotonic() - started > 3.0)
  with pytest.raises(replay.WritingStopped):
    _write(adder, _episode(9, False, np.random.default_rng(0), 0), 1)
  assert 3.0 <= time.monotonic() - started < 5.0
  assert adder.wait_s > 2.5
  adder.close(finish_episode=False)
  server.stop()


def test_an_insert_blocked_when_the_server_dies_fails_after_its_timeout():
  layout = _layout(1, 1)
  server = _blocking_server(layout)
  adder = replay.NStepFrameAdder(reverb.Client(f"localhost:{server.port}"), layout, timeout_s=2.0, chunk_length=1)
  threading.Timer(1.0, server.stop).start()
  started = time.monotonic()
  with pytest.raises(replay.ServerUnavailableError, match="has not answered for 2s"):
    _write(adder, _episode(9, False, np.random.default_rng(0), 0), 1)
  assert 2.0 <= time.monotonic() - started < 8.0
  adder.close(finish_episode=False)
