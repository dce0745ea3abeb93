"""Writes rendered episodes as a video (MP4, or GIF) and as a PNG strip of evenly spaced frames."""

from __future__ import annotations

import pathlib
from typing import Sequence

import imageio.v2 as imageio
import numpy as np


def write_video(frames: Sequence[np.ndarray], path: str | pathlib.Path, fps: int = 30) -> pathlib.Path:
  """Writes uint8 HxWx3 frames; the format follows the suffix (.mp4 through ffmpeg, or .gif)."""
  path = pathlib.Path(path)
  if not frames:
    raise ValueError(f"no frames to write to {path}.")
  path.parent.mkdir(parents=True, exist_ok=True)
  if path.suffix == ".mp4":
    # macro_block_size=1 keeps odd sizes such as 84x84 without resizing.
    imageio.mimwrite(path, list(frames), fps=fps, macro_block_size=1)
  elif path.suffix == ".gif":
    imageio.mimwrite(path, list(frames), duration=1000 / fps, loop=0)
  else:
    raise ValueError(f"unknown video format {path.suffix!r}: use .mp4 or .gif.")
  return path


def write_strip(frames: Sequence[np.ndarray], path: str | pathlib.Path, count: int = 8) -> pathlib.Path:
  """Writes `count` evenly spaced frames side by side as one PNG."""
  path = pathlib.Path(path)
  if not frames:
    raise ValueError(f"no frames to write to {path}.")
  indices = np.linspace(0, len(frames) - 1, min(count, len(frames))).round().astype(int)
  path.parent.mkdir(parents=True, exist_ok=True)
  imageio.imwrite(path, np.concatenate([frames[i] for i in indices], axis=1))
  return path


CAPTION_HEIGHT = 14


def captioned(frame: np.ndarray, text: str) -> np.ndarray:
  """`frame` with a black band above it carrying `text` in white (PIL's built-in bitmap font).

  >>> captioned(np.zeros((64, 64, 3), np.uint8), "return 12.5").shape
  (78, 64, 3)
  """
  from PIL import Image, ImageDraw

  band = Image.new("RGB", (frame.shape[1], CAPTION_HEIGHT))
  ImageDraw.Draw(band).text((2, 1), text, fill=(255, 255, 255))
  return np.concatenate([np.asarray(band, np.uint8), frame], axis=0)


def last_frame(pixels: np.ndarray) -> np.ndarray:
  """The newest RGB frame of a channels-last frame stack."""
  return pixels[..., -3:]
