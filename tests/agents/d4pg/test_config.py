"""D4PG settings: every problem listed at once, replay settings derived (and validated) from them."""

import dataclasses

import pytest

from agents.d4pg.config import D4PGConfig


def test_every_problem_is_listed_at_once():
  with pytest.raises(ValueError) as error:
    D4PGConfig(num_atoms=1, vmin=5.0, vmax=1.0, learning_rate=0.0, sigma=-1.0, saturation_penalty=-0.1)
  for field in ("num_atoms", "vmin", "learning_rate", "sigma", "saturation_penalty"):
    assert field in str(error.value)


def test_replay_settings_come_from_the_agent_settings_and_are_checked_too():
  replay = D4PGConfig(batch_size=32, n_step=5, samples_per_insert=None, replay_chunk_length=4).replay
  assert (replay.batch_size, replay.n_step, replay.samples_per_insert, replay.chunk_length) == (32, 5, None, 4)
  assert D4PGConfig(batch_size=32, replay_error_buffer=100).replay.resolved_error_buffer == 100
  with pytest.raises(ValueError, match="exceeds max_replay_size"):
    D4PGConfig(min_replay_size=10, max_replay_size=5)


def test_state_features_are_not_stacked_or_augmented():
  config = D4PGConfig.for_state_features(batch_size=8)
  assert (config.pixels, config.frame_stack, config.augment, config.batch_size) == (False, 1, False, 8)
  with pytest.raises(ValueError, match="use frame_stack=1 with pixels=False"):
    D4PGConfig(pixels=False, frame_stack=3)


# Every default, field for field: runs made with them stay comparable with later ones.
DEFAULTS = {"pixels": True, "image_size": 84, "frame_stack": 3, "action_repeat": 2, "render_quality": "standard",
            "batch_size": 256, "n_step": 3, "discount": 0.99, "num_atoms": 51, "vmin": 0.0, "vmax": 200.0,
            "learning_rate": 1e-4, "max_gradient_norm": 40.0, "target_update_period": 100, "target_update_tau": 0.0,
            "sigma": 0.2, "sigma_start": 1.0, "sigma_decay_frames": 100_000, "random_frames": 4_000,
            "critic_initial_value": 0.0, "saturation_penalty": 0.01, "conv_channels": 32, "feature_dim": 50,
            "hidden_sizes": (256, 256), "precision": "auto", "steps_per_call": 1, "augment": True,
            "samples_per_insert": 32.0, "min_replay_size": 1000, "max_replay_size": 1_000_000,
            "replay_chunk_length": 4, "replay_error_buffer": None, "weights_update_period": 100, "seed": 0}


def test_the_defaults_are_d4pgs():
  assert dataclasses.asdict(D4PGConfig()) == DEFAULTS
  state_features = {**DEFAULTS, "pixels": False, "frame_stack": 1, "augment": False, "sigma_start": 0.2}
  assert dataclasses.asdict(D4PGConfig.for_state_features()) == state_features
