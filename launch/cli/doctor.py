"""`rlrep doctor`: says whether this machine can run rlrep, and what to do when it cannot."""

from __future__ import annotations

import sys
from typing import TextIO


def _render_check() -> tuple[bool, str]:
  """Renders one small frame; a working backend gives a non-uniform image."""
  try:
    from environments import dmc
    env = dmc.load("cartpole-swingup", size=32, frame_stack=1, render_quality="fast", seed=0)
    pixels = env.reset().observation["pixels"]
    env.close()
  except Exception as error:  # the point is to report any failure, whatever its type
    return False, f"render failed: {type(error).__name__}: {error}"
  if pixels.std() == 0:
    return False, "render produced a blank image (GL context works but draws nothing)"
  return True, f"rendered a {pixels.shape[0]}x{pixels.shape[1]} frame with MUJOCO_GL={dmc.GL_BACKEND}"


def run(out: TextIO = sys.stdout) -> int:
  """Prints the report; returns the process exit code (0 when everything works)."""
  print("rlrep doctor", file=out)
  try:
    import rlrep  # checks the stack before importing TensorFlow or Reverb
  except ImportError as error:
    for name, version in getattr(error, "versions", {}).items():
      print(f"  {name:<11} {version}", file=out)
    print(f"PROBLEM {error}", file=out)
    return 1
  for name, version in rlrep.installed_versions().items():
    print(f"  {name:<11} {version}", file=out)
  ok, message = _render_check()
  print(f"  render      {'ok' if ok else 'FAILED'}: {message}", file=out)
  import tensorflow as tf
  devices = ", ".join(f"{d.device_type}:{d.name.split(':')[-1]}" for d in tf.config.list_logical_devices())
  print(f"  tf devices  {devices}", file=out)
  from rlrep import precision, replicator
  kind = replicator.device_kind_for_spec("auto")
  choice = precision.choose("auto", kind)
  print(f"  precision   --precision auto (the default) computes the learner in {choice.precision} on {kind} "
        f"({choice.reason.removeprefix('auto: ')})", file=out)
  if not ok:
    print("PROBLEM rendering: install the GL libraries (`bash scripts/setup.sh` as root, or "
          "`apt-get install -y libegl1 libgl1-mesa-dri libosmesa6`), or set MUJOCO_GL=egl|osmesa.", file=out)
    return 1
  print("All checks passed.", file=out)
  return 0
