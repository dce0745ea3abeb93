"""What recording an evaluation video costs the evaluator, measured side by side in one run.

The evaluator plays the deterministic policy on the agent's own observations (84x84 by default) and, for
the episode it records, also renders each step at `--video-size` with a caption band. This times agent
steps of the evaluation loop with and without that extra render, interleaved so that load on a shared
machine hits both alike. Training does not pay it: evaluation runs in its own role (a thread in-process,
a process in local and cluster modes), so on a machine with a core to spare only the evaluation's wall
time grows.

Usage: python benchmarks/eval_video.py [--task cartpole-swingup] [--video-size 256] [--seconds 6]
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

from agents.d4pg import D4PGBuilder, D4PGConfig, presets  # noqa: E402
from render import calls_per_second  # noqa: E402  (benchmarks/render.py)
from environments import dmc, recording  # noqa: E402
from rlrep import acting  # noqa: E402


def evaluation_steps(task: str, video_size: int | None):
  """One evaluation agent step (policy, environment step) as a callable; with `video_size`, also the video
  frame the evaluator records for that step."""
  config = D4PGConfig(render_quality="fast", **presets.for_task(task, {}))
  builder = D4PGBuilder(task, config)
  environment = builder.make_environment(seed=0, render_size=video_size)
  policy = builder.make_policy(evaluation=True)
  params, rng = policy.params(), np.random.default_rng(0)
  camera = dmc.default_camera(dmc.parse_task(task)[0])
  state = {"timestep": environment.reset()}

  def step():
    if video_size:
      image = environment.physics.render(video_size, video_size, camera_id=camera)
      recording.captioned(image, "100,000 frames   return 123.4")
    action = policy(params, acting.batch([state["timestep"].observation]), rng)[0]
    state["timestep"] = environment.step(action)
    if state["timestep"].last():
      state["timestep"] = environment.reset()

  return step


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--task", default="cartpole-swingup")
  parser.add_argument("--video-size", type=int, default=256)
  parser.add_argument("--seconds", type=float, default=6.0, help="measuring time per configuration")
  args = parser.parse_args()
  loops = {"without video": evaluation_steps(args.task, None),
           "with video": evaluation_steps(args.task, args.video_size)}
  rates = {name: 0.0 for name in loops}
  for _ in range(2):  # interleaved halves
    for name, loop in loops.items():
      rates[name] += calls_per_second(loop, args.seconds / 2) / 2
  print(f"{args.task}, fast render quality, evaluation agent steps per second:")
  for name, rate in rates.items():
    print(f"  {name:<14} {rate:7.1f}")
  print(f"  a recorded episode takes {rates['without video'] / rates['with video']:.2f}x the time of an unrecorded "
        f"one ({args.video_size}x{args.video_size} video frames)")


if __name__ == "__main__":
  main()
