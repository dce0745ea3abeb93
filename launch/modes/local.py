"""Local mode: every role in its own process, placed and restarted by Ray, on this machine or on the nodes of an
existing Ray cluster (`--ray-address`).

The roles are the same functions in-process mode runs on threads (`launch/roles/`); here each runs in a
Ray actor sized by `launch/program.py` (`ReplayProcess`, `LearnerProcess`, `EvaluatorProcess`, `ActorProcess`:
Ray titles their processes `ray::<class>`). The counter is a Ray actor too, and roles call it through
`CounterClient`, which has the `Counter`'s methods, so no role knows it is distributed.

* A dead actor process is restarted by Ray and carries on (a new seed; its counted frames stay counted).
* Anything else that fails stops the run and re-raises its error here, with the remote traceback.
* Ctrl-C asks every role to stop: the learner publishes, logs and checkpoints, the evaluator runs its
  final evaluation, then Ray is shut down and no process is left behind.
* The terminal shows what in-process mode shows: roles announce their lines (progress, evaluations, their
  warnings) to the counter and this driver prints them, without Ray's per-process prefixes. Everything a
  role process writes itself (TensorFlow, Reverb, Ray) goes to `<out>/logs/<role>.log`; a role's error
  still reaches this terminal in full, with the remote traceback.

Without an address `ray.init` starts a private Ray instance on this machine and reserves the CPUs the program
asks for even when the machine has fewer; oversubscribed roles simply share cores.

Devices (`launch/roles/devices.py`): only a learner that asks for GPUs sees any, and `--replicas gpu` (or `auto`)
gives it every GPU of its node; on a machine with GPUs the actors and the evaluator each see the one GPU they
render on with EGL, hidden from their TensorFlow; every other role starts with `CUDA_VISIBLE_DEVICES` empty. The
terminal shows the layout, and each role's log starts with what its process sees.

With an address (`HOST:PORT` of a running cluster's head) the driver attaches to that cluster; run it on one of
the cluster's nodes (a Ray driver connects through a local raylet). The roles go where the nodes' resources say
(`launch.program.fit_to_nodes`): the learner on a node advertising `rlrep_learner_host` (or its GPUs), replay on
one advertising `rlrep_replay_host` if any, the other roles on nodes advertising `rlrep_worker`; the counter
stays on the driver's node. Before any role starts, the driver refuses a role that no node can host, and an
`--out` that some node hosting roles cannot read and write (every role writes there; `--resume` reads it back).
Actors and the evaluator render on their node's CPU there (the launcher cannot know a node's GPUs before Ray
picks the node). A node that dies takes its roles with it: Ray restarts its actors and evaluator where CPUs are
free, and the loss of the replay server, the learner or the counter stops the run with the `--resume` command.

A learner on several hosts (`--learner-hosts N`) is N learner roles, one a node where nodes advertise
`rlrep_learner_host`. Each first reports its node's address and a free port (`LearnerProcess.host_address`); the
driver builds every host's TF_CONFIG from them (`tf_configs`) and starts them together. The loss of any of them
stops the run like the learner's.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import math
import os
import pathlib
import secrets
import socket
import sys
import time
import warnings

import psutil
import ray
from ray._private.authentication import authentication_token_setup
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

import rlrep
from environments import rendering
from launch import roles
from launch.checkpoints import CheckpointStore
from launch.experiment import Experiment, RunFailed
from launch.modes import interrupts
from launch.modes.checks import check_replay_fits
from launch.program import (LEARNER_HOST_RESOURCE, MALLOC_ARENA_MAX, REPLAY_HOST_RESOURCE, WORKER_RESOURCE, Role,
                            demand, fit_to_nodes, fits, make_program)
from launch.roles import devices
from launch.roles.counter import Counter

FINAL_ACTOR_WAIT_S = 30.0
POLL_S = 1.0
UNSTARTED_REPORT_S = 120.0  # a role Ray has not started this long (and every such period after) is reported
PROBE_TIMEOUT_S = 180.0  # a node's first Ray worker loads rlrep (TensorFlow) before it answers the --out probe


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
    self._ours = str(pathlib.Path(__file__).resolve().parents[2])  # the repository: rlrep, agents, launch, ...

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


def _log_devices(role: str, counter: CounterClient | None = None, show_rendering: bool = False) -> None:
  """Writes what this role's process computes and renders on, and its node, to the role's log; tells the
  terminal when Ray restarted the role (e.g. on another node) and, with `show_rendering`, how it renders."""
  node = ray.util.get_node_ip_address()
  print("devices: " + json.dumps(devices.report(role=role, node=node)), flush=True)
  if counter is None:
    return
  with warnings.catch_warnings():  # Ray's own code reads a property it deprecated (Ray 2.60)
    warnings.simplefilter("ignore", DeprecationWarning)
    restarted = ray.get_runtime_context().was_current_actor_reconstructed
  if restarted:
    counter.announce(f"[{role}] restarted by Ray on node {node}")
  if show_rendering:
    counter.announce(f"[{role}] rendering: {rendering.describe_gl_backend()}")


class ReplayProcess:
  """The replay role's Ray process: owns the Reverb server for the whole run."""

  def __init__(self, experiment: Experiment):
    _role_output_to_file(experiment, "replay")
    _log_devices("replay")
    self._server = roles.make_replay_server(experiment.make_builder(), experiment.replay_port,
                                            experiment.replay_checkpoint_dir)

  def address(self) -> str:
    return f"{ray.util.get_node_ip_address()}:{self._server.port}"

  def stop(self) -> None:
    self._server.stop()


