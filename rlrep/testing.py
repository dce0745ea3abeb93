"""A replication check researchers can run on their own model and step.

`assert_replicates` trains the same model from the same initial values on one device with global batch B
and on N logical CPU replicas that each get B/N of the same examples, then asserts that every variable
agrees after k steps. A correct data-parallel step (per-replica mean loss, `rlrep.wrap_optimizer`, metrics
through `rlrep.all_mean`) passes; the classic bugs do not:

* gradients never reduced (each replica applies its own gradient, so the copies drift apart);
* gradients reduced twice, or summed where they should be averaged (steps N times too large);
* statistics computed over the local batch where the step needs the global one.

>>> import tensorflow as tf, rlrep
>>> from rlrep import testing
>>> def build():
...   model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
...   model.build((None, 3))
...   return model, rlrep.wrap_optimizer(tf.keras.optimizers.SGD(0.1))
>>> def step(state, batch):
...   model, optimizer = state
...   optimizer.minimize(lambda: tf.reduce_mean((model(batch["x"]) - batch["y"]) ** 2),
...                      model.trainable_variables)
>>> batches = testing.random_batches({"x": (3,), "y": (1,)}, global_batch=8, steps=3)
>>> testing.assert_replicates(build, step, batches, num_replicas=4).max_abs_difference < 1e-5
True

Logical CPU devices must exist before TensorFlow initializes (`rlrep.configure_logical_cpus(N)` in a
conftest.py, or first thing in the script).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Iterator, Sequence

import numpy as np
import tensorflow as tf

from rlrep import replicator as replicator_lib

Nest = Any


class ReplicationMismatch(AssertionError):
  """Replicated training diverged from single-device training."""


@dataclasses.dataclass
class ReplicationReport:
  num_replicas: int
  steps: int
  max_abs_difference: float
  worst_variable: str


def random_batches(shapes: dict[str, tuple[int, ...]], global_batch: int, steps: int,
                   seed: int = 0) -> list[dict[str, np.ndarray]]:
  """`steps` global batches of float32 normal data with the given per-example shapes."""
  rng = np.random.default_rng(seed)
  return [{k: rng.normal(size=(global_batch, *s)).astype(np.float32) for k, s in shapes.items()}
          for _ in range(steps)]


def per_replica_iterator(repl: replicator_lib.Replicator, values: Sequence[Nest]) -> Iterator:
  """A distributed iterator on which replica r reads `values[r]` at every step (for tests of step_fns)."""
  if len(values) != repl.num_replicas:
    raise ValueError(f"got values for {len(values)} replicas; the replicator has {repl.num_replicas}.")
  dataset = repl.distribute_dataset(
      lambda context: tf.data.Dataset.from_tensors(values[context.replica_id]).repeat(), per_replica=True)
  return iter(dataset)


def _variables(state: Any) -> list[tf.Variable]:
  holder = tf.Module()
  holder.state = state
  return list(holder.variables)


def _train(repl: replicator_lib.Replicator, build: Callable[[], Any], step: Callable[[Any, Nest], Any],
           batches: Sequence[Nest], initial_values: list[np.ndarray] | None) -> tuple[list[tf.Variable], list]:
  with repl.scope():
    state = build()
  variables = _variables(state)
  if not variables:
    raise ValueError("build() created no variables: build the model (e.g. `model.build(input_shape)`) inside it.")
  if initial_values is not None:
    for variable, value in zip(variables, initial_values, strict=True):
      variable.assign(value)
  initial = [v.numpy() for v in variables]
  global_batch = len(tf.nest.flatten(batches[0])[0])
  per_replica = replicator_lib.per_replica_batch_size(global_batch, repl.num_replicas)

  def input_fn(context: replicator_lib.InputContext) -> tf.data.Dataset:
    # Replica r reads rows [r*b, (r+1)*b) of every global batch: together, exactly the one-device batches.
    start = context.replica_id * per_replica
    own_rows = [tf.nest.map_structure(lambda x: x[start:start + per_replica], batch) for batch in batches]
    stacked = tf.nest.map_structure(lambda *rows: np.stack(rows), *own_rows)
    return tf.data.Dataset.from_tensor_slices(stacked)

  iterator = iter(repl.distribute_dataset(input_fn, per_replica=True))
  repl.function(lambda batch: step(state, batch), steps_per_call=len(batches))(iterator)
  return variables, initial


def assert_replicates(build: Callable[[], Any], step: Callable[[Any, Nest], Any], batches: Sequence[Nest], *,
                      num_replicas: int = 4, atol: float = 1e-5, rtol: float = 1e-4) -> ReplicationReport:
  """Asserts that `step` trains identically on 1 device and on `num_replicas` logical CPU replicas.

  Args:
    build: creates the model state (Keras models, `rlrep.wrap_optimizer` optimizers, variables) with all
      variables built; called once under each replicator's scope.
    step: `step(state, batch)`, the single-device training step, run on every replica.
    batches: global batches (nested numpy arrays, leading axis = global batch, divisible by num_replicas).
    num_replicas: logical CPU replicas to compare against one device.
    atol, rtol: tolerance; float32 sums in another order differ in the last bits.

  Returns the report on success; raises `ReplicationMismatch` naming the worst variable otherwise.
  """
  if num_replicas < 2:
    raise ValueError(f"num_replicas must be >= 2 to compare against one device, got {num_replicas}.")
  single = replicator_lib.make_replicator("cpu:1")
  multi = replicator_lib.make_replicator(f"cpu:{num_replicas}")
  reference, initial = _train(single, build, step, batches, None)
  replicated, _ = _train(multi, build, step, batches, initial)
  worst_name, worst_difference, failures = "", 0.0, []
  for ref, rep in zip(reference, replicated, strict=True):
    expected, actual = ref.numpy(), _replica_values(multi, rep)
    for replica, value in enumerate(actual):
      difference = float(np.max(np.abs(value - expected))) if expected.size else 0.0
      if difference > worst_difference:
        worst_name, worst_difference = f"{ref.name} (replica {replica})", difference
      if not np.allclose(value, expected, atol=atol, rtol=rtol):
        failures.append(f"{ref.name} on replica {replica}: max |difference| {difference:.3g}")
  if failures:
    raise ReplicationMismatch(
        f"{num_replicas}-replica training differs from 1-device training after {len(batches)} step(s):\n  "
        + "\n  ".join(failures[:10]) +
        "\nLikely causes: gradients not averaged across replicas (use rlrep.wrap_optimizer), averaged or summed "
        "twice (a plain Keras optimizer sums replica gradients; wrap_optimizer must not be combined with your "
        "own all_mean of gradients), or a statistic taken over the local batch where the global one is needed.")
  return ReplicationReport(num_replicas, len(batches), worst_difference, worst_name)


def _replica_values(repl: replicator_lib.Replicator, variable: tf.Variable) -> list[np.ndarray]:
  """The value of every replica's copy: mirrored copies can drift apart when a step is wrong."""
  return [np.asarray(v) for v in repl.strategy.experimental_local_results(variable)]
