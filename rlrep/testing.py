"""A replication check researchers can run on their own model and step.

`assert_replicates` trains the same model from the same initial values on one device with global batch B
and on N logical CPU replicas that each get B/N of the same examples. It watches every Keras optimizer in
the model state and asserts that at every update each replica applied the gradient one device computes
for the global batch, then that every copy of every variable agrees after k steps. Gradients are compared
because parameters alone hide the classic bugs: Adam divides by the gradient's scale, so a gradient N
times too large changes its step only in the last bits. A correct data-parallel step (per-replica mean
loss, `rlrep.wrap_optimizer`, metrics through `rlrep.all_mean`) passes:

>>> import tensorflow as tf, rlrep
>>> from rlrep import testing
>>> def build(wrap=rlrep.wrap_optimizer):
...   model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
...   model.build((None, 3))
...   return model, wrap(tf.keras.optimizers.Adam(1e-3))
>>> def step(state, batch):
...   model, optimizer = state
...   optimizer.minimize(lambda: tf.reduce_mean((model(batch["x"]) - batch["y"]) ** 2),
...                      model.trainable_variables)
>>> batches = testing.random_batches({"x": (3,), "y": (1,)}, global_batch=8, steps=3)
>>> report = testing.assert_replicates(build, step, batches, num_replicas=4)
>>> report.max_gradient_difference < 1e-5 and report.max_abs_difference < 1e-5
True

The classic bugs raise `ReplicationMismatch`, naming the gradient or variable that differed, by how much,
and the bug its pattern suggests: gradients never reduced (replicas apply different gradients), summed
where they should be averaged or reduced twice (N times the one-device gradient; here a plain Keras
optimizer sums), divided by N twice, and statistics taken over the local batch where the step needs the
global one (replicas agree with each other, not with one device):

>>> testing.assert_replicates(lambda: build(wrap=lambda optimizer: optimizer), step, batches)
Traceback (most recent call last):
...
rlrep.testing.ReplicationMismatch: 4-replica training differs from 1-device training in 3 step(s):
  gradient of ...:0, update 1 of 3: max |difference| ... > tolerance ... on replicas 0, 1, 2, 3
...
Likely cause: the replicas applied 4x the 1-device gradient: ...

A step that moves no trainable variable raises `NothingTrained` rather than "replicating" perfectly:

>>> testing.assert_replicates(build, lambda state, batch: None, batches)
Traceback (most recent call last):
...
rlrep.testing.NothingTrained: the step moved no trainable variable in 3 step(s) on one device: ...

`per_replica_iterator` feeds each replica a value of its own, for testing step functions directly:

>>> repl = rlrep.make_replicator("cpu:2")
>>> doubled = repl.function(lambda x: 2 * x)(testing.per_replica_iterator(repl, [1.0, 2.0]))
>>> [float(value) for value in repl.local_results(doubled)]
[2.0, 4.0]

Logical CPU devices must exist before TensorFlow initializes (`rlrep.configure_logical_cpus(N)` in a
conftest.py, or first thing in the script).

Across hosts, `run_hosts(script, hosts=2)` runs a script in that many processes on this machine, joined as one
multi-host cluster (TF_CONFIG on loopback ports): a script that calls `assert_replicates(...,
replicator=rlrep.make_replicator("multi_worker"))` checks the step on every host's replicas against one device.

For agents' tests, `random_transitions` draws batches in the replay's transition format, `write_steps` writes
an episode's first steps through a builder's adder to a replay server, and `assert_resumes_exactly` checks that a
learner restored from a checkpoint steps on as the one that saved it.

An agent's settings class keeps the contract launchers rely on (`rlrep.core.AgentConfig`) when a pytest class mixing
in `AgentConfigTestMixin` passes, as dm_env's `EnvironmentTestMixin` checks an environment.
"""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import subprocess
import sys
from typing import Any, Callable, Iterator, Sequence

