"""The Replicator: run a step written for one device on N replicas, in sync, through tf.distribute.

A researcher writes two functions for one device: `input_fn(ctx)` returning a `tf.data.Dataset` of
per-replica batches, and `step_fn(batch)` that computes a loss, applies gradients through
`rlrep.wrap_optimizer` and returns metrics. The Replicator builds the strategy for the hardware, feeds each
replica its own batch, runs the step everywhere and brings results back per replica or reduced.

>>> import tensorflow as tf, rlrep
>>> repl = rlrep.make_replicator("cpu:2")
>>> def input_fn(ctx):
...   batch = ctx.per_replica_batch_size(8)
...   return tf.data.Dataset.from_tensor_slices(tf.range(64.0)).batch(batch).repeat()
>>> def step_fn(batch):
...   return rlrep.all_mean(tf.reduce_mean(batch))
>>> train = repl.function(step_fn, steps_per_call=2, reduce="mean")
>>> float(train(iter(repl.distribute_dataset(input_fn))))  # second step: batches [8..11] and [12..15]
11.5

It changes only what tf.distribute lacks: spec strings for the hardware, clear errors, an input context
that says which replica it feeds, several steps per compiled call, and the primitives in `rlrep.primitives`.
The strategy itself stays available as `repl.strategy`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import glob
import itertools
import json
import os
from typing import Any, Callable, Iterator

import tensorflow as tf

from rlrep import precision, primitives

Nest = Any
REDUCTIONS = {"mean": tf.distribute.ReduceOp.MEAN, "sum": tf.distribute.ReduceOp.SUM}


@dataclasses.dataclass(frozen=True)
class ReplicatorSpec:
  """A parsed spec string: the kind of device, how many (None: all found), and a TPU address."""
  kind: str
  count: int | None = None
  address: str | None = None


def parse_spec(spec: str) -> ReplicatorSpec:
  """Parses "auto", "cpu", "cpu:N", "gpu", "gpu:N", "tpu", "tpu:ADDRESS" or "multi_worker"."""
  kind, _, argument = spec.partition(":")
  if kind in ("auto", "multi_worker") and not argument:
    return ReplicatorSpec(kind)
  if kind == "tpu":
    return ReplicatorSpec("tpu", address=argument or "local")
  if kind in ("cpu", "gpu"):
    if not argument:
      return ReplicatorSpec(kind, count=1 if kind == "cpu" else None)
    if argument.isdigit() and int(argument) >= 1:
      return ReplicatorSpec(kind, count=int(argument))
    raise ValueError(f"replicator spec {spec!r}: the device count must be a positive integer, e.g. '{kind}:4'.")
  raise ValueError(f"unknown replicator spec {spec!r}; use one of: auto, cpu, cpu:N (N logical CPU devices), "
                   "gpu, gpu:N, tpu, tpu:ADDRESS, multi_worker (reads TF_CONFIG).")


def tpu_present(environ: dict[str, str] | None = None) -> bool:
  """Whether this host looks like a TPU VM (TPU device files) or names a TPU (TPU_NAME)."""
  environ = os.environ if environ is None else environ
  return bool(environ.get("TPU_NAME") or glob.glob("/dev/accel*") or glob.glob("/dev/vfio/[0-9]*"))


def choose_auto_spec(tpu_available: bool, num_gpus: int) -> str:
  """"auto" means a TPU if there is one, else every GPU, else one CPU."""
  if tpu_available:
    return "tpu"
  if num_gpus > 0:
    return "gpu"
  return "cpu"


def device_kind_for_spec(spec: str) -> str:
  """The kind of device ("CPU", "GPU", "TPU") `make_replicator(spec)` would build on, without building it (so
  without initialising TensorFlow's devices): what a run's first lines and `rlrep doctor` report."""
  parsed = parse_spec(spec)
  if parsed.kind in ("cpu", "gpu", "tpu"):
    return parsed.kind.upper()
  gpus = len(tf.config.list_physical_devices("GPU"))
  if parsed.kind == "auto":
    return choose_auto_spec(tpu_present(), gpus).upper()
  return "GPU" if gpus else "CPU"  # multi_worker: one device per worker, a GPU where there is one


def configure_logical_cpus(count: int) -> None:
  """Splits the host CPU into `count` logical devices (the test and debug backend for replication).

  Must run before TensorFlow initializes its devices, i.e. before the first op; asking for no more devices
  than are already configured is always fine.
  """
  cpu = tf.config.list_physical_devices("CPU")[0]
  current = tf.config.get_logical_device_configuration(cpu)
  if current is not None and len(current) >= count:
    return
  try:
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * count)
  except RuntimeError as error:
    found = len(tf.config.list_logical_devices("CPU"))
    if found >= count:  # initialized without a virtual-device configuration, but with enough devices
      return
    raise RuntimeError(
        f"cannot make {count} logical CPU devices: TensorFlow already initialized its devices with {found}. "
        f"Create the replicator (`rlrep.make_replicator('cpu:{count}')`) or call "
        f"`rlrep.configure_logical_cpus({count})` before any TensorFlow op runs, e.g. first thing in "
        "your script or in a test's conftest.py.") from error


@dataclasses.dataclass(frozen=True)
class InputContext:
  """What an `input_fn` needs to know about where its dataset goes.

  The dataset yields per-replica batches. In per-worker mode (the default) `input_fn` is called once per
  host and its successive batches go to that host's successive replicas: `replica_id` is None. In
  per-replica mode it is called once per replica, which then reads only its own dataset.
  """
  num_replicas: int
  num_input_pipelines: int
  input_pipeline_id: int
  replica_id: int | None = None

  def per_replica_batch_size(self, global_batch_size: int) -> int:
    """The batch size `input_fn`'s dataset must yield: every element goes to one replica whole."""
    return per_replica_batch_size(global_batch_size, self.num_replicas)


def per_replica_batch_size(global_batch_size: int, num_replicas: int) -> int:
  if global_batch_size < 1 or global_batch_size % num_replicas:
    raise ValueError(
        f"global batch size {global_batch_size} does not divide evenly over {num_replicas} replicas; use a "
        f"positive multiple of {num_replicas} (e.g. {num_replicas * max(1, global_batch_size // num_replicas)}).")
  return global_batch_size // num_replicas


class Replicator:
  """Runs functions on every replica of a `tf.distribute.Strategy` and moves values in and out."""

  def __init__(self, strategy: tf.distribute.Strategy, description: str, host_index: int = 0, num_hosts: int = 1):
    self.strategy = strategy
    self.description = description
    self.host_index = host_index  # this process's place among the hosts (TF_CONFIG's task index), 0 = the chief
    self.num_hosts = num_hosts
    self._any_host = None  # the compiled vote, made on first use

  @property
  def is_chief(self) -> bool:
    """Whether this process is the first host: the one that writes checkpoints, logs and publishes weights."""
    return self.host_index == 0

  def any_host(self, *flags: bool) -> tuple[bool, ...]:
    """For each flag, whether any host raised it: a collective call every host must make at the same point.

    Hosts that train in lockstep use it to agree on what they do next (stop; skip an update because a host has
    no batch yet), so that none waits forever in a collective the others never join. With one host the flags
    come back as given, and nothing runs on the devices.

    >>> import rlrep
    >>> rlrep.make_replicator("cpu:2").any_host(True, False)
    (True, False)
    """
    if self.num_hosts == 1:
      return tuple(bool(flag) for flag in flags)
    if self._any_host is None:  # identity: the flags as a tensor on each replica's device, where collectives run
      self._any_host = tf.function(lambda raised: self.run(lambda: primitives.all_max(tf.identity(raised))))
    raised_anywhere = self.local_results(self._any_host(tf.constant([int(flag) for flag in flags])))[0].numpy()
    return tuple(bool(raised) for raised in raised_anywhere)

  def __repr__(self) -> str:
    return f"Replicator({self.description}, num_replicas={self.num_replicas})"

  @property
  def device_kind(self) -> str:
    """"CPU", "GPU" or "TPU": what the replicas compute on."""
    return precision.device_kind_of(self.strategy.extended.worker_devices)

  @property
  def num_replicas(self) -> int:
    return self.strategy.num_replicas_in_sync

  def scope(self) -> contextlib.AbstractContextManager:
    """Create models, optimizers and other variables inside this scope so they are mirrored."""
    return self.strategy.scope()

  def run(self, step_fn: Callable[..., Nest], *args: Any, **kwargs: Any) -> Nest:
    """Calls `step_fn(*args, **kwargs)` on every replica; returns per-replica values.

    Arguments that are per-replica values (from a distributed iterator or `distribute_values`) give each
    replica its own part. Call inside a `tf.function` for speed (required on TPU), or use `function`.
    """
    return self.strategy.run(step_fn, args=args, kwargs=kwargs)

  def local_results(self, values: Nest) -> tuple[Nest, ...]:
    """Per-replica values as a tuple with one nested structure per local replica."""
    count = len(self.strategy.extended.worker_devices)

    def per_replica(leaf):  # a leaf that is the same on every replica (e.g. a Python int) is repeated
      results = self.strategy.experimental_local_results(leaf)
      return results if len(results) == count else (leaf,) * count

    per_leaf = [per_replica(v) for v in tf.nest.flatten(values)]
    return tuple(tf.nest.pack_sequence_as(values, list(leaves)) for leaves in zip(*per_leaf))

  def reduce(self, values: Nest, op: str = "mean") -> Nest:
    """Reduces per-replica values over replicas ("mean" or "sum") into ordinary tensors."""
    if op not in REDUCTIONS:
      raise ValueError(f"unknown reduction {op!r}; use one of {sorted(REDUCTIONS)}.")
    return tf.nest.map_structure(lambda v: self.strategy.reduce(REDUCTIONS[op], v, axis=None), values)

  def distribute_values(self, value_fn: Callable[[int], Nest]) -> Nest:
    """Per-replica values: replica r receives `value_fn(r)`."""
    return self.strategy.experimental_distribute_values_from_function(
        lambda ctx: value_fn(ctx.replica_id_in_sync_group))

  def distribute_dataset(self, input_fn: Callable[[InputContext], tf.data.Dataset], *,
                         per_replica: bool = False) -> tf.distribute.DistributedDataset:
    """A dataset whose elements hold one batch per replica, built by `input_fn(InputContext)`.

    Either way the dataset yields per-replica batches (`ctx.per_replica_batch_size(global_batch)`).
    Per-worker (default): `input_fn` runs once per host, whose replicas take its batches in turn.
    Per-replica: `input_fn` runs once per replica (e.g. one Reverb dataset per replica).

    Across hosts `input_fn` runs once per host either way (`replica_id` None), and each host reads its own
    dataset in Python (`HostInput`): tf.distribute's own multi-worker iterator agrees with the other hosts on
    every element, so one host's dataset ending (e.g. replay's idle timeout) would end every host's input.
    """
    if self.num_hosts > 1:
      return HostInput(self, input_fn(InputContext(num_replicas=self.num_replicas, num_input_pipelines=self.num_hosts,
                                                   input_pipeline_id=self.host_index)))
    mode = (tf.distribute.InputReplicationMode.PER_REPLICA if per_replica
            else tf.distribute.InputReplicationMode.PER_WORKER)

    def tf_input_fn(tf_context: tf.distribute.InputContext) -> tf.data.Dataset:
      context = InputContext(
          num_replicas=tf_context.num_replicas_in_sync,
          num_input_pipelines=tf_context.num_input_pipelines,
          input_pipeline_id=tf_context.input_pipeline_id,
          replica_id=tf_context.input_pipeline_id if per_replica else None)
      return input_fn(context)

    options = tf.distribute.InputOptions(experimental_replication_mode=mode)
    return self.strategy.distribute_datasets_from_function(tf_input_fn, options)

  def function(self, step_fn: Callable[..., Nest], *, steps_per_call: int = 1, reduce: str | None = None,
               jit_compile: bool | None = None) -> Callable[..., Nest]:
    """Compiles `steps_per_call` replicated steps into one `tf.function` taking a distributed iterator.

    The returned callable runs `step_fn(next(iterator))` on every replica `steps_per_call` times (TPUs need
    several steps per call to stay busy) and returns the last step's results: per-replica values, or
    reduced over replicas with `reduce="mean"` or `"sum"`. Called with no iterator, `step_fn` takes no
    arguments. Instead of an iterator it also takes a tuple of `steps_per_call` batches already read from
    one (e.g. to time the wait for input in Python, as rlrep's learners do); step k takes the k-th:

    >>> import rlrep
    >>> repl = rlrep.make_replicator("cpu:2")
    >>> batches = iter(repl.distribute_dataset(lambda ctx: tf.data.Dataset.range(8).batch(1)))
    >>> total = repl.function(tf.reduce_sum, steps_per_call=2, reduce="sum")
    >>> int(total((next(batches), next(batches))))  # the second batch: elements 2 and 3
    5
    """
    if steps_per_call < 1:
      raise ValueError(f"steps_per_call must be >= 1, got {steps_per_call}.")
    if reduce is not None and reduce not in REDUCTIONS:
      raise ValueError(f"unknown reduction {reduce!r}; use None (per replica) or one of {sorted(REDUCTIONS)}.")

    def one_step(iterator: Iterator | None) -> Nest:
      return self.run(step_fn) if iterator is None else self.run(step_fn, next(iterator))

    @tf.function(jit_compile=jit_compile)
    def call(iterator: Iterator | tuple | None = None) -> Nest:
      if isinstance(iterator, (tuple, list)):
        if len(iterator) != steps_per_call:
          raise ValueError(f"this function runs {steps_per_call} step(s) per call and was given "
                           f"{len(iterator)} batch(es): pass one batch per step.")
        iterator = iter(iterator)  # traced: each step reads its own argument, not a constant
      outputs = one_step(iterator)  # outside any loop: variables a step creates lazily are created here
      if steps_per_call > 2:
        # A graph loop traces its body once, so only TF iterators (which `next` inside the graph) can use
        # one; a Python iterator is read while tracing, so its steps are unrolled instead.
        graph_iterator = iterator is None or isinstance(iterator, (tf.distribute.DistributedIterator,
                                                                   tf.data.Iterator))
        for _ in tf.range(steps_per_call - 2) if graph_iterator else range(steps_per_call - 2):
          one_step(iterator)
      if steps_per_call > 1:
        outputs = one_step(iterator)
      return outputs if reduce is None else self.reduce(outputs, reduce)

    return call


class HostInput:
  """A host's share of a multi-host replicator's input: iterating reads this host's dataset and hands one element
  to each of the host's replicas. An end of the dataset (e.g. replay's idle timeout) ends this host's iteration
  alone, and the hosts agree on what to do next (`Replicator.any_host`)."""

  def __init__(self, replicator: "Replicator", dataset: tf.data.Dataset):
    self._strategy = replicator.strategy
    self._dataset = dataset
    self._local_replicas = len(replicator.strategy.extended.worker_devices)
    self._first_replica = replicator.host_index * self._local_replicas  # hosts have equal device counts

  def __iter__(self) -> Iterator[Nest]:
    elements, pending = iter(self._dataset), []
    while True:
      while len(pending) < self._local_replicas:
        try:
          pending.append(next(elements))
        except (StopIteration, tf.errors.OutOfRangeError):
          return
      batches, pending = pending, []
      yield self._strategy.experimental_distribute_values_from_function(
          lambda context, batches=batches: batches[context.replica_id_in_sync_group - self._first_replica])


class _MirroredStrategy(tf.distribute.MirroredStrategy):
  """A MirroredStrategy whose collectives use group keys of its own.

  Every MirroredStrategy numbers its collective groups from 1, so two of them in one process (the
  replication kit compares 1 and N replicas; tests build many) join each other's groups and abort
  ("joining a group with size 4, but that group has size 2"). TensorFlow's own tests avoid this by
  offsetting `_collective_key_base`, as done here.
  """

  _key_bases = itertools.count(start=0, step=100_000)

  def __init__(self, devices: list[str]):
    self._collective_key_base = next(self._key_bases)
    super().__init__(devices)


def _cpu_replicator(count: int) -> Replicator:
  configure_logical_cpus(count)
  devices = [d.name for d in tf.config.list_logical_devices("CPU")][:count]
  return Replicator(_MirroredStrategy(devices), f"{count} logical CPU device(s)")


def _gpu_replicator(count: int | None) -> Replicator:
  gpus = tf.config.list_logical_devices("GPU")
  if not gpus or (count is not None and len(gpus) < count):
    found = ", ".join(d.name for d in tf.config.list_logical_devices()) or "none"
    wanted = "a GPU" if count is None else f"{count} GPU(s)"
    raise RuntimeError(f"asked for {wanted} but TensorFlow sees {len(gpus)} (devices found: {found}). "
                       "Check `nvidia-smi` and that the CUDA build of TensorFlow 2.15 is installed (README).")
  devices = [d.name for d in gpus][:count]
  return Replicator(_MirroredStrategy(devices), f"{len(devices)} GPU(s)")


def _tpu_replicator(address: str) -> Replicator:
  if address == "local" and not tpu_present():
    found = ", ".join(d.name for d in tf.config.list_logical_devices()) or "none"
    raise RuntimeError(f"asked for a TPU but this host has none (no /dev/accel*, /dev/vfio or TPU_NAME; devices "
                       f"found: {found}). On a TPU VM use spec 'tpu'; for a remote TPU, 'tpu:grpc://HOST:8470'.")
  resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=address)
  if address != "local":
    tf.config.experimental_connect_to_cluster(resolver)
  tf.tpu.experimental.initialize_tpu_system(resolver)
  strategy = tf.distribute.TPUStrategy(resolver)
  return Replicator(strategy, f"TPU {address} ({strategy.num_replicas_in_sync} cores)")


