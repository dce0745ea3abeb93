"""The actors' policy on batches of observations, with published weights and exploration noise."""

import numpy as np
import pytest
from dm_env import specs

from agents.actor_critic.acting import Exploration, PolicyNetwork
from agents.actor_critic.config import ActorCriticConfig

OBSERVATION_SPEC = {"pixels": specs.BoundedArray((12, 12, 6), np.uint8, 0, 255)}
ACTION_SPEC = specs.BoundedArray((2,), np.float32, -1, 1)
CONFIG = ActorCriticConfig(frame_stack=2, hidden_sizes=(16,), conv_channels=4, feature_dim=8)


def _observations(count, seed=0):
  return {"pixels": np.random.default_rng(seed).integers(0, 256, size=(count, 12, 12, 6), dtype=np.uint8)}


def test_a_batch_gives_the_same_actions_as_one_observation_at_a_time():
  policy = PolicyNetwork(OBSERVATION_SPEC, ACTION_SPEC, CONFIG)
  observations, rng = _observations(5), np.random.default_rng(0)
  together = policy(policy.params(), observations, rng)
  alone = np.concatenate([policy(policy.params(), {"pixels": row[None]}, rng) for row in observations["pixels"]])
  assert together.shape == (5, 2) and together.dtype == np.float32
  np.testing.assert_allclose(together, alone, atol=1e-6)


def test_new_params_change_the_actions_and_noise_stays_within_bounds():
  policy = PolicyNetwork(OBSERVATION_SPEC, ACTION_SPEC, CONFIG, Exploration(5.0, 5.0, 0))
  observations, rng = _observations(64), np.random.default_rng(0)
  noisy = policy(policy.params(), observations, rng)
  assert noisy.min() >= -1 and noisy.max() <= 1 and noisy.std() > 0.5
  deterministic = PolicyNetwork(OBSERVATION_SPEC, ACTION_SPEC, CONFIG)
  before = deterministic(deterministic.params(), observations, rng)
  shifted = {name: p + 0.5 for name, p in deterministic.params().items()}
  assert not np.allclose(deterministic(shifted, observations, rng), before)


def test_exploration_follows_the_run_frames_from_uniform_to_decaying_noise():
  schedule = Exploration(sigma_start=1.0, sigma=0.1, decay_frames=1000, random_frames=200)
  policy = PolicyNetwork(OBSERVATION_SPEC, ACTION_SPEC, CONFIG, schedule)
  observations, rng = _observations(2000), np.random.default_rng(0)
  deterministic = PolicyNetwork(OBSERVATION_SPEC, ACTION_SPEC, CONFIG)(policy.params(), observations, rng)
  uniform = policy(policy.params(), observations, rng)
  assert abs(uniform.mean()) < 0.05 and 0.55 < uniform.std() < 0.6  # U(-1, 1): std 1/sqrt(3)
  for frames, sigma in ((200, 0.82), (600, 0.46), (5000, 0.1)):
    policy.set_frames(frames)
    assert policy.sigma == pytest.approx(sigma)
    if sigma < 0.5:  # far from the bounds, so clipping leaves the noise's spread intact
      noise = policy(policy.params(), observations, rng) - deterministic
      assert noise.std() == pytest.approx(sigma, rel=0.05)


def test_negative_noise_is_refused():
  with pytest.raises(ValueError, match="exploration noise must be >= 0"):
    PolicyNetwork(OBSERVATION_SPEC, ACTION_SPEC, CONFIG, Exploration(1.0, -0.1, 10))


def test_weights_that_do_not_fit_are_refused_by_name():
  policy = PolicyNetwork(OBSERVATION_SPEC, ACTION_SPEC, CONFIG)
  params = policy.params()
  name = next(iter(params))
  wrong = {**params, name: params[name][..., :1]}
  observations = {"pixels": np.zeros((1, *OBSERVATION_SPEC["pixels"].shape), np.uint8)}
  with pytest.raises(ValueError, match=f"{name} has shape"):
    policy(wrong, observations, np.random.default_rng(0))
