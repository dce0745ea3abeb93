"""In-process mode: every role a thread of this Python process, sharing one in-process Reverb server.

For debugging: breakpoints work in any role and a crash in any thread stops the run and re-raises that
exception, with its own traceback, in the main thread. Threads interleave freely, so runs are repeatable
only as far as the seeds go (environments, networks and augmentation are seeded; scheduling is not).

Devices: the learner's replicator gets the GPUs, and grows their memory as it needs it (EGL rendering on the same
GPU needs the rest); the actors and the evaluator keep their policies on the CPU (`devices.on_cpu`).
"""

from __future__ import annotations

import threading
from typing import Callable

import rlrep
from environments import rendering
from launch import roles
from launch.checkpoints import CheckpointStore
from launch.experiment import Experiment
from launch.modes import interrupts
from launch.roles import devices
from launch.roles.counter import Counter

JOIN_TIMEOUT_S = 120.0


def run(experiment: Experiment) -> dict:
  """Runs the experiment to its frame budget (or Ctrl-C); returns the summary."""
  devices.grow_gpu_memory()  # before the replicator sets the GPUs up
  replicator = rlrep.make_replicator(experiment.replicas)  # first TF op: device setup precedes it
  builder = experiment.make_builder()
  counts = CheckpointStore(experiment.out_dir / "checkpoints").latest() or {}
  counter = Counter(**{k: counts.get(k, 0) for k in ("frames", "episodes", "learner_steps")}, echo=True)
  counter.announce(f"devices: actors and the evaluator act on the CPU; rendering: {rendering.describe_gl_backend()}")
  server = roles.make_replay_server(builder, experiment.replay_port, experiment.replay_checkpoint_dir)
  address = f"localhost:{server.port}"
  failures: list[BaseException] = []
  summary: dict = {}

  def guarded(name, body, *args):
    def target():
      try:
        result = body(*args)
        if name == "evaluator":
          summary.update(result)
      except BaseException as error:  # noqa: BLE001  (re-raised in the main thread below)
        failures.append(error)
        counter.request_stop(f"{name} failed: {type(error).__name__}: {error}")
    return threading.Thread(target=target, name=name, daemon=True)

  actors = [guarded(f"actor-{i}", devices.on_cpu(roles.run_actor), experiment, builder, address, counter, i)
            for i in range(experiment.actors)]
  evaluation = guarded("evaluator", devices.on_cpu(roles.run_evaluator), experiment, builder, address, counter)
  try:
    try:
      with interrupts.stop_requests(_request_stop(counter)):
        learner = roles.LearnerRole(experiment, builder, address, counter, replicator)
        for thread in [*actors, evaluation]:
          thread.start()
        learner.run()
    except KeyboardInterrupt:  # a second Ctrl-C, or one before the handler was in place
      counter.request_stop("interrupted (Ctrl-C)")
    finally:
      counter.request_stop("learner finished")
      counter.mark_learner_done()
      _join([evaluation])  # its final evaluation still reads the weights table
  finally:
    server.stop()  # unblocks actors waiting on the rate limiter; they see the stop and return
    _join(actors)
  if failures:
    raise failures[0]
  return summary


def _request_stop(counter: Counter) -> Callable[[str], None]:
  """A first Ctrl-C or SIGTERM only asks every role to stop (the learner checkpoints on its way out): a
  KeyboardInterrupt raised at an arbitrary point of the learner (the main thread) can land inside
  TensorFlow's own context managers and leave them broken ("Exiting device scope without proper scope
  nesting"). A second one aborts."""
  def request_stop(reason: str) -> None:
    counter.request_stop(reason)
    print(f"{reason}: stopping every role (the learner writes a final checkpoint); Ctrl-C again to abort",
          flush=True)
  return request_stop


def _join(threads: list[threading.Thread]) -> None:
  for thread in threads:
    if thread.is_alive():
      thread.join(JOIN_TIMEOUT_S)
