"""Cross-replica primitives, called inside a `step_fn` that `Replicator.run` runs on every replica.

Every primitive takes a nested structure (dicts, lists, tuples of tensors) and is collective: all replicas
must call it, in the same order. Calling one under a replica-dependent condition (`if replica_id() == 0:
all_sum(...)`) hangs the other replicas, as with any collective; compute on every replica and select.

tf.distribute reduces only with SUM and MEAN, gathers by concatenating, and has no broadcast. Here
`all_min`/`all_max` and `all_gather` stack a new leading replica axis, and `broadcast` is an all-sum of one
replica's value with zeros elsewhere (exact for every numeric dtype).

>>> import rlrep
>>> repl = rlrep.make_replicator("cpu:2")
>>> def step():
...   return rlrep.all_sum(rlrep.replica_id() + 1)
>>> [int(x) for x in repl.local_results(repl.function(step)())]
[3, 3]
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

Nest = Any


class ReplicaContextError(RuntimeError):
  """A primitive was called where no replicas exist to communicate with."""


def _context() -> tf.distribute.ReplicaContext:
  context = tf.distribute.get_replica_context()
  if context is None or not tf.distribute.has_strategy():
    where = ("in cross-replica context (inside `repl.scope()` but outside `repl.run`)" if context is None
             else "outside any replicator")
    raise ReplicaContextError(
        f"rlrep primitives run inside a step_fn on every replica; this call is {where}. "
        "Call it from the function you pass to `Replicator.run`, or reduce results after the step with "
        "`Replicator.reduce`.")
  return context


def replica_id() -> tf.Tensor:
  """This replica's index in 0..num_replicas()-1, as an int32 tensor."""
  return tf.cast(_context().replica_id_in_sync_group, tf.int32)


def num_replicas() -> int:
  """How many replicas run the step in sync (a Python int)."""
  return _context().num_replicas_in_sync


def _all_reduce(op: tf.distribute.ReduceOp, values: Nest) -> Nest:
  # tf.distribute keeps integer tensors in host memory and refuses to batch them with float tensors in one
  # all-reduce, so each kind is reduced in its own batch.
  context = _context()
  flat = [tf.convert_to_tensor(v) for v in tf.nest.flatten(values)]
  if context.num_replicas_in_sync == 1:
    # Nothing to combine; and a one-device MirroredStrategy cannot place a reduction of a tensor that
    # came from an input pipeline ("destinations can not be empty").
    return tf.nest.pack_sequence_as(values, flat)
  integer = [i for i, v in enumerate(flat) if v.dtype.is_integer]
  other = [i for i, v in enumerate(flat) if not v.dtype.is_integer]
  reduced = list(flat)
  for group in (integer, other):
    if group:
      for index, value in zip(group, context.all_reduce(op, [flat[i] for i in group])):
        reduced[index] = value
  return tf.nest.pack_sequence_as(values, reduced)


def all_sum(values: Nest) -> Nest:
  """Element-wise sum over replicas; every replica receives the result."""
  return _all_reduce(tf.distribute.ReduceOp.SUM, values)


def all_mean(values: Nest) -> Nest:
  """Element-wise mean over replicas; every replica receives the result (integers: rounded toward zero)."""
  return _all_reduce(tf.distribute.ReduceOp.MEAN, values)


def all_gather(values: Nest) -> Nest:
  """Stacks every replica's value along a new leading axis of size num_replicas(), in replica order."""
  context = _context()
  return tf.nest.map_structure(lambda v: context.all_gather(tf.expand_dims(v, 0), axis=0), values)


def all_min(values: Nest) -> Nest:
  """Element-wise minimum over replicas (gathers, then reduces: memory grows with the replica count)."""
  return tf.nest.map_structure(lambda v: tf.reduce_min(v, axis=0), all_gather(values))


def all_max(values: Nest) -> Nest:
  """Element-wise maximum over replicas (gathers, then reduces: memory grows with the replica count)."""
  return tf.nest.map_structure(lambda v: tf.reduce_max(v, axis=0), all_gather(values))


def broadcast(values: Nest, source_replica: int = 0) -> Nest:
  """Every replica receives `source_replica`'s value (e.g. to start replicas from one random draw)."""
  count = num_replicas()
  if not 0 <= source_replica < count:
    raise ValueError(f"source_replica={source_replica} is not a replica: there are {count} (0..{count - 1}).")
  is_source = tf.equal(replica_id(), source_replica)
  flat = [tf.convert_to_tensor(v) for v in tf.nest.flatten(values)]

  def contribution(value: tf.Tensor) -> tf.Tensor:
    numeric = tf.cast(value, tf.int32) if value.dtype == tf.bool else value  # collectives do not sum bools
    return tf.where(is_source, numeric, tf.zeros_like(numeric))

  summed = all_sum([contribution(v) for v in flat])
  restored = [tf.cast(s, tf.bool) if v.dtype == tf.bool else s for v, s in zip(flat, summed)]
  return tf.nest.pack_sequence_as(values, restored)
