"""`rlrep rollout`: steps a pixel task with uniformly random actions and records what the agent sees."""

from __future__ import annotations

import dataclasses
import pathlib
import time

import numpy as np

from environments import dmc
from environments import recording


@dataclasses.dataclass
class RolloutResult:
  frames: int  # environment frames, i.e. agent steps x action repeat
  episodes: int
  frames_per_second: float
  video: pathlib.Path
  strip: pathlib.Path


def rollout(task: str, steps: int, out: str | pathlib.Path, *, size: int = dmc.IMAGE_SIZE,
            render_quality: str = "standard", action_repeat: int = dmc.ACTION_REPEAT,
            frame_stack: int = dmc.FRAME_STACK, seed: int = 0, video_format: str = "mp4",
            print_every: int = 50) -> RolloutResult:
  """Runs `steps` agent steps and writes `rollout.<video_format>` and `rollout_strip.png` under `out`."""
  if steps < 1:
    raise ValueError(f"steps must be >= 1, got {steps}.")
  env = dmc.load(task, size=size, render_quality=render_quality, action_repeat=action_repeat,
                 frame_stack=frame_stack, seed=seed)
  spec = env.action_spec()
  rng = np.random.default_rng(seed)
  timestep = env.reset()
  images = [recording.last_frame(timestep.observation["pixels"])]
  episodes, episode_return, start = 0, 0.0, time.perf_counter()
  for step in range(1, steps + 1):
    timestep = env.step(rng.uniform(spec.minimum, spec.maximum).astype(np.float32))
    images.append(recording.last_frame(timestep.observation["pixels"]))
    episode_return += float(timestep.reward or 0.0)
    if timestep.last():
      episodes += 1
      print(f"episode {episodes}: return {episode_return:.1f}", flush=True)
      episode_return = 0.0
    if step % print_every == 0 or step == steps:
      rate = step * action_repeat / (time.perf_counter() - start)
      print(f"[rollout] frames {step * action_repeat} | {rate:.1f} frames/s | return so far {episode_return:.1f}",
            flush=True)
  elapsed = time.perf_counter() - start
  env.close()
  out = pathlib.Path(out)
  video = recording.write_video(images, out / f"rollout.{video_format}")
  strip = recording.write_strip(images, out / "rollout_strip.png")
  return RolloutResult(steps * action_repeat, episodes, steps * action_repeat / elapsed, video, strip)