import dm_env
import numpy as np
import reverb
import tensorflow as tf

from rlrep import core, primitives
from rlrep import replicator as replicator_lib
from rlrep.precision import PRECISIONS

Nest = Any

# What the pattern of the earliest differing gradient suggests; {n} is the number of replicas.
NEVER_REDUCED = ("the replicas applied different gradients, each its own batch's: gradients never reduced across "
                 "replicas (use rlrep.wrap_optimizer; do not pass skip_gradients_aggregation=True to a plain "
                 "Keras optimizer).")
SCALED_UP = ("the replicas applied {n}x the 1-device gradient: summed where they should be averaged (a plain Keras "
             "optimizer sums replica gradients; use rlrep.wrap_optimizer), or reduced twice (rlrep.all_mean "
             "before an optimizer that sums them again).")
SCALED_DOWN = ("the replicas applied 1/{n} of the 1-device gradient: divided by the replica count twice (e.g. a "
               "loss already divided by the global batch, as tf.nn.compute_average_loss does, given to "
               "rlrep.wrap_optimizer, which averages too).")
LOCAL_STATISTIC = ("the replicas applied one gradient, but not the 1-device gradient of the global batch: a statistic "
                   "over the local batch where the step needs the global one (e.g. a mean or normalisation over "
                   "`batch`; reduce it with rlrep.all_mean), or randomness that differs with the replica count.")
UPDATE_COUNT = ("the optimizers applied a different number of gradients on {n} replicas: a branch taken on a "
                "local-batch value, where the step needs the global one (reduce it with rlrep.all_mean).")
OUTSIDE_OPTIMIZERS = ("every applied gradient agrees, so a variable changed outside the optimizers differs: a "
                      "statistic over the local batch (e.g. batch-norm moving averages; reduce it with "
                      "rlrep.all_mean) or a per-replica assignment (e.g. a target network or counter).")


class ReplicationMismatch(AssertionError):
  """Replicated training diverged from single-device training."""


class NothingTrained(AssertionError):
  """The step changed no trainable variable, so there was no training to compare."""


@dataclasses.dataclass
class ReplicationReport:
  """What a passing check compared: the largest differences seen, for variables and applied gradients."""
  num_replicas: int
  steps: int
  max_abs_difference: float
  worst_variable: str
  max_gradient_difference: float
  worst_gradient: str


def random_batches(shapes: dict[str, tuple[int, ...]], global_batch: int, steps: int,
                   seed: int = 0) -> list[dict[str, np.ndarray]]:
  """`steps` global batches of float32 normal data with the given per-example shapes."""
  rng = np.random.default_rng(seed)
  return [{k: rng.normal(size=(global_batch, *s)).astype(np.float32) for k, s in shapes.items()}
          for _ in range(steps)]


def random_transitions(observation_shape: tuple[int, ...], action_size: int, batch_size: int, count: int,
                       seed: int = 0) -> list[dict[str, Any]]:
  """`count` batches of random pixel transitions in the replay's format, drawn from one generator seeded `seed`.

  Each batch holds uint8 `observation["pixels"]` and `next_observation["pixels"]` of shape
  `(batch_size, *observation_shape)`, float32 `action` (batch_size, action_size) uniform in [-1, 1], `reward`
  uniform in [0, 2] and `discount` either 0 (an episode's end) or 0.99 ** 3 (a 3-step discount), drawn in that
  order, batch after batch:

  >>> batches = random_transitions((4, 4, 3), action_size=2, batch_size=5, count=2)
  >>> len(batches), batches[0]["observation"]["pixels"].shape, batches[0]["action"].shape
  (2, (5, 4, 4, 3), (5, 2))
  >>> sorted(batches[1]), batches[1]["discount"].dtype
  (['action', 'discount', 'next_observation', 'observation', 'reward'], dtype('float32'))
  """
  rng = np.random.default_rng(seed)

  def pixels() -> np.ndarray:
    return rng.integers(0, 256, size=(batch_size, *observation_shape), dtype=np.uint8)

  return [{"observation": {"pixels": pixels()}, "next_observation": {"pixels": pixels()},
           "action": rng.uniform(-1, 1, size=(batch_size, action_size)).astype(np.float32),
           "reward": rng.uniform(0, 2, size=batch_size).astype(np.float32),
           "discount": rng.choice([0.0, 0.99 ** 3], size=batch_size).astype(np.float32)} for _ in range(count)]


