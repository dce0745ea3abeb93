"""Writes each environment step to Reverb once and references it from n-step transition items.

See `rlrep.replay.signature` for the layout. Items for time t are created as soon as step t+n is written
(or at the episode's end, for the last n), so the learner never waits for an episode to finish.

Chunks. Reverb stores and compresses data in chunks of consecutive steps, one per column, and every chunk
costs some bytes of its own. Forcing each item out as soon as it is made leaves one-step chunks, which cost
more memory per step than longer ones (benchmarks/replay.py measures it). Columns here
use fixed `chunk_length` chunks and items wait on the client until their chunks are full, i.e. they reach
the server up to `chunk_length` steps later. The writer keeps `2 * chunk_length + history_length` steps
addressable: with less, an item sent late can reference a chunk the server has already let go of, and the
writer sends it again, and the server then stores those chunks twice. Larger chunks also make every
sample decompress more data, on the cores the learner needs: the default of 4 steps balances the two
(the figures: benchmarks/results/design-choices.md).

>>> # adder = NStepFrameAdder(client, layout, discount=0.99)
>>> # adder.observe_first(timestep); adder.observe(action, next_timestep); ...
"""

from __future__ import annotations

import time
from typing import Callable

import dm_env
import numpy as np
import reverb

from rlrep.replay.config import ReplayConfig
from rlrep.replay.connection import ServerUnavailableError, Watchdog
from rlrep.replay.signature import STACKED_KEY, StepLayout
from rlrep.replay.tables import REPLAY_TABLE


FLUSH_SLICE_MS = 1000  # a blocked insert re-checks `should_stop` this often


class WritingStopped(RuntimeError):
  """An insert was abandoned because `should_stop` said the run is over."""


