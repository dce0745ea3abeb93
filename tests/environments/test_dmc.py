"""environments.dmc: dm_env conformance, determinism, wrapper arithmetic and bad input."""

import unittest

import dm_env
import numpy as np
import pytest
from dm_env import test_utils

from environments import dmc

SMALL = dict(size=32, render_quality="fast", time_limit=0.2)  # 8-20 physics steps: episodes end in tests


def _conformance_case(task: str, pixels: bool):
  class Case(test_utils.EnvironmentTestMixin, unittest.TestCase):
    def make_object_under_test(self):
      return dmc.load(task, pixels=pixels, seed=1, **(SMALL if pixels else dict(time_limit=0.2)))

    def make_action_sequence(self):
      for _ in range(25):  # crosses at least two episode ends (4-10 agent steps per episode)
        yield self.make_action()

  Case.__name__ = f"Conformance_{task.replace('-', '_')}_{'pixels' if pixels else 'state'}"
  return Case


for _task in ("cartpole-swingup", "walker-walk", "quadruped-walk"):
  for _pixels in (True, False):
    _case = _conformance_case(_task, _pixels)
    globals()[_case.__name__] = _case
del _case


def _actions(env, count, seed=0):
  spec = env.action_spec()
  rng = np.random.default_rng(seed)
  return [rng.uniform(spec.minimum, spec.maximum).astype(np.float32) for _ in range(count)]


def _run(env, actions):
  timesteps = [env.reset()]
  timesteps += [env.step(a) for a in actions]
  return timesteps


def test_pixel_observation_spec_is_uint8_channels_last_stacked():
  env = dmc.load("cheetah-run", size=48, frame_stack=4, render_quality="fast")
  spec = env.observation_spec()["pixels"]
  assert spec.shape == (48, 48, 12) and spec.dtype == np.uint8
  assert spec.minimum == 0 and spec.maximum == 255
  assert env.reset().observation["pixels"].shape == (48, 48, 12)


def test_same_seed_same_actions_give_identical_episodes():
  first, second = (dmc.load("walker-walk", seed=7, **SMALL) for _ in range(2))
  actions = _actions(first, 8)
  for a, b in zip(_run(first, actions), _run(second, actions)):
    np.testing.assert_array_equal(a.observation["pixels"], b.observation["pixels"])
    assert a.reward == b.reward and a.step_type == b.step_type


def test_different_seeds_give_different_initial_states():
  a = dmc.load("walker-walk", pixels=False, seed=1).reset().observation["features"]
  b = dmc.load("walker-walk", pixels=False, seed=2).reset().observation["features"]
  assert not np.array_equal(a, b)


def test_action_repeat_sums_rewards_multiplies_discounts_and_stops_at_episode_end():
  repeated = dmc.load("cartpole-balance", pixels=False, action_repeat=3, seed=3, time_limit=0.08)
  raw = dmc.load("cartpole-balance", pixels=False, action_repeat=1, seed=3, time_limit=0.08)
  actions = _actions(repeated, 4)
  raw_steps = [raw.reset()]
  for action in (a for a in actions for _ in range(3)):
    raw_steps.append(raw.step(action))
    if raw_steps[-1].last():
      break
  physics_steps = len(raw_steps) - 1
  assert physics_steps % 3 != 0, "the test needs an episode end inside an action repeat"
  chunks = [raw_steps[i:i + 3] for i in range(1, len(raw_steps), 3)]
  repeated_steps = _run(repeated, actions[:len(chunks)])
  for agent_step, chunk in zip(repeated_steps[1:], chunks, strict=True):
    assert agent_step.reward == pytest.approx(sum(t.reward for t in chunk))
    assert agent_step.discount == pytest.approx(np.prod([t.discount for t in chunk]))
    np.testing.assert_array_equal(agent_step.observation["features"], chunk[-1].observation["features"])
  assert repeated_steps[-1].last() and raw_steps[-1].last()
  assert repeated_steps[-1].discount == 1.0  # a time limit is a truncation: bootstrapping continues


