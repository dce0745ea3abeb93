"""The actor loop against a real dm_control environment and a real Reverb server."""

import numpy as np
import pytest
import reverb
import tensorflow as tf

from environments import dmc
from rlrep import acting, replay


def _environment(seed=0, frame_stack=2):
  return dmc.load("cartpole-balance", size=16, frame_stack=frame_stack, action_repeat=2, render_quality="fast",
                  seed=seed, time_limit=0.2)  # 0.2 s = 20 physics steps = 10 agent steps


def _setup(frame_stack=2, n_step=2):
  environment = _environment(frame_stack=frame_stack)
  layout = replay.StepLayout.from_specs(environment.observation_spec(), environment.action_spec(), frame_stack,
                                        n_step)
  config = replay.ReplayConfig(batch_size=1, samples_per_insert=None, min_replay_size=1, max_replay_size=1000,
                               frame_stack=frame_stack, n_step=n_step)
  server = reverb.Server([replay.replay_table(layout, config),
                          replay.weights_table({"w": tf.TensorSpec((1,), tf.float32)})])
  client = reverb.Client(f"localhost:{server.port}")
  return environment, layout, server, client


def _weights(client, value=0.0, update_period=1000):
  """A weight client holding the learner's first publication, as actors start."""
  replay.WeightPublisher(client).publish(0, {"w": np.full(1, value, np.float32)})
  weights = replay.WeightClient(client, update_period=update_period)
  assert weights.wait(should_stop=lambda: False)
  return weights


def _policy(params, observations, rng):
  """Acts with the published 'weight' plus noise, so tests can see which weights were used."""
  count = len(observations["pixels"])
  assert observations["pixels"].shape == (count, 16, 16, 6)
  return np.clip(params["w"] + rng.normal(0, 0.1, size=(count, 1)), -1, 1).astype(np.float32)


def test_actor_writes_every_step_and_counts_frames_episodes_and_returns():
  environment, layout, server, client = _setup()
  episodes = []
  actor = acting.Actor([environment], _policy, [replay.NStepFrameAdder(client, layout)],
                       _weights(client, update_period=5), seed=1,
                       episode_callback=lambda stats: episodes.append((stats.last_return, stats.last_length)))
  stats = actor.run(rounds=30)
  table_size = client.server_info()[replay.REPLAY_TABLE].current_size
  server.stop()
  assert stats.steps == 30 and stats.frames == 60
  assert stats.episodes == 3 and [length for _, length in episodes] == [10, 10, 10]
  assert all(0 < ret <= 20 for ret, _ in episodes)  # at most 1 per frame, 2 frames per agent step
  assert table_size == 30  # one n-step item per agent step
  assert stats.frames_per_second > 0
  assert stats.weights_version == 0  # the learner's first publication


def test_actor_pulls_published_weights_and_reports_staleness():
  environment, layout, server, client = _setup()
  publisher = replay.WeightPublisher(client)
  publisher.publish(10, {"w": np.full(1, 0.5, np.float32)})
  weights = replay.WeightClient(client, update_period=4)
  actions = []

  def recording_policy(params, observations, rng):
    actions.append(float(params["w"][0]))
    return _policy(params, observations, rng)

  assert weights.wait(should_stop=lambda: False)
  actor = acting.Actor([environment], recording_policy, [replay.NStepFrameAdder(client, layout)], weights)
  actor.run(rounds=4)
  publisher.publish(25, {"w": np.full(1, -0.5, np.float32)})
  stats = actor.run(rounds=4)
  server.stop()
  assert actions == [0.5] * 4 + [-0.5] * 4
  assert stats.weights_version == 25 and stats.weights_staleness == 15


def test_actor_stops_when_asked():
  environment, layout, server, client = _setup()
  actor = acting.Actor([environment], _policy, [replay.NStepFrameAdder(client, layout)],
                       _weights(client))
  calls = iter(range(100))
  stats = actor.run(should_stop=lambda: next(calls) >= 7)
  server.stop()
  assert stats.steps == 7