class NStepFrameAdder:
  """Turns an actor's timesteps into frame-deduplicated n-step items in a Reverb table.

  Waiting. An insert held back by the rate limiter is flow control, not a fault: the actor waits as long
  as the learner needs (a first TPU compilation can take minutes) and the `watchdog`, if given, logs the
  table state while it does. The wait ends with `WritingStopped` once `should_stop()` is true (a stopped
  server does not release blocked writers), or with `ServerUnavailableError` once the server has not
  answered for `timeout_s`.
  """

  def __init__(self, client: reverb.Client, layout: StepLayout, *, table: str = REPLAY_TABLE,
               chunk_length: int = ReplayConfig.chunk_length, timeout_s: float = 60.0,
               watchdog: Watchdog | None = None, should_stop: Callable[[], bool] | None = None):
    self._layout = layout
    self._table = table
    if chunk_length < 1:
      raise ValueError(f"chunk_length must be >= 1 steps, got {chunk_length}.")
    self._chunk_length = chunk_length
    self._timeout_ms = int(timeout_s * 1000)
    self._watchdog = watchdog
    self._should_stop = should_stop or (lambda: False)
    keep_alive = 2 * chunk_length + layout.history_length
    self._client = client
    self._writer = client.trajectory_writer(num_keep_alive_refs=keep_alive)
    for path in layout.column_paths():
      self._writer.configure(path, num_keep_alive_refs=keep_alive, max_chunk_length=chunk_length)
    self._zero_action = np.zeros(layout.action_spec.shape, layout.action_spec.dtype)
    self._pending_frames: dict[str, np.ndarray] | None = None
    self._records = 0       # records written in this episode, padding included
    self._steps = 0         # real steps written in this episode
    self._next_item = 0     # the first time index without an item yet
    self.items_created = 0
    self.wait_s = 0.0  # time spent waiting for the server to accept items (rate limiter included)

  @property
  def _first_step_record(self) -> int:
    return self._layout.frame_stack - 1  # records before step 0 are copies of the first observation

  def observe_first(self, timestep: dm_env.TimeStep) -> None:
    if self._records:
      self._finish_episode()  # an episode abandoned mid-way: its last transitions are dropped
    self._pending_frames = self._layout.newest_frames(timestep.observation)
    for _ in range(self._first_step_record):
      self._append(self._zero_action, 0.0, 1.0, valid=0.0)

  def observe(self, action: np.ndarray, next_timestep: dm_env.TimeStep) -> None:
    if self._pending_frames is None:
      raise RuntimeError("observe() before observe_first(): start each episode with observe_first(timestep).")
    self._append(action, float(next_timestep.reward), float(next_timestep.discount), valid=1.0)
    self._steps += 1
    self._pending_frames = self._layout.newest_frames(next_timestep.observation)
    n = self._layout.n_step
    while self._next_item + n < self._steps:  # record of step t+n exists once steps > t+n
      self._create_item(self._next_item, n)
    if next_timestep.last():
      for _ in range(n):  # the final observation, then n-1 copies for rewards columns to reach into
        self._append(self._zero_action, 0.0, 1.0, valid=0.0)
      while self._next_item < self._steps:
        self._create_item(self._next_item, self._steps - self._next_item if self._next_item + n > self._steps else n)
      self._finish_episode()

  def _append(self, action, reward: float, discount: float, valid: float) -> None:
    self._writer.append({
        "observation": self._pending_frames,
        "action": np.asarray(action, dtype=self._layout.action_spec.dtype),
        "reward": np.float32(reward), "discount": np.float32(discount), "valid": np.float32(valid)})
    self._records += 1

  def _create_item(self, t: int, steps: int) -> None:
    """Item for time t whose next observation is `steps` (= min(n, T - t)) steps later."""
    history, k, n = self._writer.history, self._layout.frame_stack, self._layout.n_step

    def column(column_history, first_step: int, length: int, squeeze: bool = False) -> reverb.TrajectoryColumn:
      start = self._first_step_record + first_step - self._records  # negative: counted back from the newest
      return reverb.TrajectoryColumn([_ref(column_history, start + i) for i in range(length)], squeeze=squeeze)

    def stack(step: int) -> dict:
      return {key: column(history["observation"][key], step - k + 1, k) if key == STACKED_KEY
              else column(history["observation"][key], step, 1, squeeze=True)
              for key in self._layout.observation_spec}

    trajectory = {
        "observation": stack(t),
        "next_observation": stack(t + steps),
        "action": column(history["action"], t, 1, squeeze=True),
        "reward": column(history["reward"], t, n),
        "discount": column(history["discount"], t, n),
        "valid": column(history["valid"], t, n),
    }
    self._writer.create_item(self._table, 1.0, trajectory)  # sampling is uniform: priorities are unused
    self._next_item += 1
    self.items_created += 1
    if self.items_created % self._chunk_length == 0:
      # Older items reference only full chunks, so this waits for the server without cutting a chunk short.
      self._flush(self._chunk_length + self._layout.history_length)

  def _flush(self, block_until_num_items: int) -> None:
    start = time.perf_counter()
    try:
      if self._watchdog is None:
        self._flush_in_slices(block_until_num_items, start)
      else:
        with self._watchdog.watch("replay insert"):
          self._flush_in_slices(block_until_num_items, start)
    finally:
      self.wait_s += time.perf_counter() - start

  def _flush_in_slices(self, block_until_num_items: int, start: float) -> None:
    answered = start  # when the server last showed it is alive
    while True:
      try:
        self._writer.flush(block_until_num_items, timeout_ms=FLUSH_SLICE_MS)
        return
      except reverb.errors.DeadlineExceededError as error:
        if self._should_stop():
          raise WritingStopped("the run is stopping; pending replay inserts were dropped") from error
        if self._server_answers():
          answered = time.perf_counter()  # alive, so the rate limiter holds the items back: keep waiting
        elif (time.perf_counter() - answered) * 1000 >= self._timeout_ms:
          raise ServerUnavailableError(
              f"writing to Reverb table '{self._table}': the server has not answered for "
              f"{self._timeout_ms / 1000:.0f}s. Did the replay process die? (local and cluster modes say why "
              "in their log)") from error

  def _server_answers(self) -> bool:
    try:
      self._client.server_info(timeout=max(1, min(5, self._timeout_ms // 1000)))
      return True
    except Exception:  # reverb raises several types (DeadlineExceeded, RuntimeError) for one cause
      return False

  def _finish_episode(self) -> None:
    self._flush(0)
    self._writer.end_episode(clear_buffers=True, timeout_ms=self._timeout_ms)
    self._records = self._steps = self._next_item = 0
    self._pending_frames = None

  def close(self, finish_episode: bool = True) -> None:
    """Writes the open episode's last items (unless `finish_episode` is False) and closes the stream."""
    if self._records and finish_episode:
      self._finish_episode()
    self._writer.close()


def _ref(column_history, index: int):
  """The data reference of one step (negative index: counted back from the newest step)."""
  return next(iter(column_history[index]))
