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

from rlrep import core
from rlrep.replay.tables import WEIGHTS_TABLE


class WeightPublisher:
  """Learner side: overwrites the table's single item with (version, params)."""

  def __init__(self, client: reverb.Client, table: str = WEIGHTS_TABLE):
    self._client = client
    self._table = table
    self._checked = False

  def publish(self, version: int, params: Mapping[str, np.ndarray]) -> None:
    """`params` by name. The first publication is checked against the table's signature (the policy's
    weights): Reverb itself compares only shapes in name order, so a renamed weight would pass it."""
    if not self._checked:
      signature = self._client.server_info(timeout=10)[self._table].signature
      core.check_params(signature["params"], params, f"the weights published to table {self._table!r}")
      self._checked = True
    self._client.insert({"version": np.int64(version),
                         "params": {name: np.asarray(value) for name, value in params.items()}},
                        priorities={self._table: 1.0})


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
    # An item inserted as one step comes back with a leading time axis of length 1.
    version = int(np.asarray(sample.data["version"]).reshape(-1)[0])
    if self.version is not None and version == self.version:
      self.staleness = 0
      return False
    self.staleness = 0 if self.version is None else version - self.version
    self.version = version
    self.params = {name: np.asarray(value)[0] for name, value in sample.data["params"].items()}
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
