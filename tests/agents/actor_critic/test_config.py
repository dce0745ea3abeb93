"""The shared actor-critic settings: every problem listed at once, replay settings derived (and validated) from
them, state-feature defaults, and each field documented in one `--help` section."""

import argparse
import dataclasses

import pytest

from agents.actor_critic.config import ActorCriticConfig, option_groups
from launch.cli import options


def test_every_problem_is_listed_at_once():
  with pytest.raises(ValueError) as error:
    ActorCriticConfig(learning_rate=0.0, sigma=-1.0, hidden_sizes=(), image_size=8, saturation_penalty=-0.1)
  message = str(error.value)
  assert message.startswith("invalid ActorCritic settings:")
  for field in ("learning_rate", "sigma", "hidden_sizes", "image_size", "saturation_penalty"):
    assert field in message


def test_replay_settings_come_from_the_agent_settings_and_are_checked_too():
  replay = ActorCriticConfig(batch_size=32, n_step=5, samples_per_insert=None, replay_chunk_length=4).replay
  assert (replay.batch_size, replay.n_step, replay.samples_per_insert, replay.chunk_length) == (32, 5, None, 4)
  assert ActorCriticConfig(batch_size=32, replay_error_buffer=100).replay.resolved_error_buffer == 100
  with pytest.raises(ValueError, match="exceeds max_replay_size"):
    ActorCriticConfig(min_replay_size=10, max_replay_size=5)


def test_state_features_are_not_stacked_or_augmented_and_explore_with_constant_noise():
  config = ActorCriticConfig.for_state_features(batch_size=8)
  assert (config.pixels, config.frame_stack, config.augment, config.batch_size) == (False, 1, False, 8)
  assert config.sigma_start == config.sigma
  with pytest.raises(ValueError, match="use frame_stack=1 with pixels=False"):
    ActorCriticConfig(pixels=False, frame_stack=3)


def test_every_shared_field_is_documented_once_in_a_help_section_beside_the_agents_critic_settings():
  fields = {f.name for f in dataclasses.fields(ActorCriticConfig)}
  placed = [name for names in ActorCriticConfig.OPTION_GROUPS.values() for name in names]
  assert sorted(placed) == sorted(fields)
  assert option_groups(critic=("num_atoms",))["critic"] == ("num_atoms",)
  assert set(options.attribute_docs(ActorCriticConfig)) == fields  # no continuation line read as a field
  parser = argparse.ArgumentParser()
  options.add_dataclass_options(parser, ActorCriticConfig)  # refuses a field left out of a section
  assert vars(parser.parse_args(["--hidden-sizes", "64,64", "--no-augment"])) == {"hidden_sizes": (64, 64),
                                                                                  "augment": False}