def test_frame_stack_matches_hand_built_stack_with_repetition_at_episode_start():
  stacked = dmc.load("cartpole-swingup", frame_stack=3, seed=5, **SMALL)
  single = dmc.load("cartpole-swingup", frame_stack=1, seed=5, **SMALL)
  actions = _actions(stacked, 24)  # 10 agent steps per episode: crosses into later episodes
  frames = [t.observation["pixels"] for t in _run(single, actions)]
  episode_start = 0
  for t, timestep in enumerate(_run(stacked, actions)):
    if timestep.first():
      episode_start = t
    expected = np.concatenate([frames[max(episode_start, t - k)] for k in (2, 1, 0)], axis=-1)
    np.testing.assert_array_equal(timestep.observation["pixels"], expected)
  assert episode_start > 0, "the episode boundary was not crossed"


def test_proprio_adds_state_vector_beside_pixels():
  env = dmc.load("walker-walk", proprio=True, **SMALL)
  observation = env.reset().observation
  assert set(observation) == {"pixels", "proprio"}
  assert observation["proprio"].shape == env.observation_spec()["proprio"].shape == (24,)


def test_out_of_range_actions_are_clipped_to_the_spec():
  clipped, explicit = (dmc.load("cartpole-balance", pixels=False, seed=0) for _ in range(2))
  clipped.reset(), explicit.reset()
  big = clipped.step(np.array([5.0], np.float32)).observation["features"]
  at_bound = explicit.step(np.array([1.0], np.float32)).observation["features"]
  np.testing.assert_array_equal(big, at_bound)


@pytest.mark.parametrize("action, message", [
    (np.array([np.nan], np.float32), "NaN or inf"),
    (np.zeros(3, np.float32), "shape"),
])
def test_malformed_actions_raise(action, message):
  env = dmc.load("cartpole-balance", pixels=False)
  env.reset()
  with pytest.raises(ValueError, match=message):
    env.step(action)


def test_action_spec_is_float32_with_task_bounds():
  spec = dmc.load("walker-walk", pixels=False).action_spec()
  assert spec.dtype == np.float32 and spec.shape == (6,)
  np.testing.assert_array_equal(spec.minimum, -1.0)


def test_default_camera_follows_the_literature():
  assert dmc.default_camera("quadruped") == 2
  assert dmc.default_camera("walker") == 0


@pytest.mark.parametrize("kwargs, message", [
    (dict(name="walker-wlak"), "Did you mean walker-walk"),
    (dict(name="walkr-walk"), "domain one of"),
    (dict(name="walker"), "Unknown task"),
    (dict(name="walker-walk", size=0), "size must be"),
    (dict(name="walker-walk", size=100_000), "size must be"),
    (dict(name="walker-walk", frame_stack=0), "frame_stack must be >= 1"),
    (dict(name="walker-walk", action_repeat=0), "action_repeat must be >= 1"),
    (dict(name="walker-walk", render_quality="ultra"), "render_quality='ultra' is unknown"),
    (dict(name="walker-walk", camera=9), "camera id 9 is out of range"),
    (dict(name="walker-walk", camera="overhead"), "camera 'overhead' is not in this model"),
    (dict(name="walker-walk", time_limit=0), "time_limit must be positive"),
])
def test_bad_settings_raise_value_error_naming_the_problem(kwargs, message):
  with pytest.raises(ValueError, match=message):
    dmc.load(**kwargs)


def test_the_default_time_limit_is_the_episode_load_keeps_and_a_multiple_of_it_plays_that_much_longer():
  seconds, steps = dmc.default_time_limit("cartpole-balance")
  assert (seconds, steps) == (10.0, 1000)

  def agent_steps(**kwargs):
    env, count = dmc.load("cartpole-balance", pixels=False, action_repeat=8, seed=0, **kwargs), 0
    timestep = env.reset()
    while not timestep.last():
      timestep, count = env.step(np.zeros(1, np.float32)), count + 1
    return count

  assert agent_steps() == 125
  assert agent_steps(time_limit=3 * seconds) == 375


def test_camera_by_name_is_accepted():
  env = dmc.load("quadruped-walk", camera="egocentric", **SMALL)
  assert isinstance(env.reset(), dm_env.TimeStep)