def write_steps(builder: core.Builder, client: reverb.Client, steps: int = 10, seed: int = 1) -> dm_env.TimeStep:
  """Plays the first `steps` steps of an episode of `builder`'s environment (made with `seed`) with its exploring
  policy at its initial weights, writing them through its adder to `client`'s server; closes the adder (which
  flushes and waits for the server to confirm) and the environment, and returns the last timestep.

  Each action is drawn with a fresh `np.random.default_rng(0)`, so the same builder writes the same items."""
  environment = builder.make_environment(seed=seed)
  adder, policy = builder.make_adder(client), builder.make_policy()
  timestep = environment.reset()
  adder.observe_first(timestep)
  for _ in range(steps):
    action = policy(policy.params(), {k: v[None] for k, v in timestep.observation.items()},
                    np.random.default_rng(0))[0]
    timestep = environment.step(action)
    adder.observe(action, timestep)
  adder.close()
  environment.close()
  return timestep


def assert_resumes_exactly(make_learner: Callable[[Sequence[Nest]], core.Learner], batches: Sequence[Nest],
                           path: str, values: Callable[[core.Learner], list[np.ndarray]]) -> dict[str, float]:
  """Asserts that a learner restored from a checkpoint steps on exactly as the one that saved it.

  `make_learner(batches)` makes a learner that reads `batches` in order. One learner takes a step per batch and
  saves at `path` before its last step; a second one, reading only the last batch, restores that checkpoint
  (its step count must be the saver's) and takes the last step. Both must then hold bit-identical `values(learner)`
  (e.g. every variable of its state). Returns the metrics of the saver's step before the save."""
  continuing = make_learner(batches)
  for _ in range(len(batches) - 1):
    metrics = continuing.step()
  prefix = continuing.save(path)
  continuing.step()

  restored = make_learner(batches[-1:])  # resumes reading where the first one was
  restored.restore(prefix)
  assert restored.num_steps == len(batches) - 1
  restored.step()
  assert restored.num_steps == len(batches)
  for a, b in zip(values(continuing), values(restored), strict=True):
    np.testing.assert_array_equal(a, b)
  return metrics


def per_replica_iterator(repl: replicator_lib.Replicator, values: Sequence[Nest]) -> Iterator:
  """A distributed iterator on which replica r reads `values[r]` at every step (for tests of step_fns)."""
  if len(values) != repl.num_replicas:
    raise ValueError(f"got values for {len(values)} replicas; the replicator has {repl.num_replicas}.")
  dataset = repl.distribute_dataset(
      lambda context: tf.data.Dataset.from_tensors(values[context.replica_id]).repeat(), per_replica=True)
  return iter(dataset)


def _holder(state: Any) -> tf.Module:
  holder = tf.Module()
  holder.state = state
  return holder


def _variables(state: Any) -> list[tf.Variable]:
  return list(_holder(state).variables)


def _optimizers(state: Any) -> list[tf.keras.optimizers.Optimizer]:
  """The Keras optimizers `state` holds, plain or inside `rlrep.wrap_optimizer` (a tf.Module), each once."""
  return list(_holder(state)._flatten(predicate=lambda value: isinstance(value, tf.keras.optimizers.Optimizer)))