class LearnerProcess:
  """The Ray process of the learner role (or of one learner host): runs `roles.LearnerRole` on its devices."""

  def host_address(self) -> str:
    """HOST:PORT on which this learner host's collectives will listen: its node's address and a free port."""
    with socket.socket() as probe:
      probe.bind(("", 0))
      port = probe.getsockname()[1]
    return f"{ray.util.get_node_ip_address()}:{port}"

  def run(self, experiment: Experiment, address: str, counter: CounterClient, name: str = "learner",
          tf_config: str | None = None) -> dict:
    """Trains as role `name`; with `tf_config` (a learner on several hosts) as the host it names."""
    _role_output_to_file(experiment, name, counter)
    devices.grow_gpu_memory()  # before the replicator sets the GPUs up: EGL rendering on them needs the rest
    _log_devices(name, counter)
    if tf_config is not None:
      os.environ["TF_CONFIG"] = tf_config  # what MultiWorkerMirroredStrategy reads
    replicator = rlrep.make_replicator("multi_worker" if tf_config else experiment.replicas)  # first TF op
    return roles.LearnerRole(experiment, experiment.make_builder(), address, counter, replicator).run()


def tf_configs(host_addresses: list[str]) -> list[str]:
  """The TF_CONFIG of each learner host, in order (host 0 is the chief).

  >>> json.loads(tf_configs(["10.0.0.2:4000", "10.0.0.3:4001"])[1])
  {'cluster': {'worker': ['10.0.0.2:4000', '10.0.0.3:4001']}, 'task': {'type': 'worker', 'index': 1}}
  """
  return [json.dumps({"cluster": {"worker": host_addresses}, "task": {"type": "worker", "index": index}})
          for index in range(len(host_addresses))]


class EvaluatorProcess:
  """The evaluator role's Ray process: runs `roles.run_evaluator`, its policy on the CPU."""

  def run(self, experiment: Experiment, address: str, counter: CounterClient) -> dict:
    _role_output_to_file(experiment, "evaluator", counter)
    devices.hide_gpus_from_tensorflow()  # a GPU this process sees is the one it renders on
    _log_devices("evaluator", counter, show_rendering=True)
    return roles.run_evaluator(experiment, experiment.make_builder(), address, counter)


class ActorProcess:
  """An actor role's Ray process: runs `roles.run_actor`, its policy on the CPU."""

  def run(self, experiment: Experiment, address: str, counter: CounterClient, actor_id: int) -> None:
    _role_output_to_file(experiment, f"actor-{actor_id}", counter)
    devices.hide_gpus_from_tensorflow()  # a GPU this process sees is the one it renders on
    _log_devices(f"actor-{actor_id}", counter, show_rendering=actor_id == 0)
    roles.run_actor(experiment, experiment.make_builder(), address, counter, actor_id)


