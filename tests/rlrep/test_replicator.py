"""rlrep.replicator: specs, strategy choice, input contexts, compiled steps and errors."""

import json
import pathlib

import numpy as np
import pytest
import tensorflow as tf

import rlrep
from rlrep import replicator, testing


@pytest.mark.parametrize("spec, expected", [
    ("auto", replicator.ReplicatorSpec("auto")),
    ("cpu", replicator.ReplicatorSpec("cpu", count=1)),
    ("cpu:4", replicator.ReplicatorSpec("cpu", count=4)),
    ("gpu", replicator.ReplicatorSpec("gpu")),
    ("gpu:2", replicator.ReplicatorSpec("gpu", count=2)),
    ("tpu", replicator.ReplicatorSpec("tpu", address="local")),
    ("tpu:grpc://10.0.0.2:8470", replicator.ReplicatorSpec("tpu", address="grpc://10.0.0.2:8470")),
    ("multi_worker", replicator.ReplicatorSpec("multi_worker")),
])
def test_spec_strings_parse(spec, expected):
  assert replicator.parse_spec(spec) == expected


@pytest.mark.parametrize("spec, message", [
    ("cpus:2", "unknown replicator spec 'cpus:2'"),
    ("mirrored", "unknown replicator spec"),
    ("cpu:0", "positive integer"),
    ("gpu:two", "positive integer"),
    ("auto:3", "unknown replicator spec"),
])
def test_bad_spec_strings_are_refused_with_the_valid_ones_listed(spec, message):
  with pytest.raises(ValueError, match=message):
    rlrep.make_replicator(spec)


@pytest.mark.parametrize("tpu, gpus, expected", [(True, 4, "tpu"), (False, 2, "gpu"), (False, 0, "cpu")])
def test_auto_prefers_tpu_then_gpus_then_one_cpu(tpu, gpus, expected):
  assert replicator.choose_auto_spec(tpu, gpus) == expected


def test_auto_on_this_machine_is_one_cpu():
  assert rlrep.make_replicator("auto").num_replicas == 1


def test_tpu_detection_reads_tpu_name():
  assert replicator.tpu_present({"TPU_NAME": "my-tpu"})


def test_missing_tpu_says_what_was_found():
  if replicator.tpu_present():
    pytest.skip("this host has a TPU")
  with pytest.raises(RuntimeError, match=r"asked for a TPU but this host has none .*devices found: .*CPU:0"):
    rlrep.make_replicator("tpu")


def test_missing_gpus_say_what_was_found():
  if tf.config.list_physical_devices("GPU"):
    pytest.skip("this host has GPUs")
  with pytest.raises(RuntimeError, match=r"asked for 2 GPU\(s\) but TensorFlow sees 0 \(devices found: .*CPU:0"):
    rlrep.make_replicator("gpu:2")


def test_logical_cpus_after_initialization_explain_the_fix():
  configured = len(tf.config.list_logical_devices("CPU"))
  with pytest.raises(RuntimeError, match=rf"already initialized its devices with {configured}.*before any TensorFlow op"):
    rlrep.make_replicator(f"cpu:{configured + 1}")


@pytest.mark.parametrize("environ, message", [
    ({}, "needs TF_CONFIG"),
    ({"TF_CONFIG": "{not json"}, "TF_CONFIG is malformed"),
    ({"TF_CONFIG": json.dumps({"cluster": {}})}, "TF_CONFIG is malformed"),
    ({"TF_CONFIG": json.dumps({"cluster": {"worker": ["a:1"]}, "task": {"type": "ps", "index": 0}})}, "does not name"),
])
def test_multi_worker_needs_a_valid_tf_config(environ, message):
  with pytest.raises(ValueError, match=message):
    replicator.read_tf_config(environ)


@pytest.mark.parametrize("global_batch, replicas", [(10, 4), (0, 2), (3, 8)])
def test_global_batch_must_divide_over_replicas(global_batch, replicas):
  with pytest.raises(ValueError, match=f"does not divide evenly over {replicas} replicas"):
    replicator.per_replica_batch_size(global_batch, replicas)


@pytest.mark.parametrize("count", [1, 2, 4, 8])
def test_per_worker_input_deals_per_replica_batches_in_turn(count):
  repl = rlrep.make_replicator(f"cpu:{count}")
  contexts = []

  def input_fn(context):
    contexts.append(context)
    batch = context.per_replica_batch_size(2 * count)
    return tf.data.Dataset.range(1000).batch(batch)

  iterator = iter(repl.distribute_dataset(input_fn))
  first, second = (repl.local_results(repl.function(lambda b: b)(iterator)) for _ in range(2))
  assert [list(b.numpy()) for b in first] == [[2 * r, 2 * r + 1] for r in range(count)]
  assert int(second[0][0]) == 2 * count
  assert len(contexts) == 1 and contexts[0].replica_id is None and contexts[0].num_replicas == count