class _GradientLog:
  """Records, in order, every gradient an optimizer applies to each replica's copy of each variable."""

  def __init__(self, repl: replicator_lib.Replicator, variables: list[tf.Variable]):
    # Keras updates a mirrored variable through its per-replica copies, so a copy says which replica applies.
    self._where = {id(copy): (index, replica) for index, variable in enumerate(variables)
                   for replica, copy in enumerate(repl.strategy.experimental_local_results(variable))}
    self.applied: dict[tuple[int, int], list[np.ndarray]] = {key: [] for key in self._where.values()}

  def observe(self, optimizer: tf.keras.optimizers.Optimizer) -> None:
    """Makes `optimizer` record each gradient where it meets the variable: after any reduction and clipping."""
    update_step = optimizer.update_step

    def recording_update_step(gradient: tf.Tensor | tf.IndexedSlices, variable: tf.Variable) -> Any:
      if id(variable) not in self._where:
        raise ValueError(f"an optimizer updates {variable.name}, which build()'s state does not hold: return "
                         "everything the step trains from build().")
      record = self.applied[self._where[id(variable)]].append
      tf.numpy_function(record, [tf.convert_to_tensor(gradient)], [])
      return update_step(gradient, variable)

    optimizer.jit_compile = False  # XLA cannot call back into Python (Keras turns it on only with a GPU)
    optimizer.update_step = recording_update_step


def _train(repl: replicator_lib.Replicator, build: Callable[[], Any], step: Callable[[Any, Nest], Any],
           batches: Sequence[Nest], initial_values: list[np.ndarray] | None
           ) -> tuple[list[tf.Variable], list[np.ndarray], _GradientLog]:
  with repl.scope():
    state = build()
  variables = _variables(state)
  if not variables:
    raise ValueError("build() created no variables: build the model (e.g. `model.build(input_shape)`) inside it.")
  if initial_values is not None:
    for variable, value in zip(variables, initial_values, strict=True):
      variable.assign(value)
  initial = [v.numpy() for v in variables]
  log = _GradientLog(repl, variables)
  for optimizer in _optimizers(state):
    log.observe(optimizer)
  global_batch = len(tf.nest.flatten(batches[0])[0])
  per_replica = replicator_lib.per_replica_batch_size(global_batch, repl.num_replicas)

  local_replicas = len(repl.strategy.extended.worker_devices)

  def input_fn(context: replicator_lib.InputContext) -> tf.data.Dataset:
    # Replica r reads rows [r*b, (r+1)*b) of every global batch: together, exactly the one-device batches. On
    # one host each replica has a dataset of its own; across hosts each host's dataset feeds its replicas in turn
    # (host h's replicas are h*L .. h*L+L-1).
    replicas = ([context.replica_id] if context.replica_id is not None else
                [context.input_pipeline_id * local_replicas + local for local in range(local_replicas)])
    own_rows = [tf.nest.map_structure(lambda x: x[r * per_replica:(r + 1) * per_replica], batch)
                for batch in batches for r in replicas]
    stacked = tf.nest.map_structure(lambda *rows: np.stack(rows), *own_rows)
    return tf.data.Dataset.from_tensor_slices(stacked)

  iterator = iter(repl.distribute_dataset(input_fn, per_replica=True))
  train = repl.function(lambda batch: step(state, batch))
  for _ in batches:  # one call per step, so the gradients are recorded in the order they are applied
    train((next(iterator),))
  return variables, initial, log