def read_tf_config(environ: dict[str, str] | None = None) -> dict[str, Any]:
  """Parses and checks TF_CONFIG for multi-worker training."""
  environ = os.environ if environ is None else environ
  raw = environ.get("TF_CONFIG")
  example = ('{"cluster": {"worker": ["host1:12345", "host2:12345"]}, "task": {"type": "worker", "index": 0}}')
  if not raw:
    raise ValueError(f"spec 'multi_worker' needs TF_CONFIG describing the workers, e.g. TF_CONFIG='{example}'.")
  try:
    config = json.loads(raw)
    workers = config["cluster"]["worker"]
    task = config["task"]
    index = int(task["index"])
  except (ValueError, KeyError, TypeError) as error:
    raise ValueError(f"TF_CONFIG is malformed ({error!r}); expected e.g. '{example}'.") from None
  if task.get("type") not in ("worker", "chief") or not 0 <= index < len(workers) + 1:
    raise ValueError(f"TF_CONFIG task {task} does not name one of the {len(workers)} workers.")
  return config


def make_replicator(spec: str = "auto") -> Replicator:
  """Builds the Replicator for a spec string (see `parse_spec`).

  "auto" picks a TPU if this host has one, else all GPUs, else one CPU. "cpu:N" makes N logical CPU
  devices: real synchronous replication on one machine, for debugging and tests.
  """
  parsed = parse_spec(spec)
  if parsed.kind == "auto":
    return make_replicator(choose_auto_spec(tpu_present(), len(tf.config.list_physical_devices("GPU"))))
  if parsed.kind == "cpu":
    return _cpu_replicator(parsed.count)
  if parsed.kind == "gpu":
    return _gpu_replicator(parsed.count)
  if parsed.kind == "tpu":
    return _tpu_replicator(parsed.address)
  config = read_tf_config()
  chiefs = len(config["cluster"].get("chief", []))  # a chief, if named, is host 0 and the workers follow
  hosts = chiefs + len(config["cluster"]["worker"])
  index = int(config["task"]["index"]) + (chiefs if config["task"]["type"] == "worker" else 0)
  strategy = tf.distribute.MultiWorkerMirroredStrategy()
  devices = strategy.extended.worker_devices
  return Replicator(strategy, f"{hosts} hosts of {len(devices)} {precision.device_kind_of(devices)} device(s) each "
                    f"(this is host {index})", host_index=index, num_hosts=hosts)