def test_per_replica_input_calls_input_fn_once_per_replica_with_its_id():
  repl = rlrep.make_replicator("cpu:4")
  seen = []

  def input_fn(context):
    seen.append(context.replica_id)
    return tf.data.Dataset.from_tensors(tf.constant(context.replica_id * 10)).repeat()

  values = repl.local_results(repl.function(lambda x: x)(iter(repl.distribute_dataset(input_fn, per_replica=True))))
  assert sorted(seen) == [0, 1, 2, 3]
  assert [int(v) for v in values] == [0, 10, 20, 30]


@pytest.mark.parametrize("steps_per_call", [1, 2, 5])
def test_several_steps_per_call_run_that_many_steps_and_return_the_last(steps_per_call):
  repl = rlrep.make_replicator("cpu:2")
  with repl.scope():
    counter = tf.Variable(0, dtype=tf.int64)

  def step(batch):
    counter.assign_add(1)  # mirrored: the same on both replicas
    return tf.reduce_sum(batch)

  dataset = repl.distribute_dataset(lambda ctx: tf.data.Dataset.range(100).batch(1))
  iterator = iter(dataset)
  train = repl.function(step, steps_per_call=steps_per_call, reduce="sum")
  total = train(iterator)
  assert int(counter.numpy()) == steps_per_call
  last = 2 * steps_per_call - 2  # replicas read elements 2k and 2k+1 at step k
  assert int(total) == last + last + 1


@pytest.mark.parametrize("steps_per_call", [1, 3])
def test_batches_read_beforehand_run_as_the_iterator_would(steps_per_call):
  repl = rlrep.make_replicator("cpu:2")
  dataset = repl.distribute_dataset(lambda ctx: tf.data.Dataset.range(100).map(lambda x: x * x).batch(1))
  from_iterator = repl.function(lambda batch: tf.reduce_sum(batch), steps_per_call=steps_per_call, reduce="sum")
  from_batches = repl.function(lambda batch: tf.reduce_sum(batch), steps_per_call=steps_per_call, reduce="sum")
  first, second = iter(dataset), iter(dataset)
  for _ in range(3):  # the same compiled call with new batches: arguments, not constants baked in at tracing
    assert int(from_batches(tuple(next(second) for _ in range(steps_per_call)))) == int(from_iterator(first))
  with pytest.raises(ValueError, match=f"runs {steps_per_call} step\\(s\\) per call and was given "
                                       f"{steps_per_call + 1} batch"):
    from_batches(tuple(next(second) for _ in range(steps_per_call + 1)))


def test_reduce_and_local_results():
  repl = rlrep.make_replicator("cpu:4")
  values = repl.function(lambda: {"x": tf.cast(rlrep.replica_id(), tf.float32)})()
  assert float(repl.reduce(values, "sum")["x"]) == 6.0
  assert float(repl.reduce(values, "mean")["x"]) == 1.5
  assert [float(v["x"]) for v in repl.local_results(values)] == [0.0, 1.0, 2.0, 3.0]
  with pytest.raises(ValueError, match="unknown reduction 'max'"):
    repl.reduce(values, "max")


def test_bad_function_settings_are_refused():
  repl = rlrep.make_replicator("cpu:2")
  with pytest.raises(ValueError, match="steps_per_call must be >= 1"):
    repl.function(lambda: 0, steps_per_call=0)
  with pytest.raises(ValueError, match="unknown reduction 'median'"):
    repl.function(lambda: 0, reduce="median")


WORKER = """
import json
import tensorflow as tf
import rlrep
repl = rlrep.make_replicator("multi_worker")
with repl.scope():
  weight = tf.Variable(1.0)
  optimizer = rlrep.wrap_optimizer(tf.keras.optimizers.SGD(1.0))
def step():
  gradient = tf.cast(rlrep.replica_id(), tf.float32)  # worker 0: 0, worker 1: 1
  optimizer.apply_gradients([(gradient, weight)])
  return rlrep.all_sum(rlrep.replica_id() + 1), rlrep.all_max(rlrep.replica_id())
total, largest = repl.function(step)()
print(json.dumps({"replicas": repl.num_replicas, "sum": int(repl.local_results(total)[0]),
                  "max": int(repl.local_results(largest)[0]), "weight": float(weight.numpy()),
                  "host": repl.host_index, "hosts": repl.num_hosts, "chief": repl.is_chief,
                  "any_host": repl.any_host(repl.host_index == 1, False, True)}))
"""


def test_multi_worker_across_two_local_processes():
  outputs = testing.run_hosts(WORKER, hosts=2, timeout_s=240, cwd=str(pathlib.Path(__file__).parents[2]))
  results = [json.loads(output.strip().splitlines()[-1]) for output in outputs]
  for host, result in enumerate(results):
    # any_host: host 1 raised the first flag, nobody the second, both the third: every host hears the same
    assert result == {"replicas": 2, "sum": 3, "max": 1, "weight": 0.5, "host": host, "hosts": 2,
                      "chief": host == 0, "any_host": [True, False, True]}
