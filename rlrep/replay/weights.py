"""Learner-to-actor weights through a max_size=1 Reverb table, with a version number.

The version is the learner's step count when the weights were published. An actor's staleness is how
many learner steps behind its weights were when it last looked: `latest version seen - version in use`
just before it pulls, i.e. how far behind it acted during the last pull period.
"""

from __future__ import annotations

import time
from typing import Callable, Mapping

import numpy as np
import reverb
import tree

from rlrep import core
from rlrep.replay.tables import WEIGHTS_TABLE

PUBLISH_TIMEOUT_S = 60.0  # a publication to a server that is gone fails instead of blocking the learner


class WeightPublisher:
  """Learner side: overwrites the table's single item with (version, params).

  One trajectory writer serves every publication: `reverb.Client.insert` opens a new writer (and stream) per
  call, which grew a training learner's memory by kilobytes per publication (benchmarks/results/soak).
  """

  def __init__(self, client: reverb.Client, table: str = WEIGHTS_TABLE):
    self._client = client
    self._table = table
    self._writer: reverb.TrajectoryWriter | None = None  # opened by the first publication, once checked

  def publish(self, version: int, params: Mapping[str, np.ndarray]) -> None:
    """`params` by name. The first publication is checked against the table's signature (the policy's
    weights): Reverb itself compares only shapes in name order, so a renamed weight would pass it."""
    if self._writer is None:
      signature = self._client.server_info(timeout=10)[self._table].signature
      core.check_params(signature["params"], params, f"the weights published to table {self._table!r}")
      self._writer = self._client.trajectory_writer(num_keep_alive_refs=1)  # only the newest step is kept
    self._writer.append({"version": np.int64(version),
                         "params": {name: np.asarray(value) for name, value in params.items()}})
    self._writer.create_item(self._table, priority=1.0,  # the newest step, without a time axis: the signature's shapes
                             trajectory=tree.map_structure(lambda column: column[-1], self._writer.history))
    try:
      self._writer.flush(timeout_ms=int(PUBLISH_TIMEOUT_S * 1000))
    except reverb.errors.DeadlineExceededError:
      raise TimeoutError(f"the replay server did not take the weights within {PUBLISH_TIMEOUT_S:.0f}s; "
                         "is it still running?") from None


class WeightClient:
  """Actor side: pulls the newest weights at most every `update_period` agent steps (`maybe_update`)."""

  def __init__(self, client: reverb.Client, update_period: int = 1000, table: str = WEIGHTS_TABLE):
    if update_period < 1:
      raise ValueError(f"update_period must be >= 1 actor steps, got {update_period}.")
    self._client = client
    self._table = table
    self._update_period = update_period
    self._steps_since_pull: int | None = None  # None: never pulled
    self.version: int | None = None  # version in use; None before the learner has published
    self.params: dict[str, np.ndarray] | None = None
    self.staleness = 0

  def maybe_update(self, steps: int = 1) -> bool:
    """Call before acting `steps` agent steps (e.g. one per environment of a round). Pulls on the first
    call and then once `update_period` steps have passed; returns whether the weights changed."""
    due = self._steps_since_pull is None or self._steps_since_pull >= self._update_period
    if due:
      self._steps_since_pull = 0
    self._steps_since_pull += steps
    return self.update() if due else False

  def update(self) -> bool:
    """Pulls the newest weights now, if any exist. Never blocks waiting for a first publication."""
    if self._client.server_info(timeout=10)[self._table].current_size == 0:
      return False
    sample = next(self._client.sample(self._table, num_samples=1, emit_timesteps=False,
                                      unpack_as_table_signature=True))
    version = int(sample.data["version"])
    if self.version is not None and version == self.version:
      self.staleness = 0
      return False
    self.staleness = 0 if self.version is None else version - self.version
    self.version = version
    self.params = {name: np.asarray(value) for name, value in sample.data["params"].items()}
    return True

  def wait(self, should_stop: Callable[[], bool], poll_s: float = 0.5) -> bool:
    """Blocks until the learner's first publication (True), or until `should_stop()` (False).

    Actors start from the learner's weights, whatever their own networks were initialised to.
    """
    while not self.update():
      if should_stop():
        return False
      time.sleep(poll_s)
    return True
