"""DDPG's presets: the shared rules, each a valid configuration."""

import pytest

from agents.actor_critic import presets as shared
from agents.ddpg import DDPGConfig, presets


@pytest.mark.parametrize("task", ["cartpole-swingup", "cheetah-run", "walker-walk", "finger-spin"])
def test_presets_are_the_shared_rules(task):
  preset = presets.for_task(task)
  assert preset == shared.for_task(task) and "vmax" not in preset
  DDPGConfig(**preset)  # every preset is a valid configuration
  assert presets.for_task(task, {"action_repeat": 4, "batch_size": 64})["samples_per_insert"] == 64 * 4 / 8


def test_the_help_paragraph_names_the_rules_and_that_flags_win():
  text = presets.describe()
  assert "cheetah 4" in text and "others 2" in text and "without vmax" in text and "overrides its preset" in text
