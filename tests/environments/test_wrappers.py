"""environments.wrappers, through the environments `dmc.load` builds: pixel specs, action repeat arithmetic,
frame stacking across episode starts, proprioception beside pixels, and action clipping and checks."""

import numpy as np
import pytest

from environments import dmc

SMALL = dict(size=32, render_quality="fast", time_limit=0.2)  # 8-20 physics steps: episodes end in tests


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
