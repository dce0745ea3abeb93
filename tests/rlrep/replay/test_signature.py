"""The step layout: what a writer appends per step and what an item holds, derived from the specs."""

import numpy as np
import pytest
import tree
from dm_env import specs

from rlrep import replay

PIXELS = specs.BoundedArray((4, 4, 9), np.uint8, 0, 255)
ACTION = specs.BoundedArray((2,), np.float32, -1, 1)


def _layout(frame_stack=3, n_step=4):
  return replay.StepLayout.from_specs({"pixels": PIXELS, "proprio": specs.Array((5,), np.float32)}, ACTION,
                                      frame_stack, n_step)


def test_a_step_holds_the_newest_frame_and_an_item_the_stacks_and_n_step_columns():
  layout = _layout()
  step, item = layout.step_signature(), layout.item_signature()
  assert step["observation"]["pixels"].shape == (4, 4, 3) and step["observation"]["proprio"].shape == (5,)
  assert item["observation"]["pixels"].shape == (3, 4, 4, 3) == item["next_observation"]["pixels"].shape
  assert item["observation"]["proprio"].shape == (5,) and item["action"].shape == (2,)
  assert item["reward"].shape == item["discount"].shape == item["valid"].shape == (4,)


def test_column_paths_are_the_step_signature_s_paths():
  paths = {path for path, _ in tree.flatten_with_path(_layout().step_signature())}
  assert set(_layout().column_paths()) == paths


def test_newest_frames_are_the_last_channels_of_a_stacked_observation():
  stacked = np.arange(4 * 4 * 9, dtype=np.uint8).reshape(4, 4, 9)
  newest = _layout().newest_frames({"pixels": stacked, "proprio": np.ones(5, np.float32)})
  np.testing.assert_array_equal(newest["pixels"], stacked[..., 6:])
  np.testing.assert_array_equal(newest["proprio"], np.ones(5))


def test_the_writer_keeps_enough_history_for_items_made_at_an_episode_end():
  assert _layout(frame_stack=3, n_step=4).history_length == 3 + 2 * 4


def test_layout_rejects_a_frame_stack_that_does_not_match_the_environment():
  with pytest.raises(ValueError, match="not a multiple of frame_stack=2"):
    replay.StepLayout.from_specs({"pixels": PIXELS}, ACTION, 2, 3)
  with pytest.raises(ValueError, match="Use frame_stack=1 for state features"):
    replay.StepLayout.from_specs({"features": specs.Array((5,), np.float32)}, ACTION, 3, 3)
