"""Which devices each role's process uses: GPUs for the learner only, EGL rendering on a GPU where there is one.

TensorFlow takes nearly all the memory of every GPU it sees, and Ray 2.60 no longer hides GPUs from the tasks
and actors that ask for none. So a launcher that runs roles in processes of their own starts each one with
`process_environment`, read before TensorFlow loads:

* the learner, when it asks for GPUs: nothing added (Ray sets `CUDA_VISIBLE_DEVICES` to the GPUs it assigned);
* an actor or the evaluator on a machine with GPUs: `CUDA_VISIBLE_DEVICES` = the one GPU it renders on (its
  EGL needs to see it: NVIDIA's EGL follows that variable), which the process then hides from TensorFlow
  (`hide_gpus_from_tensorflow`), so its policy runs on the CPU;
* every other role, and every role on a machine without GPUs: `CUDA_VISIBLE_DEVICES` empty.

The learner grows its GPU memory as it needs it (`grow_gpu_memory`): EGL rendering on the same GPUs needs the
rest. In-process mode, all roles in one process, grows the learner's memory the same way and runs the actors
and the evaluator under `on_cpu`.
"""

from __future__ import annotations

import functools
import logging
import os
from typing import Callable, TypeVar

import psutil
import tensorflow as tf

from environments import rendering
from launch.program import Role

RENDERING_KINDS = ("actor", "evaluator")
HIDDEN = ""  # CUDA_VISIBLE_DEVICES that shows CUDA (and NVIDIA's EGL) no GPU at all

Result = TypeVar("Result")


def render_gpus(program: tuple[Role, ...], gpu_ids: list[str]) -> dict[str, str]:
  """The GPU each actor and the evaluator renders on, round robin over `gpu_ids` (none without GPUs).

  >>> from launch.experiment import Experiment
  >>> from launch.program import make_program
  >>> render_gpus(make_program(Experiment(actors=2)), ["0", "1"])
  {'evaluator': '0', 'actor-0': '1', 'actor-1': '0'}
  """
  renderers = [role.name for role in program if role.kind in RENDERING_KINDS]
  return {name: gpu_ids[i % len(gpu_ids)] for i, name in enumerate(renderers)} if gpu_ids else {}


def process_environment(role: Role, render_gpu: str | None = None) -> dict[str, str]:
  """The `CUDA_VISIBLE_DEVICES` `role`'s process must start with (nothing for a learner that asks Ray for GPUs).

  >>> process_environment(Role("actor-0", "actor", cpus=1.0), render_gpu="1")
  {'CUDA_VISIBLE_DEVICES': '1'}
  >>> process_environment(Role("learner", "learner", cpus=1.0, accelerator="gpu", accelerator_count=2))
  {}
  >>> process_environment(Role("replay", "replay", cpus=1.0), render_gpu="1")
  {'CUDA_VISIBLE_DEVICES': ''}
  """
  if role.accelerator == "gpu":
    return {}
  if role.kind in RENDERING_KINDS and render_gpu is not None:
    return {"CUDA_VISIBLE_DEVICES": render_gpu}
  return {"CUDA_VISIBLE_DEVICES": HIDDEN}


def hide_gpus_from_tensorflow() -> None:
  """Keeps TensorFlow in this process off every GPU (an actor's or the evaluator's, which renders on one).
  Must run before TensorFlow's first operation here."""
  tf.config.set_visible_devices([], "GPU")


def grow_gpu_memory() -> None:
  """Lets TensorFlow take GPU memory as it needs it instead of nearly all of it at start. Must run before
  TensorFlow's first operation on the GPUs (a process that already used them keeps what it took)."""
  for gpu in tf.config.list_physical_devices("GPU"):
    try:
      tf.config.experimental.set_memory_growth(gpu, True)
    except RuntimeError:
      logging.warning("TensorFlow already set up %s in this process, without memory growth: it keeps the memory "
                      "it took, and EGL rendering on that GPU may run out.", gpu.name)


def on_cpu(body: Callable[..., Result]) -> Callable[..., Result]:
  """`body` with its TensorFlow variables and calls on this process's CPU (the calling thread's device scope)."""
  @functools.wraps(body)
  def run_on_cpu(*args, **kwargs) -> Result:
    with tf.device("/CPU:0"):
      return body(*args, **kwargs)
  return run_on_cpu


def report(**extra) -> dict:
  """What this process's roles compute and render on, with `extra` (e.g. the role's name and node): the
  `CUDA_VISIBLE_DEVICES` it started with (so before TensorFlow loaded), the GPUs TensorFlow may use, whether
  they grow their memory, and the rendering backend."""
  gpus = tf.config.get_visible_devices("GPU")
  return {**extra, "pid": os.getpid(),
          "cuda_visible_devices_at_start": psutil.Process().environ().get("CUDA_VISIBLE_DEVICES"),
          "tensorflow_gpus": [gpu.name for gpu in gpus],
          "memory_growth": [bool(tf.config.experimental.get_memory_growth(gpu)) for gpu in gpus],
          "rendering": rendering.describe_gl_backend()}


def summary(program: tuple[Role, ...], rendering_on: dict[str, str]) -> str:
  """The run's device layout in one line, for the terminal.

  >>> from launch.experiment import Experiment
  >>> from launch.program import make_program
  >>> summary(make_program(Experiment()), {})
  'devices: the learner on CPUs (no GPU); every other role sees no GPU'
  """
  learner = next(role for role in program if role.kind == "learner")
  if learner.accelerator == "gpu":
    where = f"the learner on {learner.accelerator_count} GPU(s), growing their memory as needed"
  elif learner.accelerator == "tpu":
    where = f"the learner on {learner.accelerator_count} TPU chip(s)"
  else:
    where = "the learner on CPUs (no GPU)"
  if not rendering_on:
    return f"devices: {where}; every other role sees no GPU"
  gpus = ",".join(sorted(set(rendering_on.values())))
  return (f"devices: {where}; the actors and the evaluator render with EGL on GPU {gpus} (each sees only its "
          "own, and TensorFlow none); replay and the counter see no GPU")
