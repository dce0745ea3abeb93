"""environments.dmc: dm_env conformance, determinism, specs, cameras, time limits and bad settings (the
wrappers' arithmetic is in test_wrappers.py)."""

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


def test_same_seed_same_actions_give_identical_episodes():
  first, second = (dmc.load("walker-walk", seed=7, **SMALL) for _ in range(2))
  spec = first.action_spec()
  actions = np.random.default_rng(0).uniform(spec.minimum, spec.maximum, (8, *spec.shape)).astype(np.float32)
  episodes = [[env.reset()] + [env.step(action) for action in actions] for env in (first, second)]
  for a, b in zip(*episodes):
    np.testing.assert_array_equal(a.observation["pixels"], b.observation["pixels"])
    assert a.reward == b.reward and a.step_type == b.step_type


def test_different_seeds_give_different_initial_states():
  a = dmc.load("walker-walk", pixels=False, seed=1).reset().observation["features"]
  b = dmc.load("walker-walk", pixels=False, seed=2).reset().observation["features"]
  assert not np.array_equal(a, b)


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