def ray_options(role: Role, placement: bool = False, environment: dict[str, str] | None = None) -> dict:
  """Ray actor options for `role`; with `placement` (a Ray cluster's nodes) it also needs its placement resource,
  and with `environment` its process starts with those variables set."""
  resources = demand(role)
  if not placement:
    resources.pop(role.placement, None)
  options = {"num_cpus": resources.pop("CPU", 0.0), "num_gpus": resources.pop("GPU", 0), "name": role.name,
             "resources": resources}
  if environment:
    options["runtime_env"] = {"env_vars": environment}
  if role.restartable:  # a killed process comes back and its running `run` call is retried
    options.update(max_restarts=-1, max_task_retries=-1)
  return options


def run(experiment: Experiment, ray_address: str | None = None) -> dict:
  """Runs the experiment to its frame budget (or Ctrl-C) with one process per role; returns the summary.

  Without `ray_address` a private Ray instance is started on this machine; with one (`HOST:PORT`, or "auto",
  which cluster mode's driver passes) the run attaches to that Ray cluster.
  """
  children_before = {child.pid for child in psutil.Process().children(recursive=True)}
  os.environ.setdefault("RAY_COLOR_PREFIX", "0")  # Ray's own notices (e.g. a process died) without colour codes
  os.environ.setdefault("MALLOC_ARENA_MAX", MALLOC_ARENA_MAX)  # every role gets it (_environment)
  if ray_address is None:
    cpus = max(os.cpu_count() or 1, math.ceil(sum(role.cpus for role in make_program(experiment))))
    ray.init(address="local", num_cpus=cpus, include_dashboard=False, logging_level=logging.WARNING,
             log_to_driver=False)
  else:
    _attach(ray_address)
    experiment = dataclasses.replace(experiment, out=str(experiment.out_dir.resolve()))  # one path on every node
  try:
    program = _place(experiment, ray_address)
    gpu_ids = _local_gpu_ids(int(ray.cluster_resources().get("GPU", 0))) if ray_address is None else []
    render_gpus = devices.render_gpus(tuple(program.values()), gpu_ids)
    print(devices.summary(tuple(program.values()), render_gpus), flush=True)
    return _run(experiment, program, placement=ray_address is not None, render_gpus=render_gpus)
  finally:
    started = [child for child in psutil.Process().children(recursive=True) if child.pid not in children_before]
    ray.shutdown()
    _reap(started)


def _attach(address: str) -> None:
  """Connects this driver to the running Ray cluster at `address`, with its token when Ray's token
  authentication (Ray's default) guards it."""
  # Ray turns token authentication on by itself only for a cluster it finds on its own ("auto"); at an explicit
  # address it connects without a token unless RAY_AUTH_MODE=token, and a cluster started with tokens refuses
  # it. So do what Ray does for "auto": use the token when this machine has one (~/.ray/auth_token,
  # RAY_AUTH_TOKEN_PATH or RAY_AUTH_TOKEN) and RAY_AUTH_MODE is not set. A cluster without authentication
  # ignores the token. (A private Ray API: ray is pinned in constraints.txt.)
  authentication_token_setup.maybe_enable_token_auth_if_token_available(warn_if_disabled=False)
  try:
    ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
  except (ConnectionError, RuntimeError) as error:
    reason = str(error.__cause__ or error).strip()
    if "Traceback" in reason:  # Ray folds in its last attempt's traceback, whose last line says what failed
      reason = reason.splitlines()[-1]
    raise RunFailed(
        f"could not attach to the Ray cluster at {address}: {reason} Give the head's address as `ray start --head` "
        "printed it (`ray status --address HOST:PORT` checks it), run `rlrep train` on a node of that cluster, and "
        "with token authentication make the cluster's token available here.") from None


