"""Local mode: every role in its own process on this machine, placed and restarted by Ray.

The roles are the same functions in-process mode runs on threads (`launch/roles/`); here each runs in a
Ray actor sized by `launch/program.py`. The counter is a Ray actor too, and roles call it through
`CounterClient`, which has the `Counter`'s methods, so no role knows it is distributed.

* A dead actor process is restarted by Ray and carries on (a new seed; its counted frames stay counted).
* Anything else that fails stops the run and re-raises its error here, with the remote traceback.
* Ctrl-C asks every role to stop: the learner publishes, logs and checkpoints, the evaluator runs its
  final evaluation, then Ray is shut down and no process is left behind.
* The terminal shows what in-process mode shows: roles announce their lines (progress, evaluations, their
  warnings) to the counter and this driver prints them, without Ray's per-process prefixes. Everything a
  role process writes itself (TensorFlow, Reverb, Ray) goes to `<out>/logs/<role>.log`; a role's error
  still reaches this terminal in full, with the remote traceback.

`ray.init` starts a private Ray instance (never an existing cluster: that is cluster mode) and reserves
the CPUs the program asks for even when the machine has fewer; oversubscribed roles simply share cores.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import pathlib
import sys

import psutil
import ray

from launch import interrupts, roles
from launch.checkpoints import CheckpointStore
from launch.counter import Counter
from launch.experiment import Experiment, RunFailed
from launch.program import MALLOC_ARENA_MAX, Role, make_program

FINAL_ACTOR_WAIT_S = 30.0
POLL_S = 1.0


class CounterClient:
  """Calls a `Counter` living in a Ray actor as if it were local (each call waits for its answer)."""

  def __init__(self, handle: ray.actor.ActorHandle):
    self._handle = handle

  def __getattr__(self, name: str):
    if name.startswith("_"):  # keeps pickling and copying away from the remote methods
      raise AttributeError(name)
    method = getattr(self._handle, name)
    return lambda *args: ray.get(method.remote(*args))


class _AnnounceWarnings(logging.Handler):
  """Sends warnings logged by rlrep's own code in a role process to the user's terminal via the counter."""

  def __init__(self, counter: CounterClient, role: str):
    super().__init__(logging.WARNING)
    self._counter, self._role = counter, role
    self._ours = str(pathlib.Path(__file__).resolve().parents[1])

  def emit(self, record: logging.LogRecord) -> None:
    if record.pathname.startswith(self._ours):  # not TensorFlow's or Ray's: those stay in the role's log
      self._counter.announce(f"[{self._role}] {record.levelname.lower()}: {record.getMessage()}")


def _role_output_to_file(experiment: Experiment, role: str, counter: CounterClient | None = None) -> None:
  """Points this role process's stdout and stderr (Python's and the C++ libraries') at
  `<out>/logs/<role>.log`, appended across restarts; its warnings also go to the counter."""
  path = experiment.out_dir / "logs" / f"{role}.log"
  path.parent.mkdir(parents=True, exist_ok=True)
  sys.stdout.flush()
  sys.stderr.flush()
  log = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
  os.dup2(log, 1)
  os.dup2(log, 2)
  os.close(log)
  if counter is not None:
    logging.getLogger().addHandler(_AnnounceWarnings(counter, role))


class ReplayRole:
  """Owns the Reverb server for the whole run."""

  def __init__(self, experiment: Experiment):
    _role_output_to_file(experiment, "replay")
    self._server = roles.make_replay_server(experiment.make_builder(), experiment.replay_port,
                                            experiment.replay_checkpoint_dir)

  def address(self) -> str:
    return f"{ray.util.get_node_ip_address()}:{self._server.port}"

  def stop(self) -> None:
    self._server.stop()


class LearnerRole:
  def run(self, experiment: Experiment, address: str, counter: CounterClient) -> dict:
    _role_output_to_file(experiment, "learner", counter)
    import rlrep
    replicator = rlrep.make_replicator(experiment.replicas)  # first: device setup precedes any TF op
    return roles.LearnerRole(experiment, experiment.make_builder(), address, counter, replicator).run()


class EvaluatorRole:
  def run(self, experiment: Experiment, address: str, counter: CounterClient) -> dict:
    _role_output_to_file(experiment, "evaluator", counter)
    return roles.run_evaluator(experiment, experiment.make_builder(), address, counter)


class ActorRole:
  def run(self, experiment: Experiment, address: str, counter: CounterClient, actor_id: int) -> None:
    _role_output_to_file(experiment, f"actor-{actor_id}", counter)
    roles.run_actor(experiment, experiment.make_builder(), address, counter, actor_id)


def ray_options(role: Role, placement: bool = False) -> dict:
  """Ray actor options for `role`; with `placement` (cluster mode) it also needs its pod's custom resource."""
  options = {"num_cpus": role.cpus, "name": role.name, "resources": {}}
  if role.accelerator == "gpu":
    options["num_gpus"] = role.accelerator_count
  elif role.accelerator == "tpu":
    options["resources"]["TPU"] = role.accelerator_count
  if placement and role.placement:
    options["resources"][role.placement] = 1
  if role.restartable:  # a killed process comes back and its running `run` call is retried
    options.update(max_restarts=-1, max_task_retries=-1)
  return options


