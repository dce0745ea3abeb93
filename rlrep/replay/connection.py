"""Reaching the Reverb server without ever hanging silently.

`connect` retries with exponential backoff for a bounded time, then raises `ServerUnavailableError` saying
what to check. `Watchdog` logs, while an insert or a sample is blocked longer than a threshold, what it
waits for: the table sizes and the rate limiter's state, the usual explanation of a stalled run.

Reverb servers listen on every interface with no authentication: keep their port reachable only from
the job's own processes (loopback locally, a network policy on a cluster).
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import pathlib
import threading
import time
from typing import Iterator

import reverb


class ServerUnavailableError(ConnectionError):
  """The Reverb server did not answer within the allowed time."""


def connect(address: str, timeout_s: float = 30.0, first_backoff_s: float = 0.1) -> reverb.Client:
  """A client for `address` whose server answered; retries until `timeout_s` has passed."""
  deadline = time.monotonic() + timeout_s
  backoff, last_error = first_backoff_s, None
  while True:
    client = reverb.Client(address)
    remaining = deadline - time.monotonic()
    try:
      client.server_info(timeout=max(1, int(min(remaining, 5))))
      return client
    except Exception as error:  # reverb raises several types (DeadlineExceeded, RuntimeError) for one cause
      last_error = error
    remaining = deadline - time.monotonic()
    if remaining <= 0:
      raise ServerUnavailableError(
          f"Reverb server at {address} did not answer for {timeout_s:.0f}s ({type(last_error).__name__}: "
          f"{str(last_error).splitlines()[0] if str(last_error) else ''}). Is the replay process running and "
          "the address right? In local and cluster modes it is started by the launcher.")
    time.sleep(min(backoff, remaining))
    backoff = min(backoff * 2, 2.0)


def held_bytes(client: reverb.Client) -> int:
  """Bytes of replay data the server holds, measured as the size of a checkpoint it writes now.

  Checkpoints store the server's chunks as they sit in memory (compressed), so this is the memory replay
  costs. The server must have been created with a checkpointer, e.g.
  `reverb.Server(tables, checkpointer=reverb.checkpointers.DefaultCheckpointer(directory))`.
  """
  path = pathlib.Path(client.checkpoint())
  return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def describe_tables(client: reverb.Client, timeout_s: int = 2) -> str:
  """One line per table: size, limits and rate-limiter statistics."""
  try:
    info = client.server_info(timeout=timeout_s)
  except Exception as error:
    return f"server did not answer ({type(error).__name__})"
  lines = []
  for name, table in info.items():
    limiter = table.rate_limiter_info
    flat = lambda message: " ".join(str(message).split()) or "none"  # noqa: E731  (proto text on one line)
    lines.append(
        f"table {name}: {table.current_size}/{table.max_size} items, {table.num_episodes} episodes; rate limiter "
        f"samples_per_insert={limiter.samples_per_insert:g} min_size_to_sample={limiter.min_size_to_sample} "
        f"diff range=[{limiter.min_diff:g}, {limiter.max_diff:g}]; insert calls: {flat(limiter.insert_stats)}; "
        f"sample calls: {flat(limiter.sample_stats)}")
  return "; ".join(lines)


class Watchdog:
  """Logs the replay state whenever a watched operation has been blocked longer than `threshold_s`.

  >>> # with watchdog.watch("insert"): writer.flush()
  """

  def __init__(self, client: reverb.Client, threshold_s: float = 30.0, logger: logging.Logger | None = None):
    self._client = client
    self._threshold_s = threshold_s
    self._logger = logger or logging.getLogger("rlrep.replay")
    self._active: dict[int, tuple[str, float]] = {}
    self._tokens = itertools.count()
    self._lock = threading.Lock()
    self._stop = threading.Event()
    self._thread = threading.Thread(target=self._run, name="reverb-watchdog", daemon=True)
    self._thread.start()
    self.reports = 0

  @contextlib.contextmanager
  def watch(self, operation: str) -> Iterator[None]:
    with self._lock:
      token = next(self._tokens)
      self._active[token] = (operation, time.monotonic())
    try:
      yield
    finally:
      with self._lock:
        self._active.pop(token, None)

  def _run(self) -> None:
    while not self._stop.wait(min(self._threshold_s / 2, 5.0)):
      now = time.monotonic()
      with self._lock:
        blocked = [(op, now - start) for op, start in self._active.values() if now - start > self._threshold_s]
      for operation, seconds in blocked:
        self.reports += 1
        self._logger.warning("%s has been blocked for %.0fs waiting on Reverb: %s", operation, seconds,
                             describe_tables(self._client))

  def close(self) -> None:
    self._stop.set()
    self._thread.join(timeout=10)