def _place(experiment: Experiment, ray_address: str | None) -> dict[str, Role]:
  """The program as this Ray instance or cluster runs it, checked against its nodes before any role starts.

  Cluster mode's pods are made for its program and may still be joining when its driver starts: its roles keep
  every placement resource and wait for the pods that offer them."""
  if experiment.mode == "cluster":
    return {role.name: role for role in make_program(experiment)}
  nodes = [node for node in ray.nodes() if node["Alive"]]
  program = {role.name: role for role in fit_to_nodes(experiment, [node["Resources"] for node in nodes])}
  _check_placeable(program, nodes, ray_address)
  if ray_address is not None:
    _check_replay_fits_a_node(experiment, program["replay"], nodes)
    _check_shared_out(experiment.out_dir, program, nodes)
  return program


def _local_gpu_ids(count: int) -> list[str]:
  """The ids of this machine's `count` GPUs as CUDA_VISIBLE_DEVICES names them (the user's own list, if set)."""
  visible = os.environ.get("CUDA_VISIBLE_DEVICES")
  ids = [part.strip() for part in visible.split(",") if part.strip()] if visible is not None else []
  return (ids or [str(i) for i in range(count)])[:count]


def _node_text(node: dict) -> str:
  """A node's address and the resources that place roles, e.g. "10.0.0.5 (CPU 32, rlrep_worker 1000)"."""
  shown = {name: amount for name, amount in node["Resources"].items()
           if name in ("CPU", "GPU", "TPU") or name.startswith("rlrep_")}
  return f"{node['NodeManagerAddress']} ({', '.join(f'{name} {amount:g}' for name, amount in shown.items())})"


def _shortfalls(program: dict[str, Role], nodes: list[dict]) -> list[str]:
  """What the roles need more of in all than the nodes that may host them offer, so that some role would never
  start (a necessary condition only: the roles must also pack onto the nodes)."""
  groups = {None: list(program.values())}
  for role in program.values():
    if role.placement:
      groups.setdefault(role.placement, []).append(role)
  problems = []
  for placement, members in groups.items():
    hosts = [node["Resources"] for node in nodes if placement is None or placement in node["Resources"]]
    for resource in ("CPU", "GPU", "TPU", *([placement] if placement else [])):  # e.g. one learner host per node
      need = sum(demand(role).get(resource, 0) for role in members)
      offered = sum(host.get(resource, 0) for host in hosts)
      if need > offered:
        who = "the roles" if placement is None else f"the roles that need {placement}"
        problems.append(f"{who} need {need:g} {resource} in all, their nodes offer {offered:g}")
  return problems


def _check_placeable(program: dict[str, Role], nodes: list[dict], ray_address: str | None) -> None:
  """Refuses a run with a role that no node can host, or more roles than the nodes can host at once: Ray would
  wait for such a node forever."""
  homeless = [role for role in program.values() if not any(fits(role, node["Resources"]) for node in nodes)]
  problems = [f"{role.name} needs {demand(role)}" for role in homeless] or _shortfalls(program, nodes)
  if not problems:
    return
  where = f"the Ray cluster at {ray_address}" if ray_address else "this machine"
  raise ValueError(
      f"the nodes of {where} cannot host every role: {'; '.join(problems)}. Its nodes: "
      f"{'; '.join(map(_node_text, nodes))}. Ask for less (--replicas, --actors), or start nodes that offer it, "
      f"e.g. `ray start --address HEAD:PORT --num-gpus "
      f"N --resources '{{\"{LEARNER_HOST_RESOURCE}\": 1}}'` for the learner, `--resources "
      f"'{{\"{WORKER_RESOURCE}\": 1000}}'` for actors and the evaluator, and optionally "
      f"'{{\"{REPLAY_HOST_RESOURCE}\": 1}}' on the one node for replay.")


def _check_replay_fits_a_node(experiment: Experiment, replay: Role, nodes: list[dict]) -> None:
  """The replay server's memory must fit on a node that may host it (the memory Ray offers there)."""
  memory = max(node["Resources"].get("memory", 0) for node in nodes if fits(replay, node["Resources"]))
  check_replay_fits(experiment, memory_bytes=memory, where="Ray offers on the largest replay node")


