"""D4PG settings: the contract launchers rely on, its own problems after the shared ones, its defaults, its `--help`."""

import argparse
import dataclasses

import pytest

from agents.d4pg.config import D4PGConfig
from launch.cli import options
from rlrep import testing


class TestD4PGConfigKeepsTheAgentConfigContract(testing.AgentConfigTestMixin):
  config_class = D4PGConfig


def test_every_problem_is_listed_at_once():
  with pytest.raises(ValueError) as error:
    D4PGConfig(num_atoms=1, vmin=5.0, vmax=1.0, learning_rate=0.0, sigma=-1.0, saturation_penalty=-0.1)
  message = str(error.value)
  assert message.startswith("invalid D4PG settings:")
  for field in ("num_atoms", "vmin", "learning_rate", "sigma", "saturation_penalty"):
    assert field in message


def test_every_field_is_a_documented_option_in_a_help_section():
  parser = argparse.ArgumentParser()
  options.add_dataclass_options(parser, D4PGConfig)  # refuses a field left out of OPTION_GROUPS
  docs = options.attribute_docs(D4PGConfig)
  assert set(docs) == {f.name for f in dataclasses.fields(D4PGConfig)}  # no continuation line read as a field
  assert D4PGConfig.OPTION_GROUPS["critic"] == ("num_atoms", "vmin", "vmax", "critic_initial_value")
  assert vars(parser.parse_args(["--vmax", "400", "--no-augment"])) == {"vmax": 400.0, "augment": False}


# Every default, field for field: runs made with them stay comparable with later ones.
DEFAULTS = {"pixels": True, "image_size": 84, "frame_stack": 3, "action_repeat": 2, "render_quality": "standard",
            "batch_size": 256, "n_step": 3, "discount": 0.99, "num_atoms": 51, "vmin": 0.0, "vmax": 200.0,
            "learning_rate": 1e-4, "max_gradient_norm": 40.0, "target_update_period": 100, "target_update_tau": 0.0,
            "sigma": 0.2, "sigma_start": 1.0, "sigma_decay_frames": 100_000, "random_frames": 4_000,
            "critic_initial_value": 0.0, "saturation_penalty": 0.01, "conv_channels": 32, "feature_dim": 50,
            "hidden_sizes": (256, 256), "precision": "auto", "steps_per_call": 1, "augment": True,
            "samples_per_insert": 32.0, "min_replay_size": 1000, "max_replay_size": 1_000_000,
            "replay_chunk_length": 4, "replay_error_buffer": None, "weights_update_period": 100}


def test_the_defaults_are_d4pgs():
  assert dataclasses.asdict(D4PGConfig()) == DEFAULTS
  state_features = {**DEFAULTS, "pixels": False, "frame_stack": 1, "augment": False, "sigma_start": 0.2}
  assert dataclasses.asdict(D4PGConfig.for_state_features()) == state_features
