"""Learner input: Reverb items become n-step transitions, batched per replica.

A transition is {observation, action, reward, discount, next_observation} where
  reward   = sum_i c_i r_{t+i+1},  c_0 = 1, c_{i+1} = c_i * gamma * d_{t+i+1}   (valid steps only)
  discount = c_m: the factor on the bootstrap value of next_observation (0 after a termination;
             gamma^m after a time-limit truncation, which keeps bootstrapping).
"""

from __future__ import annotations

from typing import Any, Callable

import reverb
import tensorflow as tf

from rlrep import replicator
from rlrep.replay.signature import STACKED_KEY, StepLayout
from rlrep.replay.tables import REPLAY_TABLE


def item_to_transition(item: dict, layout: StepLayout, discount: float) -> dict:
  """Rebuilds stacked observations and n-step sums from one item or a batch of them (leading axes kept).

  The learner's input applies it to whole batches: a few large ops per batch instead of a few small ones per
  item, which spends less of the CPU time the learner's cores pay for (benchmarks/results/design-choices.md).
  """
  def unstack(observation: dict) -> dict:  # [..., k, H, W, C] -> [..., H, W, kC], oldest frame first
    return {key: tf.concat(tf.unstack(value, axis=-4), axis=-1) if key == STACKED_KEY else value
            for key, value in observation.items()}

  observation, next_observation = unstack(item["observation"]), unstack(item["next_observation"])
  # A padding step (valid 0) has reward 0 and must not discount: its factor is 1.
  factors = (item["valid"] * discount + (1.0 - item["valid"])) * item["discount"]
  weights = tf.math.cumprod(factors, axis=-1, exclusive=True)
  return {"observation": observation, "action": item["action"],
          "reward": tf.reduce_sum(weights * item["reward"] * item["valid"], axis=-1),
          "discount": tf.reduce_prod(factors, axis=-1), "next_observation": next_observation}


def make_dataset(server_address: str, layout: StepLayout, discount: float, batch_size: int, *,
                 table: str = REPLAY_TABLE, prefetch: int = 2,
                 end_after_idle_s: float | None = None) -> tf.data.Dataset:
  """Batches of `batch_size` transitions sampled from `table`.

  Training waits as long as the rate limiter says (`end_after_idle_s=None`). With a number, the dataset
  ends once no sample has been allowed for that long: for draining a table, e.g. in evaluation and tests.
  """
  samples = reverb.TrajectoryDataset(
      server_address=server_address, table=table, max_in_flight_samples_per_worker=2 * batch_size,
      rate_limiter_timeout_ms=-1 if end_after_idle_s is None else int(end_after_idle_s * 1000),
      dtypes=tf.nest.map_structure(lambda s: s.dtype, layout.item_signature()),
      shapes=tf.nest.map_structure(lambda s: s.shape, layout.item_signature()))
  batches = samples.batch(batch_size, drop_remainder=True)
  return batches.map(lambda sample: item_to_transition(sample.data, layout, discount)).prefetch(prefetch)


def make_input_fn(server_address: str, layout: StepLayout, discount: float, global_batch_size: int, *,
                  table: str = REPLAY_TABLE, end_after_idle_s: float | None = None,
                  wrap: bool = False) -> Callable[[replicator.InputContext], tf.data.Dataset]:
  """An rlrep `input_fn`: each replica (or host) reads its own share of the global batch from Reverb.

  Use with `repl.distribute_dataset(input_fn, per_replica=True)`; Reverb's dataset op runs on the host CPU,
  which is what TPUs need too. With `wrap`, each batch comes as one tensor (`wrap_batches`).
  """
  def input_fn(context: replicator.InputContext) -> tf.data.Dataset:
    dataset = make_dataset(server_address, layout, discount, context.per_replica_batch_size(global_batch_size),
                           table=table, end_after_idle_s=end_after_idle_s)
    return wrap_batches(dataset) if wrap else dataset
  return input_fn


def wrap_batches(dataset: tf.data.Dataset) -> tf.data.Dataset:
  """Each batch wrapped in a `tf.experimental.Optional`: one tensor where Python reads it, not one per field.

  Every tensor TensorFlow 2.15 hands to Python 3.11 leaves about 40 bytes behind for good
  (tensorflow/tensorflow#62551), so a learner that reads its batches in Python (to time its wait for replay)
  reads them wrapped, and opens them inside its compiled step with `unwrap_batch`. TPUs cannot take the
  wrapper as an input.

  >>> batches = iter(wrap_batches(tf.data.Dataset.from_tensors({"reward": [1.0, 0.5]})))
  >>> float(tf.reduce_sum(unwrap_batch(next(batches))["reward"]))
  1.5
  """
  return dataset.map(tf.experimental.Optional.from_value)


def unwrap_batch(batch: Any) -> Any:
  """The batch inside a `wrap_batches` wrapper; any other batch unchanged."""
  return batch.get_value() if isinstance(batch, tf.experimental.Optional) else batch