def run(experiment: Experiment, ray_address: str | None = None) -> dict:
  """Runs the experiment to its frame budget (or Ctrl-C) with one process per role; returns the summary.

  Without `ray_address` a private Ray instance is started on this machine; cluster mode's driver passes
  "auto" to use the Ray cluster it runs in.
  """
  program = {role.name: role for role in make_program(experiment)}
  children_before = {child.pid for child in psutil.Process().children(recursive=True)}
  os.environ.setdefault("RAY_COLOR_PREFIX", "0")  # Ray's own notices (e.g. a process died) without colour codes
  os.environ.setdefault("MALLOC_ARENA_MAX", MALLOC_ARENA_MAX)  # inherited by Ray's processes, so by every role
  if ray_address is None:
    cpus = max(os.cpu_count() or 1, math.ceil(sum(role.cpus for role in program.values())))
    ray.init(address="local", num_cpus=cpus, include_dashboard=False, logging_level=logging.WARNING,
             log_to_driver=False)
  else:
    ray.init(address=ray_address, logging_level=logging.WARNING, log_to_driver=False)
  try:
    return _run(experiment, program, placement=ray_address is not None)
  finally:
    started = [child for child in psutil.Process().children(recursive=True) if child.pid not in children_before]
    ray.shutdown()
    _reap(started)


def _reap(processes: list[psutil.Process], timeout_s: float = 30.0) -> None:
  """Waits for the processes this run started to exit, and kills any that outlive `timeout_s`.

  Ray's workers exit by themselves once the private Ray instance is shut down, but not at once (and, their
  raylet gone, no longer as our descendants); a driver that returned earlier would leave them running.
  """
  _, alive = psutil.wait_procs(processes, timeout=timeout_s)
  for process in alive:
    logging.warning("killing %s (pid %d): still running %.0fs after Ray shut down", process.name(), process.pid,
                    timeout_s)
    process.kill()


