"""Per-task presets: general rules by domain and reward scale, derived settings following the user's own."""

import pytest

from agents.d4pg import D4PGConfig, presets


@pytest.mark.parametrize("task, action_repeat", [("cartpole-swingup", 2), ("cheetah-run", 4), ("reacher-easy", 4),
                                                 ("ball_in_cup-catch", 4), ("walker-walk", 2), ("finger-spin", 2),
                                                 ("humanoid-run", 2), ("quadruped-walk", 2)])
def test_action_repeat_by_domain_and_value_range_by_reward_scale(task, action_repeat):
  preset = presets.for_task(task)
  assert preset["action_repeat"] == action_repeat
  assert preset["vmax"] == 100.0 * action_repeat  # rewards <= 1 per frame, discount 0.99
  assert preset["samples_per_insert"] == preset["batch_size"] * action_repeat / presets.FRAMES_PER_UPDATE
  D4PGConfig(**preset)  # every preset is a valid configuration


def test_given_settings_are_left_out_and_derived_ones_follow_them():
  preset = presets.for_task("cartpole-balance", {"action_repeat": 8, "batch_size": 64, "learning_rate": 1e-4})
  assert not {"action_repeat", "batch_size", "learning_rate"} & set(preset)
  assert preset["vmax"] == 800.0 and preset["samples_per_insert"] == 64 * 8 / presets.FRAMES_PER_UPDATE


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
    D4PGConfig(**recipes[0], precision=precision)


def test_the_replay_ratio_follows_a_given_batch():
  preset = presets.for_task("walker-walk", {"batch_size": 128})
  assert "batch_size" not in preset and preset["samples_per_insert"] == 128 * 2 / presets.FRAMES_PER_UPDATE