def assert_replicates(build: Callable[[], Any], step: Callable[[Any, Nest], Any], batches: Sequence[Nest], *,
                      num_replicas: int = 4, atol: float = 1e-5, rtol: float = 1e-4,
                      replicator: replicator_lib.Replicator | None = None) -> ReplicationReport:
  """Asserts that `step` trains identically on 1 device and on `num_replicas` logical CPU replicas.

  Given a `replicator` instead (e.g. `make_replicator("multi_worker")` on each of several hosts, every host
  calling this with the same arguments), it compares training on that replicator's replicas, every host's,
  with one local device: each host checks its own replicas against the global batch's gradients.

  Args:
    build: creates the model state (Keras models, Keras optimizers, usually through `rlrep.wrap_optimizer`,
      and variables) with all variables built; called once under each replicator's scope.
    step: `step(state, batch)`, the single-device training step, run on every replica. It must apply
      gradients through an optimizer that `build()` returned, which is where the kit watches them.
    batches: global batches (nested numpy arrays, leading axis = global batch, divisible by num_replicas).
    num_replicas: logical CPU replicas to compare against one device.
    atol, rtol: tolerance; float32 sums in another order differ in the last bits. Each copy of a variable
      must pass `np.allclose(copy, expected, atol, rtol)`; a gradient may differ by `atol + rtol * m`, m its
      largest 1-device entry, since reordered sums err relative to the summands rather than to each entry.

  Returns the report on success. Raises `NothingTrained` if the step moves no trainable variable on one
  device, and `ReplicationMismatch` naming what differed and the likely bug otherwise.
  """
  num_replicas = replicator.num_replicas if replicator is not None else num_replicas
  if num_replicas < 2:
    raise ValueError(f"num_replicas must be >= 2 to compare against one device, got {num_replicas}.")
  single = replicator_lib.make_replicator("cpu:1")
  # Across hosts every host's one-device reference starts where the replicated model starts, from host 0's values.
  start = _first_hosts_values(replicator, build) if replicator is not None and replicator.num_hosts > 1 else None
  reference, initial, reference_log = _train(single, build, step, batches, start)
  if all(np.array_equal(v.numpy(), value) for v, value in zip(reference, initial) if v.trainable):
    raise NothingTrained(
        f"the step moved no trainable variable in {len(batches)} step(s) on one device: there is no training to "
        "compare. Check that it applies its gradients (optimizer.minimize or apply_gradients) to the model's "
        "variables, and that the loss depends on them.")
  if not any(reference_log.applied.values()):
    raise ValueError("the step applied no gradient through a Keras optimizer (tf.keras.optimizers.Optimizer, plain "
                     "or through rlrep.wrap_optimizer) that build() returned, so the kit cannot compare gradients: "
                     "return the optimizers from build() and apply gradients with them.")
  multi = replicator or replicator_lib.make_replicator(f"cpu:{num_replicas}")
  replicated, _, replicated_log = _train(multi, build, step, batches, initial)
  names = [v.name for v in reference]
  gradients = _compare_gradients(names, reference_log, replicated_log, num_replicas, atol, rtol)
  variables = _compare_variables(reference, [_replica_values(multi, v) for v in replicated], atol, rtol)
  if gradients.failures or variables.failures:
    raise ReplicationMismatch(
        f"{num_replicas}-replica training differs from 1-device training in {len(batches)} step(s):\n  "
        + "\n  ".join(_first(gradients.failures, 6) + _first(variables.failures, 4))
        + "\nLikely cause: " + (gradients.cause or OUTSIDE_OPTIMIZERS).format(n=num_replicas))
  return ReplicationReport(num_replicas, len(batches), variables.worst_difference, variables.worst,
                           gradients.worst_difference, gradients.worst)


def _first_hosts_values(repl: replicator_lib.Replicator, build: Callable[[], Any]) -> list[np.ndarray]:
  """The initial values of `build()`'s variables as host 0 makes them, on every host (a collective call)."""
  own = [v.numpy() for v in _variables(build())]
  shared = repl.function(lambda: primitives.broadcast([tf.constant(value) for value in own]))()
  return [np.asarray(value) for value in repl.local_results(shared)[0]]


def _first(lines: list[str], limit: int) -> list[str]:
  """At most `limit` lines and a count of the rest: gradient lines must not crowd out variable lines."""
  return lines[:limit] + ([f"... and {len(lines) - limit} more"] if len(lines) > limit else [])


@dataclasses.dataclass
class _Comparison:
  failures: list[str] = dataclasses.field(default_factory=list)
  worst_difference: float = 0.0
  worst: str = ""
  cause: str | None = None