def _run(experiment: Experiment, program: dict[str, Role], placement: bool) -> dict:
  def start(cls, name: str, **options):
    return ray.remote(cls).options(**ray_options(program[name], placement), **options)

  counts = CheckpointStore(experiment.out_dir / "checkpoints").latest() or {}
  # Every role calls the counter several times a second, and the driver checks the replay role every POLL_S;
  # Ray's GCS keeps an event record of every call (~3.5 kB, up to 100,000 of them) that nobody reads. With
  # them on, gcs_server grew 1.5 MB a minute (counter) and 11 MB an hour (replay) in 35-minute soaks.
  counter = CounterClient(start(Counter, "counter", enable_task_events=False).remote(
      **{k: counts.get(k, 0) for k in ("frames", "episodes", "learner_steps")}))
  replay = start(ReplayRole, "replay", enable_task_events=False).remote(experiment)
  address = ray.get(replay.address.remote())
  learner = start(LearnerRole, "learner").remote().run.remote(experiment, address, counter)
  evaluator = start(EvaluatorRole, "evaluator").remote().run.remote(experiment, address, counter)
  actors = [start(ActorRole, f"actor-{i}").remote().run.remote(experiment, address, counter, i)
            for i in range(experiment.actors)]
  terminal = _Terminal(counter)
  vital = _VitalRoles(counter, replay, experiment)
  reasons: list[str] = []

  def interrupt(reason: str) -> None:  # the driver only waits: unwinding its wait is safe
    reasons.append(reason)
    raise KeyboardInterrupt

  try:
    try:
      with interrupts.stop_requests(interrupt):
        _wait_for_learner(learner, [evaluator, *actors], vital, experiment.out, terminal)
    except KeyboardInterrupt:
      reason = reasons[0] if reasons else "interrupted (Ctrl-C)"
      print(f"{reason}: stopping every role (the learner writes a final checkpoint) ...", flush=True)
      counter.request_stop(reason)
      ray.get(learner)
    summary = ray.get(evaluator)
  finally:
    with contextlib.suppress(ray.exceptions.RayActorError):  # a dead counter has said why already
      terminal.show_new()
    vital.request_stop("learner finished")
    with contextlib.suppress(ray.exceptions.RayActorError):
      ray.get(replay.stop.remote())  # unblocks actors waiting on the rate limiter
    ray.wait(actors, num_returns=len(actors), timeout=FINAL_ACTOR_WAIT_S)
  return summary


class _Terminal:
  """Prints the lines roles announced to the counter, each once, in order."""

  def __init__(self, counter: CounterClient):
    self._counter, self._next = counter, 0

  def show_new(self) -> None:
    lines, self._next = self._counter.messages(self._next)
    for line in lines:
      print(line, flush=True)


class _VitalRoles:
  """The counter and the replay server: roles whose death ends the run (their state cannot be rebuilt)."""

  def __init__(self, counter: CounterClient, replay: ray.actor.ActorHandle, experiment: Experiment):
    self._counter, self._replay, self._out = counter, replay, experiment.out
    self._replay_on_resume = ("replay restarts from its last checkpoint" if experiment.checkpoint_replay else
                              "replay refills to min_replay_size first")

  def check(self) -> None:
    """Raises RunFailed naming a vital role that has died."""
    for name, call, lost in (
        ("counter", lambda: self._counter.stop_reason(), "the run's counts and stop signal"),
        ("replay", lambda: ray.get(self._replay.address.remote(), timeout=30), "replay's contents")):
      try:
        call()
      except (ray.exceptions.RayActorError, ray.exceptions.GetTimeoutError) as error:
        raise RunFailed(
            f"the {name} role died ({type(error).__name__}): {lost} are gone, so the run stops. Continue from "
            f"the learner's last checkpoint with `rlrep train --resume {self._out}` "
            f"({self._replay_on_resume}).") from error

  def request_stop(self, reason: str) -> None:
    with contextlib.suppress(ray.exceptions.RayActorError):
      self._counter.request_stop(reason)


def _wait_for_learner(learner: ray.ObjectRef, others: list[ray.ObjectRef], vital: _VitalRoles, out: str,
                      terminal: _Terminal) -> None:
  """Returns when the learner is done; a failure anywhere stops the run and is raised here."""
  while True:
    done, _ = ray.wait([learner, *others], num_returns=1, timeout=POLL_S)
    vital.check()
    terminal.show_new()
    for ref in done:
      try:
        ray.get(ref)
      except Exception as error:
        vital.request_stop(f"a role failed: {type(error).__name__}")
        vital.check()  # a dead counter or replay server is the cause to report, not its victims' errors
        if ref is learner:
          raise RuntimeError(f"the learner failed ({type(error).__name__}). Its last checkpoint is in "
                             f"{out}/checkpoints: continue with `rlrep train --resume {out}`.") from error
        raise
      if ref is learner:
        return
      others = [other for other in others if other is not ref]  # an actor that finished its share
