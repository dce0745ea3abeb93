"""Where a D4PG learner update's time goes on a CPU, by oneDNN's own clock.

TensorFlow runs convolutions and matmuls on CPUs through oneDNN; with ONEDNN_VERBOSE=1 oneDNN prints one line
per kernel run with the milliseconds it took. This script runs the update benchmarks/learner.py compares
(batch 256, 84x84x9, augmentation off, one replica) in float32 and bfloat16, and DeepMind Acme's TF D4PG
learner on the same network, for `--steps` updates each, and prints per update: the wall time, the part
spent in oneDNN kernels (forward convolutions, convolution data and weight gradients, matmuls, layout
reorders) and what is left for everything else (elementwise ops, the optimizers, the input, Python).
It answers "how much faster can this update get without faster kernels?".

Usage: taskset -c 0 python benchmarks/learner_profile.py [--steps 10] [--no-acme]
"""

from __future__ import annotations

import argparse
import collections
import ctypes
import dataclasses
import os
import sys
import tempfile
import time
from typing import TextIO

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

KERNEL_KINDS = ("convolution forward", "convolution data gradient", "convolution weight gradient", "matmul",
                "reorder")
COLUMN_TITLES = dict(zip(KERNEL_KINDS, ("conv forward", "conv d-grad", "conv w-grad", "matmul", "reorder")))


def kernel_times(lines: list[str]) -> dict[str, float]:
  """Milliseconds by kind of kernel, summed over oneDNN verbose `exec` lines (other lines are ignored).

  >>> kernel_times([
  ...   "onednn_verbose,exec,cpu,convolution,brgconv:avx512_core_bf16,forward_training,src_bf16,,mb256,37.1",
  ...   "onednn_verbose,exec,cpu,convolution,jit_bf16:avx512_core_bf16,backward_weights,src_bf16,,mb256,77.8",
  ...   "onednn_verbose,exec,cpu,matmul,brg:avx512_core_bf16,undef,src_bf16,,256x48672:48672x50,7.6",
  ...   "onednn_verbose,create:cache_miss,cpu,matmul,brg:avx512_core_bf16,undef,src_bf16,,256x50,0.1",
  ...   "some other line"])
  {'convolution forward': 37.1, 'convolution weight gradient': 77.8, 'matmul': 7.6}
  """
  totals: dict[str, float] = collections.defaultdict(float)
  for line in lines:
    fields = line.split(",")
    if len(fields) < 7 or fields[0] != "onednn_verbose" or fields[1] != "exec":
      continue
    primitive, propagation = fields[3], fields[5]
    if primitive == "convolution":
      kind = {"backward_data": "convolution data gradient",
              "backward_weights": "convolution weight gradient"}.get(propagation, "convolution forward")
    elif primitive in ("matmul", "inner_product"):
      kind = "matmul"
    else:
      kind = primitive
    totals[kind] += float(fields[-1])
  return dict(totals)


def quiet_stdout() -> TextIO:
  """Sends file descriptor 1 to /dev/null and returns a stream to where it pointed before: oneDNN prints a
  line per kernel from the first TF op on (building the learners, warming up), and the report wants none of
  them; `profile` catches the ones it counts."""
  sys.stdout.flush()
  report = os.fdopen(os.dup(1), "w", buffering=1)
  with open(os.devnull, "w") as devnull:
    os.dup2(devnull.fileno(), 1)
  return report


def profile(step, steps: int) -> tuple[float, dict[str, float]]:
  """(wall ms per step, oneDNN ms per step by kind) over `steps` calls of `step`, after two warm-up calls.
  oneDNN prints to the process's stdout (file descriptor 1), which is sent to a file meanwhile."""
  step()
  step()
  libc = ctypes.CDLL(None)
  with tempfile.TemporaryFile(mode="w+") as sink:
    sys.stdout.flush()
    libc.fflush(None)
    saved = os.dup(1)
    os.dup2(sink.fileno(), 1)
    try:
      start = time.perf_counter()
      for _ in range(steps):
        step()
      wall_s = time.perf_counter() - start
    finally:
      libc.fflush(None)
      os.dup2(saved, 1)
      os.close(saved)
    sink.seek(0)
    times = kernel_times(sink.read().splitlines())
  return 1000 * wall_s / steps, {kind: total / steps for kind, total in times.items()}


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--steps", type=int, default=10, help="profiled updates per variant")
  parser.add_argument("--acme", action=argparse.BooleanOptionalAction, default=True,
                      help="include Acme's TF D4PG learner on the same network (installed by scripts/setup.sh)")
  args = parser.parse_args()
  os.environ["ONEDNN_VERBOSE"] = "1"  # read when oneDNN runs its first kernel, so before any TF op
  report = quiet_stdout()
  import acme_d4pg  # benchmarks/acme_d4pg.py
  from learner import ACTION_SPEC, rlrep_learner  # benchmarks/learner.py
  from agents.d4pg import D4PGConfig
  batch = acme_d4pg.random_batch(256)
  config = D4PGConfig(batch_size=256, augment=False, precision="float32")
  variants = {"rlrep float32": rlrep_learner(config, batch),
              "rlrep bfloat16": rlrep_learner(dataclasses.replace(config, precision="bfloat16"), batch)}
  if args.acme:
    variants["Acme float32"] = acme_d4pg.acme_learner(batch, ACTION_SPEC, config)[0]
  cores = len(os.sched_getaffinity(0))
  print(f"ms per D4PG update (batch 256, 84x84x9, augmentation off; {cores} cores), "
        f"by oneDNN's clock, mean of {args.steps}:", file=report)
  if cores > 1:
    print("  (kernels that run at once on several cores each count their own time, so 'other' can go negative: "
          "pin one core with taskset -c 0)", file=report)
  titles = " ".join(f"{COLUMN_TITLES[kind]:>12s}" for kind in KERNEL_KINDS)
  print(f"  {'':16s} {'wall':>7s} {'oneDNN':>7s} {titles} {'other':>7s}", file=report)
  for name, step in variants.items():
    wall, kinds = profile(step, args.steps)
    in_kernels = sum(kinds.values())
    print(f"  {name:16s} {wall:7.1f} {in_kernels:7.1f} "
          + " ".join(f"{kinds.get(kind, 0.0):12.1f}" for kind in KERNEL_KINDS) + f" {wall - in_kernels:7.1f}",
          file=report)


if __name__ == "__main__":
  main()
