"""Learner input: Reverb items become n-step transitions, batched per replica.

A transition is {observation, action, reward, discount, next_observation} where
  reward   = sum_i c_i r_{t+i+1},  c_0 = 1, c_{i+1} = c_i * gamma * d_{t+i+1}   (valid steps only)
  discount = c_m: the factor on the bootstrap value of next_observation (0 after a termination;
             gamma^m after a time-limit truncation, which keeps bootstrapping).
"""

from __future__ import annotations

from typing import Callable

import reverb
import tensorflow as tf

from rlrep import replicator
from rlrep.replay.signature import STACKED_KEY, StepLayout
from rlrep.replay.tables import REPLAY_TABLE


def item_to_transition(item: dict, layout: StepLayout, discount: float) -> dict:
  """Rebuilds stacked observations and n-step sums from one item (works on single items, in tf.data)."""
  def unstack(observation: dict) -> dict:  # [k, H, W, C] -> [H, W, kC], oldest frame first
    return {key: tf.concat(tf.unstack(value), axis=-1) if key == STACKED_KEY else value
            for key, value in observation.items()}

  observation, next_observation = unstack(item["observation"]), unstack(item["next_observation"])
  # A padding step (valid 0) has reward 0 and must not discount: its factor is 1.
  factors = (item["valid"] * discount + (1.0 - item["valid"])) * item["discount"]
  weights = tf.math.cumprod(factors, exclusive=True)
  return {"observation": observation, "action": item["action"],
          "reward": tf.reduce_sum(weights * item["reward"] * item["valid"]),
          "discount": tf.reduce_prod(factors), "next_observation": next_observation}


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
  transitions = samples.map(lambda sample: item_to_transition(sample.data, layout, discount),
                            num_parallel_calls=tf.data.AUTOTUNE)
  return transitions.batch(batch_size, drop_remainder=True).prefetch(prefetch)


def make_input_fn(server_address: str, layout: StepLayout, discount: float, global_batch_size: int, *,
                  table: str = REPLAY_TABLE,
                  end_after_idle_s: float | None = None) -> Callable[[replicator.InputContext], tf.data.Dataset]:
  """An rlrep `input_fn`: each replica (or host) reads its own share of the global batch from Reverb.

  Use with `repl.distribute_dataset(input_fn, per_replica=True)`; Reverb's dataset op runs on the host CPU,
  which is what TPUs need too.
  """
  def input_fn(context: replicator.InputContext) -> tf.data.Dataset:
    return make_dataset(server_address, layout, discount, context.per_replica_batch_size(global_batch_size),
                        table=table, end_after_idle_s=end_after_idle_s)
  return input_fn