@ray.remote(num_cpus=0)
def _probe_shared_out(probe: str, token: str, reply: str) -> str | None:
  """On one node: None when the driver's `probe` file reads `token` there and `reply` can be written beside it,
  else what went wrong."""
  try:
    if pathlib.Path(probe).read_text() != token:
      return f"{probe} holds another file there"
    pathlib.Path(reply).write_text(token)
  except OSError as error:
    return f"{type(error).__name__}: {error}"
  return None


def _check_shared_out(out: pathlib.Path, program: dict[str, Role], nodes: list[dict]) -> None:
  """Refuses an `out` that a node which may host a role (all but the counter write there) cannot read and
  write, or whose writes this machine does not see: the same files must be visible everywhere."""
  hosts = [node for node in nodes
           if any(fits(role, node["Resources"]) for role in program.values() if role.kind != "counter")]
  token = secrets.token_hex(8)
  probe = out / f".rlrep-shared-probe-{token}"
  replies = {node["NodeID"]: out / f"{probe.name}-{node['NodeID'][:12]}" for node in hosts}
  probe.write_text(token)
  problems = []
  try:
    answers = {node["NodeID"]: _probe_shared_out.options(
        scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=False)).remote(
            str(probe), token, str(replies[node["NodeID"]])) for node in hosts}
    for node in hosts:
      try:
        problem = ray.get(answers[node["NodeID"]], timeout=PROBE_TIMEOUT_S)
      except ray.exceptions.GetTimeoutError:
        problem = f"no answer within {PROBE_TIMEOUT_S:.0f}s"
      except ray.exceptions.TaskUnschedulableError:
        continue  # the node has left the cluster (Ray lists a dead node as alive for a while): it hosts no role
      except ray.exceptions.RayError as error:  # e.g. the node cannot import rlrep
        problem = f"rlrep's code did not run there ({type(error).__name__}: {str(error).splitlines()[-1]})"
      if problem is None and not replies[node["NodeID"]].exists():
        problem = "it wrote a file there that this machine does not see"
      if problem:
        problems.append(f"node {node['NodeManagerAddress']}: {problem}")
  finally:
    for path in (probe, *replies.values()):
      path.unlink(missing_ok=True)
  if problems:
    raise ValueError(
        f"--out {out} is not a directory every node of the Ray cluster shares ({'; '.join(problems)}). Every role "
        "writes its logs, videos and checkpoints there and --resume reads them back: give an --out on storage all "
        "nodes mount at the same path (e.g. NFS), and install the same rlrep on every node.")


def _environment(role: Role, render_gpu: str | None) -> dict[str, str]:
  """The variables `role`'s process starts with: its devices' (set before TensorFlow loads), the malloc setting
  and the user's own rendering settings, which an existing cluster's processes would not inherit otherwise."""
  return {**rendering.USER_SETTINGS, "MALLOC_ARENA_MAX": os.environ["MALLOC_ARENA_MAX"],
          **devices.process_environment(role, render_gpu)}


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


def _run(experiment: Experiment, program: dict[str, Role], placement: bool, render_gpus: dict[str, str]) -> dict:
  def start(cls, name: str, **options):
    role = program[name]
    return ray.remote(cls).options(**ray_options(role, placement, _environment(role, render_gpus.get(name))),
                                   **options)

  counts = CheckpointStore(experiment.out_dir / "checkpoints").latest() or {}
  # The counter lives and dies with the driver's node: a node that fails does not take the run's counts along.
  driver_node = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
  # Every role calls the counter several times a second, and the driver checks the replay role every POLL_S;
  # Ray's GCS keeps an event record of every call that nobody reads, and with them on gcs_server grew through
  # every soak (benchmarks/results/design-choices.md).
  counter = CounterClient(start(Counter, "counter", enable_task_events=False, scheduling_strategy=driver_node)
                          .remote(**{k: counts.get(k, 0) for k in ("frames", "episodes", "learner_steps")}))
  unstarted = _Unstarted(program)
  replay = unstarted.watch("replay", start(ReplayProcess, "replay", enable_task_events=False).remote(experiment))
  address = unstarted.get(replay.address.remote())
  print(f"replay server at {address}", flush=True)
  learner_names = [name for name, role in program.items() if role.kind == "learner"]
  hosts = [unstarted.watch(name, start(LearnerProcess, name).remote()) for name in learner_names]
  configs = tf_configs(unstarted.get([host.host_address.remote() for host in hosts])) if len(hosts) > 1 else [None]
  learner, *other_learner_hosts = [host.run.remote(experiment, address, counter, name, config)
                                   for host, name, config in zip(hosts, learner_names, configs)]
  evaluator = unstarted.watch("evaluator", start(EvaluatorProcess, "evaluator").remote()).run.remote(
      experiment, address, counter)
  actors = [unstarted.watch(f"actor-{i}", start(ActorProcess, f"actor-{i}").remote()).run.remote(
                experiment, address, counter, i) for i in range(experiment.actors)]
  terminal = _Terminal(counter)
  vital = _VitalRoles(counter, replay, experiment)
  reasons: list[str] = []

  def interrupt(reason: str) -> None:  # the driver only waits: unwinding its wait is safe
    reasons.append(reason)
    raise KeyboardInterrupt

  try:
    try:
      with interrupts.stop_requests(interrupt):
        _wait_for_learner(learner, other_learner_hosts, [evaluator, *actors], vital, experiment.out, terminal,
                          unstarted)
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