def test_layout_must_match_the_environment():
  environment = dmc.load("cartpole-balance", size=16, frame_stack=3, render_quality="fast")
  with pytest.raises(ValueError, match="not a multiple of frame_stack=2"):
    replay.StepLayout.from_specs(environment.observation_spec(), environment.action_spec(), 2, 1)


def test_consecutive_runs_continue_the_same_episode():
  environment, layout, server, client = _setup()
  lengths = []
  actor = acting.Actor([environment], _policy, [replay.NStepFrameAdder(client, layout)],
                       _weights(client),
                       episode_callback=lambda stats: lengths.append(stats.last_length))
  for _ in range(7):
    actor.run(rounds=3)
  server.stop()
  assert lengths == [10, 10]  # 21 steps in chunks of 3: two whole 10-step episodes, none cut short


def test_several_environments_share_one_policy_call_per_round_and_write_their_own_episodes():
  environments = [_environment(seed) for seed in (0, 1, 2)]
  _, layout, server, client = _setup()
  batch_sizes, episodes = [], []

  def counting_policy(params, observations, rng):
    batch_sizes.append(len(observations["pixels"]))
    return _policy(params, observations, rng)

  actor = acting.Actor(environments, counting_policy, [replay.NStepFrameAdder(client, layout) for _ in environments],
                       _weights(client),
                       episode_callback=lambda stats: episodes.append(stats.last_length))
  stats = actor.run(rounds=10)
  table_size = client.server_info()[replay.REPLAY_TABLE].current_size
  server.stop()
  assert batch_sizes == [3] * 10
  assert stats.steps == 30 and stats.frames == 60 and stats.episodes == 3 and episodes == [10, 10, 10]
  assert table_size == 30  # every environment wrote its own 10-step episode


def test_an_actor_needs_one_adder_per_environment():
  environment, layout, server, client = _setup()
  with pytest.raises(ValueError, match="one adder per environment"):
    acting.Actor([environment, environment], _policy, [replay.NStepFrameAdder(client, layout)],
                 _weights(client))
  server.stop()


def test_an_actor_starts_from_published_weights_only():
  environment, layout, server, client = _setup()
  weights = replay.WeightClient(client)
  assert not weights.wait(should_stop=lambda: True)  # nothing published: the wait ends on the stop
  with pytest.raises(ValueError, match="none are published yet"):
    acting.Actor([environment], _policy, [replay.NStepFrameAdder(client, layout)], weights)
  server.stop()


class _CountingAdder:
  """Counts what the actor shows an adder (a `core.Adder` that stores nothing)."""

  def __init__(self):
    self.firsts, self.steps = 0, 0

  def observe_first(self, timestep):
    self.firsts += 1

  def observe(self, action, next_timestep):
    self.steps += 1

  def close(self, finish_episode=True):
    pass


def test_the_next_episode_starts_at_the_next_round_not_when_the_last_one_ends():
  environment, _, server, client = _setup()
  adder, episodes = _CountingAdder(), []
  actor = acting.Actor([environment], _policy, [adder], _weights(client),
                       episode_callback=lambda stats: episodes.append(stats.episodes))
  actor.run(should_stop=lambda: len(episodes) == 2)
  assert (adder.firsts, adder.steps) == (2, 20)  # stopped between episodes: no third episode begun
  actor.run(rounds=1)
  server.stop()
  assert (adder.firsts, adder.steps) == (3, 21)


def test_fixed_weights_are_what_the_actor_acts_with_throughout():
  environment, _, server, client = _setup()
  actions = []
  recording_policy = lambda params, observations, rng: actions.append(params["w"][0]) or _policy(  # noqa: E731
      params, observations, rng)
  replay.WeightPublisher(client).publish(5, {"w": np.full(1, 0.5, np.float32)})  # newer weights exist ...
  fixed = acting.FixedWeights({"w": np.full(1, -0.5, np.float32)}, version=1)
  stats = acting.Actor([environment], recording_policy, [_CountingAdder()], fixed).run(rounds=25)
  server.stop()
  assert actions == [-0.5] * 25 and stats.weights_version == 1  # ... and are never pulled
