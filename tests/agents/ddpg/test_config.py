"""DDPG settings: the contract launchers rely on, its own problems after the shared ones, DrQ-v2's defaults, its
`--help`."""

import argparse
import dataclasses

import pytest

from agents.actor_critic.config import ActorCriticConfig
from agents.ddpg import DDPGConfig
from launch.cli import options
from rlrep import testing


class TestDDPGConfigKeepsTheAgentConfigContract(testing.AgentConfigTestMixin):
  config_class = DDPGConfig


def test_every_problem_is_listed_at_once():
  with pytest.raises(ValueError) as error:
    DDPGConfig(learning_rate=0.0, sigma=-1.0, target_noise=-0.2, hidden_sizes=(), image_size=8)
  message = str(error.value)
  assert message.startswith("invalid DDPG settings:")
  for field in ("learning_rate", "sigma", "target_noise", "hidden_sizes", "image_size"):
    assert field in message
  with pytest.raises(ValueError, match="exceeds max_replay_size"):
    DDPGConfig(min_replay_size=10, max_replay_size=5)


def test_help_gives_drqv2s_values_where_ddpg_says_more_than_the_shared_settings():
  docs, shared = options.attribute_docs(DDPGConfig), options.attribute_docs(ActorCriticConfig)
  assert docs["learning_rate"] == "Adam, policy and critic (DrQ-v2: 1e-4)."
  assert docs["frame_stack"] == shared["frame_stack"] and docs["sigma"] != shared["sigma"]


def test_every_field_is_a_documented_option_in_a_help_section():
  parser = argparse.ArgumentParser()
  options.add_dataclass_options(parser, DDPGConfig)  # refuses a field left out of OPTION_GROUPS
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
            "replay_error_buffer": None, "weights_update_period": 100}


def test_the_defaults_are_drqv2s_where_this_machine_allows():
  assert dataclasses.asdict(DDPGConfig()) == DEFAULTS
  state_features = {**DEFAULTS, "pixels": False, "frame_stack": 1, "augment": False, "sigma_start": 0.1}
  assert dataclasses.asdict(DDPGConfig.for_state_features()) == state_features
