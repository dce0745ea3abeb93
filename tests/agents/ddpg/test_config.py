"""DDPG settings: every problem listed at once, what launchers read and the `--help` layout (presets are in
test_presets.py)."""

import argparse
import dataclasses

import pytest

from agents.d4pg import D4PGConfig
from agents.ddpg import DDPGConfig
from launch.cli import options


def test_every_problem_is_listed_at_once():
  with pytest.raises(ValueError) as error:
    DDPGConfig(learning_rate=0.0, sigma=-1.0, target_noise=-0.2, hidden_sizes=(), image_size=8)
  message = str(error.value)
  assert message.startswith("invalid DDPG settings:")
  for field in ("learning_rate", "sigma", "target_noise", "hidden_sizes", "image_size"):
    assert field in message
  with pytest.raises(ValueError, match="exceeds max_replay_size"):
    DDPGConfig(min_replay_size=10, max_replay_size=5)


def test_state_features_are_not_stacked_or_augmented_and_explore_with_constant_noise():
  config = DDPGConfig.for_state_features(batch_size=8)
  assert (config.pixels, config.frame_stack, config.augment, config.batch_size) == (False, 1, False, 8)
  assert config.sigma_start == config.sigma
  with pytest.raises(ValueError, match="use frame_stack=1 with pixels=False"):
    DDPGConfig(pixels=False, frame_stack=3)


def test_it_has_what_launchers_read_of_an_agent_config():
  config = DDPGConfig()
  for name in ("pixels", "image_size", "frame_stack", "action_repeat", "render_quality", "precision",
               "weights_update_period", "max_replay_size", "replay_bytes_per_step", "seed"):
    assert getattr(config, name) == getattr(D4PGConfig(), name), name
  replay = DDPGConfig(batch_size=32, n_step=5, samples_per_insert=None, replay_chunk_length=4).replay
  assert (replay.batch_size, replay.n_step, replay.samples_per_insert, replay.chunk_length) == (32, 5, None, 4)
  assert DDPGConfig(batch_size=32, replay_error_buffer=100).replay.resolved_error_buffer == 100


def test_drqv2_defaults_where_they_differ_from_d4pg():
  config = DDPGConfig()
  assert (config.learning_rate, config.target_update_tau, config.target_noise_clip, config.sigma) == (
      1e-4, 0.01, 0.3, 0.1)
  assert (config.max_gradient_norm, config.saturation_penalty) == (0.0, 0.0)


def test_every_field_is_a_documented_option_in_a_help_section():
  parser = argparse.ArgumentParser()
  options.add_dataclass_options(parser, DDPGConfig, skip=("seed",))  # refuses a field left out of OPTION_GROUPS
  docs = options.attribute_docs(DDPGConfig)
  assert set(docs) == {f.name for f in dataclasses.fields(DDPGConfig)}  # no continuation line read as a field
  assert vars(parser.parse_args(["--target-noise", "0.1", "--no-augment"])) == {"target_noise": 0.1,
                                                                                "augment": False}


# Every default, field for field: runs made with them stay comparable with later ones.
DEFAULTS = {"pixels": True, "image_size": 84, "frame_stack": 3, "action_repeat": 2, "render_quality": "standard",
            "batch_size": 256, "n_step": 3, "discount": 0.99, "learning_rate": 1e-4, "max_gradient_norm": 0.0,
            "target_update_period": 100, "target_update_tau": 0.01, "target_noise": 0.2, "target_noise_clip": 0.3,
            "sigma": 0.1, "sigma_start": 1.0, "sigma_decay_frames": 100_000, "random_frames": 4_000,
            "saturation_penalty": 0.0, "conv_channels": 32, "feature_dim": 50, "hidden_sizes": (256, 256),
            "precision": "auto", "steps_per_call": 1, "augment": True, "samples_per_insert": 32.0,
            "min_replay_size": 1000, "max_replay_size": 1_000_000, "replay_chunk_length": 4,
            "replay_error_buffer": None, "weights_update_period": 100, "seed": 0}


def test_the_defaults_are_drqv2s_where_this_machine_allows():
  assert dataclasses.asdict(DDPGConfig()) == DEFAULTS
  state_features = {**DEFAULTS, "pixels": False, "frame_stack": 1, "augment": False, "sigma_start": 0.1}
  assert dataclasses.asdict(DDPGConfig.for_state_features()) == state_features
