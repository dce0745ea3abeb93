"""Reverb tables: the n-step replay table and the learner-to-actor weights table, built from specs."""

from __future__ import annotations

from typing import Mapping

import reverb
import tensorflow as tf

from rlrep.replay.config import ReplayConfig
from rlrep.replay.signature import StepLayout

REPLAY_TABLE = "replay"
WEIGHTS_TABLE = "weights"


def replay_table(layout: StepLayout, config: ReplayConfig, name: str = REPLAY_TABLE) -> reverb.Table:
  """Uniform sampling, FIFO removal, and a sample-to-insert rate limiter from `config`."""
  if config.samples_per_insert is None:
    limiter = reverb.rate_limiters.MinSize(config.min_replay_size)
  else:
    limiter = reverb.rate_limiters.SampleToInsertRatio(
        samples_per_insert=config.samples_per_insert, min_size_to_sample=config.min_replay_size,
        error_buffer=config.resolved_error_buffer)
  return reverb.Table(name=name, sampler=reverb.selectors.Uniform(), remover=reverb.selectors.Fifo(),
                      max_size=config.max_replay_size, rate_limiter=limiter,
                      signature=layout.item_signature())


def weights_signature(variables: Mapping[str, tf.TensorSpec]) -> dict:
  return {"version": tf.TensorSpec((), tf.int64), "params": dict(variables)}


def weights_table(params_specs: Mapping[str, tf.TensorSpec], name: str = WEIGHTS_TABLE) -> reverb.Table:
  """Holds only the newest weights (max_size 1), by name: actors read, the learner overwrites."""
  return reverb.Table(name=name, sampler=reverb.selectors.Lifo(), remover=reverb.selectors.Fifo(), max_size=1,
                      rate_limiter=reverb.rate_limiters.MinSize(1), signature=weights_signature(params_specs))
