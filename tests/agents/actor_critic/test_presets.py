"""The shared per-task presets: general rules by domain, derived settings following the user's own, one recipe for
every precision."""

import pytest

from agents.actor_critic import presets
from agents.actor_critic.config import ActorCriticConfig


@pytest.mark.parametrize("task, action_repeat", [("cartpole-swingup", 2), ("cheetah-run", 4), ("reacher-easy", 4),
                                                 ("ball_in_cup-catch", 4), ("walker-walk", 2), ("finger-spin", 2),
                                                 ("humanoid-run", 2), ("quadruped-walk", 2)])
def test_action_repeat_by_domain_and_one_update_per_eight_frames(task, action_repeat):
  preset = presets.for_task(task)
  assert preset["action_repeat"] == action_repeat
  assert preset["samples_per_insert"] == preset["batch_size"] * action_repeat / presets.FRAMES_PER_UPDATE
  assert (preset["learning_rate"], preset["target_update_tau"]) == (3e-4, 0.01)
  ActorCriticConfig(**preset)  # every preset is a valid configuration


def test_given_settings_are_left_out_and_derived_ones_follow_them():
  preset = presets.for_task("cartpole-balance", {"action_repeat": 8, "batch_size": 64, "learning_rate": 1e-4})
  assert not {"action_repeat", "batch_size", "learning_rate"} & set(preset)
  assert preset["samples_per_insert"] == 64 * 8 / presets.FRAMES_PER_UPDATE


def test_an_unknown_task_names_close_matches():
  with pytest.raises(ValueError, match="walker-walk"):
    presets.for_task("walker-wlak")


@pytest.mark.parametrize("task", ["cartpole-swingup", "walker-walk", "cheetah-run", "quadruped-walk"])
def test_one_recipe_for_every_precision(task):
  """Precision changes speed only: every learning setting of a preset is the same whichever is asked for."""
  recipes = [presets.for_task(task, {"precision": precision}) for precision in ("auto", "float32", "bfloat16")]
  assert recipes[0] == recipes[1] == recipes[2] == presets.for_task(task)
  assert recipes[0]["batch_size"] == 256
  assert recipes[0]["samples_per_insert"] == 256 * recipes[0]["action_repeat"] / 8  # one update per 8 frames
  for precision in ("auto", "float32", "bfloat16"):
    ActorCriticConfig(**recipes[0], precision=precision)


def test_the_help_paragraph_names_the_rules_the_agents_own_and_that_flags_win():
  text = presets.describe("Presets", agent_rules=("vmax = 100 x action repeat",))
  assert text.startswith("Presets: action repeat by domain (cheetah 4, reacher 4, ball_in_cup 4, others 2); vmax = ")
  assert "one update per 8 frames" in text and "overrides its preset" in text
