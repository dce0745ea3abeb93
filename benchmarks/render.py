"""Rendering throughput, measured side by side in one run (ratios; absolute numbers drift on shared machines).

1. rlrep's wrapped pixel env vs a bare dm_control step+render loop at the same settings, written two ways:
   with `physics.render` (the usual loop, which builds a MuJoCo scene per frame) and with one reused
   `Camera` (as the wrapper does): the second ratio is the wrapper's own overhead.
2. render_quality "fast" vs "standard".
3. EGL vs OSMesa, each in its own process (MUJOCO_GL is read once per process).

Usage: python benchmarks/render.py [--task walker-walk] [--seconds 6]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time


def calls_per_second(step, seconds: float) -> float:
  """How often `step()` runs per second over `seconds`, after one untimed warm-up call."""
  step()  # first-call costs (a GL context, a tf.function trace) stay out of the rate
  count, start = 0, time.perf_counter()
  while time.perf_counter() - start < seconds:
    step()
    count += 1
  return count / (time.perf_counter() - start)


def bare_loops(task: str, quality: str, size: int = 84, action_repeat: int = 2) -> dict:
  """Two bare dm_control loops doing what one wrapped agent step does: `action_repeat` physics steps and a render.

  "bare" renders with `physics.render` (a new MuJoCo scene per frame, the usual loop); "bare_camera" reuses
  one `Camera`, as the wrapper does.
  """
  import numpy as np
  from environments import dmc
  from environments import rendering
  from dm_control.mujoco import engine as mujoco_engine

  domain, task_name = dmc.parse_task(task)
  bare = dmc.suite.load(domain, task_name, task_kwargs={"random": 0})
  rendering.apply_render_quality(bare.physics, quality, size, size)
  zeros = np.zeros(bare.action_spec().shape)
  camera = dmc.default_camera(domain)
  reused_camera = mujoco_engine.Camera(bare.physics, size, size, camera)

  def physics_steps():
    for _ in range(action_repeat):
      if bare.step(zeros).last():
        bare.reset()

  def bare_step():
    physics_steps()
    bare.physics.render(size, size, camera_id=camera)

  def bare_camera_step():
    physics_steps()
    reused_camera.render().copy()

  return {"bare": bare_step, "bare_camera": bare_camera_step}


def measure_in_this_process(task: str, quality: str, seconds: float, size: int = 84) -> dict[str, float]:
  """Frames/s of the bare loop and of the wrapped env (frame stack 3, action repeat 2), same settings."""
  import numpy as np
  from environments import dmc

  wrapped = dmc.load(task, size=size, render_quality=quality, seed=0)
  wrapped.reset()
  action = np.zeros(wrapped.action_spec().shape, np.float32)
  # Interleave the two loops twice so that a burst of load on the machine hits both alike.
  loops = {**bare_loops(task, quality, size), "wrapped": lambda: wrapped.step(action)}
  results = {name: 0.0 for name in loops}
  for _ in range(2):
    for name, loop in loops.items():
      results[name] += 2 * calls_per_second(loop, seconds / 3) / 2
  return {**results, "backend": os.environ["MUJOCO_GL"]}


def _child(backend: str, task: str, quality: str, seconds: float) -> dict | None:
  environ = dict(os.environ, MUJOCO_GL=backend)
  environ.pop("PYOPENGL_PLATFORM", None)
  command = [sys.executable, __file__, "--child", quality, "--task", task, "--seconds", str(seconds)]
  result = subprocess.run(command, env=environ, capture_output=True, text=True, timeout=600)
  if result.returncode:
    print(f"  {backend}: unavailable ({result.stderr.strip().splitlines()[-1] if result.stderr else 'failed'})")
    return None
  return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--task", default="walker-walk")
  parser.add_argument("--seconds", type=float, default=6.0, help="measuring time per configuration")
  parser.add_argument("--child", help=argparse.SUPPRESS)
  args = parser.parse_args()
  if args.child:
    print(json.dumps(measure_in_this_process(args.task, args.child, args.seconds)))
    return

  print(f"task {args.task}, 84x84, action repeat 2; frames/s = environment frames per second")
  table = {}
  for backend in ("egl", "osmesa"):
    for quality in ("standard", "fast"):
      result = _child(backend, args.task, quality, args.seconds)
      if result:
        table[backend, quality] = result
        print(f"  {backend:<6} {quality:<8}  bare {result['bare']:7.1f}  bare+camera {result['bare_camera']:7.1f}  "
              f"wrapped {result['wrapped']:7.1f}  wrapped/bare {result['wrapped'] / result['bare']:.3f}  "
              f"wrapped/bare+camera {result['wrapped'] / result['bare_camera']:.3f}")
  for backend in ("egl", "osmesa"):
    if (backend, "fast") in table and (backend, "standard") in table:
      ratio = table[backend, "fast"]["wrapped"] / table[backend, "standard"]["wrapped"]
      print(f"  {backend}: fast / standard = {ratio:.1f}x")
  for quality in ("standard", "fast"):
    if ("egl", quality) in table and ("osmesa", quality) in table:
      ratio = table["egl", quality]["wrapped"] / table["osmesa", quality]["wrapped"]
      print(f"  {quality}: egl / osmesa = {ratio:.2f}x")


if __name__ == "__main__":
  main()
