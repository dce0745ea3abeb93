"""The actor-side D4PG policy on batches of observations, with published weights and exploration noise."""

import numpy as np
import pytest
from dm_env import specs

from agents.d4pg.acting import PolicyNetwork
from agents.d4pg.config import D4PGConfig

OBSERVATION_SPEC = {"pixels": specs.BoundedArray((12, 12, 6), np.uint8, 0, 255)}
ACTION_SPEC = specs.BoundedArray((2,), np.float32, -1, 1)
CONFIG = D4PGConfig(frame_stack=2, hidden_sizes=(16,), conv_channels=4, feature_dim=8)


def _observations(count, seed=0):
  return {"pixels": np.random.default_rng(seed).integers(0, 256, size=(count, 12, 12, 6), dtype=np.uint8)}


def test_a_batch_gives_the_same_actions_as_one_observation_at_a_time():
  policy = PolicyNetwork(OBSERVATION_SPEC, ACTION_SPEC, CONFIG, sigma=0.0)
  observations, rng = _observations(5), np.random.default_rng(0)
  together = policy(policy.params(), observations, rng)
  alone = np.concatenate([policy(policy.params(), {"pixels": row[None]}, rng) for row in observations["pixels"]])
  assert together.shape == (5, 2) and together.dtype == np.float32
  np.testing.assert_allclose(together, alone, atol=1e-6)


def test_new_params_change_the_actions_and_noise_stays_within_bounds():
  policy = PolicyNetwork(OBSERVATION_SPEC, ACTION_SPEC, CONFIG, sigma=5.0)
  observations, rng = _observations(64), np.random.default_rng(0)
  noisy = policy(policy.params(), observations, rng)
  assert noisy.min() >= -1 and noisy.max() <= 1 and noisy.std() > 0.5
  deterministic = PolicyNetwork(OBSERVATION_SPEC, ACTION_SPEC, CONFIG, sigma=0.0)
  before = deterministic(deterministic.params(), observations, rng)
  shifted = [p + 0.5 for p in deterministic.params()]
  assert not np.allclose(deterministic(shifted, observations, rng), before)


def test_negative_noise_is_refused():
  with pytest.raises(ValueError, match="sigma must be >= 0"):
    PolicyNetwork(OBSERVATION_SPEC, ACTION_SPEC, CONFIG, sigma=-0.1)
