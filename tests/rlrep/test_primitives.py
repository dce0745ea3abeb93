"""rlrep.primitives against numpy on 1, 2, 4 and 8 logical CPU replicas."""

import numpy as np
import pytest
import tensorflow as tf

import rlrep
from rlrep import testing

REPLICAS = [1, 2, 4, 8]


def _per_replica_inputs(count):
  """Replica r holds a distinct nested structure; returns (distributed values, numpy stack over replicas)."""
  rng = np.random.default_rng(count)
  values = [{"a": rng.normal(size=(3, 2)).astype(np.float32), "b": (rng.integers(-50, 50, size=4).astype(np.int32),)}
            for _ in range(count)]
  stacked = {"a": np.stack([v["a"] for v in values]), "b": (np.stack([v["b"][0] for v in values]),)}
  return values, stacked


def _run_on_replicas(count, primitive):
  repl = rlrep.make_replicator(f"cpu:{count}")
  values, stacked = _per_replica_inputs(count)
  results = repl.local_results(repl.function(primitive)(testing.per_replica_iterator(repl, values)))
  return results, stacked


@pytest.mark.parametrize("count", REPLICAS)
@pytest.mark.parametrize("primitive, reference", [
    (rlrep.all_sum, lambda x: x.sum(axis=0)),
    (rlrep.all_mean, lambda x: x.mean(axis=0)),
    (rlrep.all_min, lambda x: x.min(axis=0)),
    (rlrep.all_max, lambda x: x.max(axis=0)),
    (rlrep.all_gather, lambda x: x),
])
def test_reduction_matches_numpy_on_every_replica(count, primitive, reference):
  results, stacked = _run_on_replicas(count, primitive)
  assert len(results) == count
  for result in results:
    np.testing.assert_allclose(result["a"], reference(stacked["a"]), rtol=1e-6, atol=1e-6)
    if primitive is not rlrep.all_mean:  # integer mean rounds in TF; floats are checked above
      np.testing.assert_array_equal(result["b"][0], reference(stacked["b"][0]))


@pytest.mark.parametrize("count", REPLICAS)
def test_broadcast_gives_every_replica_the_source_value_exactly(count):
  source = count - 1
  results, stacked = _run_on_replicas(count, lambda v: rlrep.broadcast(v, source_replica=source))
  for result in results:
    np.testing.assert_array_equal(result["a"], stacked["a"][source])
    np.testing.assert_array_equal(result["b"][0], stacked["b"][0][source])


def test_broadcast_handles_booleans():
  repl = rlrep.make_replicator("cpu:4")
  flags = repl.local_results(repl.function(lambda: rlrep.broadcast(tf.equal(rlrep.replica_id(), 2), 2))())
  assert [bool(f) for f in flags] == [True] * 4


@pytest.mark.parametrize("count", REPLICAS)
def test_replica_id_and_num_replicas(count):
  repl = rlrep.make_replicator(f"cpu:{count}")
  results = repl.local_results(repl.function(lambda: (rlrep.replica_id(), rlrep.num_replicas()))())
  assert [int(r[0]) for r in results] == list(range(count))
  assert all(int(r[1]) == count for r in results)


def test_broadcast_rejects_a_source_that_is_not_a_replica():
  repl = rlrep.make_replicator("cpu:2")
  with pytest.raises(ValueError, match="source_replica=5 is not a replica: there are 2"):
    repl.function(lambda: rlrep.broadcast(tf.constant(1.0), source_replica=5))()


def test_primitives_outside_a_replicator_explain_where_to_call_them():
  with pytest.raises(rlrep.ReplicaContextError, match="outside any replicator"):
    rlrep.all_sum(tf.constant(1.0))


def test_primitives_in_cross_replica_context_explain_where_to_call_them():
  repl = rlrep.make_replicator("cpu:2")
  with repl.scope(), pytest.raises(rlrep.ReplicaContextError, match="cross-replica context"):
    rlrep.all_mean(tf.constant(1.0))
