"""Videos and frame strips written from rendered frames, read back."""

import imageio.v2 as imageio
import numpy as np
import pytest

from environments import recording


def _frames(count=12, size=84):
  return [np.full((size, size, 3), 20 * i, np.uint8) for i in range(count)]


@pytest.mark.parametrize("suffix", [".mp4", ".gif"])
def test_a_video_keeps_odd_sizes_and_every_distinct_frame(tmp_path, suffix):
  path = recording.write_video(_frames(), tmp_path / "videos" / f"episode{suffix}")
  frames = imageio.mimread(path)
  assert len(frames) == 12 and frames[0].shape[:2] == (84, 84)
  assert abs(int(frames[-1][40, 40, 0]) - 220) <= 8  # MP4 is lossy


def test_a_strip_places_evenly_spaced_frames_side_by_side(tmp_path):
  strip = imageio.imread(recording.write_strip(_frames(12, size=10), tmp_path / "strip.png", count=4))
  assert strip.shape == (10, 40, 3)
  assert [int(strip[0, 10 * i, 0]) for i in range(4)] == [0, 80, 140, 220]  # frames 0, 4, 7, 11


def test_a_caption_band_sits_above_the_frame_with_the_text_in_white():
  frame = np.full((40, 120, 3), 100, np.uint8)
  result = recording.captioned(frame, "20,000 frames   return 199.9")
  assert result.shape == (40 + recording.CAPTION_HEIGHT, 120, 3)
  np.testing.assert_array_equal(result[recording.CAPTION_HEIGHT:], frame)
  band = result[:recording.CAPTION_HEIGHT]
  assert band.max() >= 250 and (band == 0).mean() > 0.7  # white (anti-aliased) text on black


def test_bad_requests_say_what_is_wrong(tmp_path):
  with pytest.raises(ValueError, match="no frames"):
    recording.write_video([], tmp_path / "empty.mp4")
  with pytest.raises(ValueError, match="use .mp4 or .gif"):
    recording.write_video(_frames(), tmp_path / "episode.avi")


def test_the_last_frame_of_a_stack_is_its_newest_three_channels():
  stack = np.concatenate([np.full((2, 2, 3), value, np.uint8) for value in (1, 2, 3)], axis=-1)
  assert (recording.last_frame(stack) == 3).all()
