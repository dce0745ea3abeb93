"""D4PG's presets: the shared rules and the value range by reward scale, which follows the user's action repeat."""

import pytest

from agents.actor_critic import presets as shared
from agents.d4pg import D4PGConfig, presets


@pytest.mark.parametrize("task", ["cartpole-swingup", "cheetah-run", "walker-walk", "ball_in_cup-catch"])
def test_the_shared_rules_and_a_value_range_by_reward_scale(task):
  preset = presets.for_task(task)
  assert preset == {**shared.for_task(task), "vmax": 100.0 * preset["action_repeat"]}  # rewards <= 1 per frame
  D4PGConfig(**preset)  # every preset is a valid configuration


def test_the_value_range_follows_a_given_action_repeat_and_a_given_one_wins():
  assert presets.for_task("cartpole-balance", {"action_repeat": 8})["vmax"] == 800.0
  assert "vmax" not in presets.for_task("cartpole-balance", {"vmax": 50.0})


def test_the_help_paragraph_names_the_value_range_rule():
  assert "; vmax = 100 x action repeat; batch 256" in presets.describe()
