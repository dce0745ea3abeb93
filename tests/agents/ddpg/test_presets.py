"""DDPG's presets: D4PG's rules, less the settings DDPG has not got, each a valid configuration."""

import pytest

from agents.d4pg import presets as d4pg_presets
from agents.ddpg import DDPGConfig, presets


@pytest.mark.parametrize("task", ["cartpole-swingup", "cheetah-run", "walker-walk", "finger-spin"])
def test_presets_are_d4pgs_rules_without_what_ddpg_lacks(task):
  preset = presets.for_task(task)
  assert preset == {name: value for name, value in d4pg_presets.for_task(task).items() if name != "vmax"}
  DDPGConfig(**preset)  # every preset is a valid configuration
  assert presets.for_task(task, {"action_repeat": 4, "batch_size": 64})["samples_per_insert"] == 64 * 4 / 8


def test_the_help_paragraph_names_the_rules_and_that_flags_win():
  text = presets.describe()
  assert "cheetah 4" in text and "others 2" in text and "without vmax" in text and "overrides its preset" in text