def _compare_gradients(names: list[str], reference: _GradientLog, replicated: _GradientLog, num_replicas: int,
                       atol: float, rtol: float) -> _Comparison:
  """Compares every update's gradient on every replica with the 1-device one, earliest update first; the
  earliest mismatch (computed from parameters that have not drifted yet) gives the likely cause."""
  result, mismatches, count_failures = _Comparison(), [], []
  for index, name in enumerate(names):
    expected = reference.applied[(index, 0)]
    # this host's replicas (all of them on one host): the others check their own
    actual = [updates for (variable, _), updates in sorted(replicated.applied.items()) if variable == index]
    counts = {len(updates) for updates in actual}
    if counts != {len(expected)}:
      count_failures.append(f"{name} received {len(expected)} gradient(s) on one device but "
                            f"{', '.join(map(str, sorted(counts)))} on {num_replicas} replicas")
    for update in range(min(counts | {len(expected)})):
      want, got = expected[update], [updates[update] for updates in actual]
      tolerance = atol + rtol * float(np.max(np.abs(want), initial=0.0))
      differences = [float(np.max(np.abs(value - want), initial=0.0)) for value in got]
      worst_replica = int(np.argmax(differences))
      if differences[worst_replica] > result.worst_difference:
        result.worst_difference = differences[worst_replica]
        result.worst = f"{name} update {update + 1} (replica {worst_replica})"
      failing = [str(replica) for replica, difference in enumerate(differences) if difference > tolerance]
      if failing:
        mismatches.append((update, index, _likely_cause(want, got, num_replicas, tolerance),
                           f"gradient of {name}, update {update + 1} of {len(expected)}: max |difference| "
                           f"{differences[worst_replica]:.3g} > tolerance {tolerance:.3g} on replicas "
                           f"{', '.join(failing)}"))
  mismatches.sort(key=lambda mismatch: mismatch[:2])
  result.failures = [line for *_, line in mismatches] + count_failures
  if mismatches:
    result.cause = mismatches[0][2]
  elif count_failures:
    result.cause = UPDATE_COUNT
  return result


def _likely_cause(expected: np.ndarray, actual: list[np.ndarray], num_replicas: int, tolerance: float) -> str:
  """The bug that a mismatching gradient's pattern across replicas suggests."""
  if any(np.max(np.abs(value - actual[0]), initial=0.0) > tolerance for value in actual[1:]):
    return NEVER_REDUCED
  for factor, cause in ((num_replicas, SCALED_UP), (1 / num_replicas, SCALED_DOWN)):
    if np.max(np.abs(actual[0] - factor * expected), initial=0.0) <= tolerance * max(factor, 1):
      return cause
  return LOCAL_STATISTIC


def _compare_variables(reference: list[tf.Variable], replicated: list[list[np.ndarray]], atol: float,
                       rtol: float) -> _Comparison:
  """Compares every replica's copy of every variable with the 1-device value."""
  result = _Comparison()
  for ref, copies in zip(reference, replicated, strict=True):
    expected = ref.numpy()
    differences = [float(np.max(np.abs(value - expected), initial=0.0)) for value in copies]
    worst_replica = int(np.argmax(differences))
    if differences[worst_replica] > result.worst_difference:
      result.worst_difference = differences[worst_replica]
      result.worst = f"{ref.name} (replica {worst_replica})"
    failing = [str(replica) for replica, value in enumerate(copies)
               if not np.allclose(value, expected, atol=atol, rtol=rtol)]
    if failing:
      result.failures.append(f"variable {ref.name}: max |difference| {differences[worst_replica]:.3g} on "
                             f"replicas {', '.join(failing)}")
  return result


def _replica_values(repl: replicator_lib.Replicator, variable: tf.Variable) -> list[np.ndarray]:
  """The value of every replica's copy: mirrored copies can drift apart when a step is wrong."""
  return [np.asarray(v) for v in repl.strategy.experimental_local_results(variable)]