class _Unstarted:
  """Says which roles Ray has not started yet, and what each needs, every UNSTARTED_REPORT_S they wait: on a busy
  or too small cluster a role waits, silently otherwise, for a node with its resources free."""

  def __init__(self, program: dict[str, Role]):
    self._program, self._waiting, self._reported = program, {}, time.monotonic()

  def watch(self, name: str, handle: ray.actor.ActorHandle) -> ray.actor.ActorHandle:
    """Watches the actor of role `name` until it has started; call before any other method call on it (an actor
    runs its calls in order, and `run` only returns at the end)."""
    self._waiting[handle.__ray_ready__.remote()] = name
    return handle

  def get(self, ref: ray.ObjectRef):
    """`ray.get(ref)`, reporting the roles still waiting while it waits."""
    while True:
      try:
        return ray.get(ref, timeout=UNSTARTED_REPORT_S)
      except ray.exceptions.GetTimeoutError:
        self.report()

  def report(self) -> None:
    if not self._waiting:
      return
    started, _ = ray.wait(list(self._waiting), num_returns=len(self._waiting), timeout=0)
    for ref in started:
      del self._waiting[ref]
    if self._waiting and time.monotonic() - self._reported >= UNSTARTED_REPORT_S:
      self._reported = time.monotonic()
      needs = "; ".join(f"{name} needs {demand(self._program[name])}" for name in self._waiting.values())
      print(f"still waiting for Ray to start roles on nodes with their resources free: {needs}. The cluster is "
            "busy or too small: `ray status` shows what it has; add nodes, or stop the run (Ctrl-C) and ask for "
            "less (--actors, --replicas).", flush=True)


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


def _wait_for_learner(learner: ray.ObjectRef, other_learner_hosts: list[ray.ObjectRef], others: list[ray.ObjectRef],
                      vital: _VitalRoles, out: str, terminal: _Terminal, unstarted: _Unstarted) -> None:
  """Returns when the learner (its first host) is done; a failure anywhere stops the run and is raised here, a
  learner host's with the resume command."""
  others = [*other_learner_hosts, *others]
  while True:
    done, _ = ray.wait([learner, *others], num_returns=1, timeout=POLL_S)
    vital.check()
    terminal.show_new()
    unstarted.report()
    for ref in done:
      try:
        ray.get(ref)
      except Exception as error:
        vital.request_stop(f"a role failed: {type(error).__name__}")
        vital.check()  # a dead counter or replay server is the cause to report, not its victims' errors
        if ref is learner or any(ref is host for host in other_learner_hosts):
          # Its process or node died (no traceback worth showing), or its code raised (the traceback shows where).
          died = isinstance(error, ray.exceptions.RayActorError)
          raise (RunFailed if died else RuntimeError)(
              f"the learner {'died' if died else 'failed'} ({type(error).__name__}). Its last checkpoint is in "
              f"{out}/checkpoints: continue with `rlrep train --resume {out}`.") from error
        raise
      if ref is learner:
        return
      others = [other for other in others if other is not ref]  # an actor that finished its share
