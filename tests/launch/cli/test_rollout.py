"""`rlrep rollout`: random actions on a pixel task, recorded as the agent sees them."""

import imageio.v2 as imageio
import pytest

from launch import cli
from launch.cli import rollout


def test_rollout_writes_a_video_and_a_frame_strip(tmp_path):
  assert cli.main(["rollout", "--task", "cartpole-swingup", "--steps", "12", "--size", "40",
                   "--render-quality", "fast", "--out", str(tmp_path)]) == 0
  frames = imageio.mimread(tmp_path / "rollout.mp4")
  assert len(frames) == 13 and frames[0].shape == (40, 40, 3)
  strip = imageio.imread(tmp_path / "rollout_strip.png")
  assert strip.shape == (40, 40 * 8, 3) and strip.std() > 5


@pytest.mark.parametrize("steps", ["0", "-3"])
def test_rollout_refuses_non_positive_steps(steps, capsys):
  assert cli.main(["rollout", "--steps", steps, "--out", "unused"]) == 2
  assert "steps must be >= 1" in capsys.readouterr().err


def test_frames_count_action_repeats_and_episodes_are_counted_as_they_end(tmp_path, capsys):
  result = rollout.rollout("cartpole-balance", steps=130, out=tmp_path, size=16, render_quality="fast",
                           action_repeat=8, frame_stack=1)
  assert result.frames == 130 * 8 and result.episodes == 1  # a 1,000-frame episode is 125 agent steps
  assert result.video == tmp_path / "rollout.mp4" and len(imageio.mimread(result.video)) == 131
  assert "episode 1: return" in capsys.readouterr().out