def _free_loopback_port() -> int:
  with socket.socket() as probe:
    probe.bind(("127.0.0.1", 0))
    return probe.getsockname()[1]


def run_hosts(script: str, hosts: int = 2, timeout_s: float = 300.0, cwd: str | None = None) -> list[str]:
  """Runs the Python source `script` in `hosts` processes on this machine, as the hosts of one multi-host
  cluster (each with TF_CONFIG naming every host on a loopback port, and its own index); returns each host's
  standard output, host 0 first. Raises AssertionError with a failing host's standard error."""
  cluster = {"worker": [f"127.0.0.1:{_free_loopback_port()}" for _ in range(hosts)]}
  processes = [subprocess.Popen(
      [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd,
      env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2",
           "TF_CONFIG": json.dumps({"cluster": cluster, "task": {"type": "worker", "index": index}})})
      for index in range(hosts)]
  try:
    outputs = [process.communicate(timeout=timeout_s) for process in processes]
  finally:
    for process in processes:
      process.kill()
  for index, (process, (_, stderr)) in enumerate(zip(processes, outputs)):
    if process.returncode != 0:
      raise AssertionError(f"host {index} of {hosts} exited with {process.returncode}:\n{stderr[-4000:]}")
  return [stdout for stdout, _ in outputs]


class AgentConfigTestMixin:
  """Tests that an agent's settings class keeps `rlrep.core.AgentConfig`, the contract launchers rely on. Mix it into
  a pytest class and name the class:

      class TestD4PGConfig(testing.AgentConfigTestMixin):
        config_class = D4PGConfig
  """
  config_class: type

  def test_it_has_every_setting_launchers_read(self):
    config = self.config_class()
    missing = [name for name in core.AgentConfig.__annotations__ if not hasattr(config, name)]
    assert not missing, f"{self.config_class.__name__} lacks {', '.join(missing)} (see rlrep.core.AgentConfig)"
    assert isinstance(config, core.AgentConfig)

  def test_it_is_a_frozen_dataclass(self):
    assert dataclasses.is_dataclass(self.config_class) and self.config_class.__dataclass_params__.frozen, (
        f"{self.config_class.__name__} must be a @dataclasses.dataclass(frozen=True): its fields are the options")

  def test_every_field_is_in_exactly_one_help_section(self):
    fields = {field.name for field in dataclasses.fields(self.config_class)}
    placed = [name for names in self.config_class.OPTION_GROUPS.values() for name in names]
    twice = sorted({name for name in placed if placed.count(name) > 1})
    assert not twice and set(placed) == fields, (
        f"{self.config_class.__name__}.OPTION_GROUPS must place every field once: placed twice {twice}, missing "
        f"{sorted(fields - set(placed))}, unknown {sorted(set(placed) - fields)}")

  def test_its_efficiency_settings_are_its_fields(self):
    unknown = set(self.config_class.EFFICIENCY_SETTINGS) - {f.name for f in dataclasses.fields(self.config_class)}
    assert not unknown, f"{self.config_class.__name__}.EFFICIENCY_SETTINGS names no field {sorted(unknown)}"

  def test_what_launchers_read_has_the_values_they_expect(self):
    config = self.config_class()
    assert isinstance(config.pixels, bool) and config.precision in PRECISIONS
    for name in ("action_repeat", "max_replay_size", "replay_bytes_per_step", "weights_update_period"):
      value = getattr(config, name)
      assert isinstance(value, int) and value >= 1, f"{name} must be a whole number >= 1, got {value!r}"

  def test_it_comes_back_from_its_json_by_keyword(self):
    config = self.config_class()
    saved = json.loads(json.dumps(dataclasses.asdict(config)))  # as an experiment.json holds it
    restored = self.config_class(**{name: tuple(value) if isinstance(value, list) else value
                                    for name, value in saved.items()})
    assert restored == config
