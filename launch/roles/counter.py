"""The counter role: run-wide counts, recent episode returns, the stop signal every role watches, and the
lines meant for the user's terminal.

In-process it is shared by threads (hence the lock); in local and cluster modes it lives in its own Ray
actor and roles call it through a handle with the same methods. Roles never print: they `announce`, and the
driver prints (in-process the counter echoes at once), so local mode's terminal reads like in-process mode's,
without Ray's per-process prefixes.
"""

from __future__ import annotations

import collections
import threading
import time


class Counter:
  """Frames, episodes and learner steps so far, plus each actor's latest report."""

  def __init__(self, frames: int = 0, episodes: int = 0, learner_steps: int = 0, recent_returns: int = 10,
               echo: bool = False, kept_messages: int = 1000):
    self._lock = threading.Lock()
    self._frames, self._episodes, self._learner_steps = frames, episodes, learner_steps
    self._resumed_at_frames = frames  # a resumed run's speed counts only the frames it stepped itself
    self._returns: collections.deque[float] = collections.deque(maxlen=recent_returns)
    self._actor_reports: dict[int, dict] = {}
    self._actor_starts: collections.Counter[int] = collections.Counter()
    self._stop_reason: str | None = None
    self._learner_done = False
    self._started = time.time()
    self._echo = echo
    self._messages: collections.deque[str] = collections.deque(maxlen=kept_messages)
    self._announced = 0

  def actor_started(self, actor_id: int) -> int:
    """Records an actor (re)start; returns how many times this actor has started."""
    with self._lock:
      self._actor_starts[actor_id] += 1
      return self._actor_starts[actor_id]

  def add_actor_progress(self, actor_id: int, frames: int, episode_returns: list[float], report: dict) -> int:
    """Adds an actor's new frames and finished episodes; returns the run's total frames."""
    with self._lock:
      self._frames += frames
      self._episodes += len(episode_returns)
      self._returns.extend(episode_returns)
      self._actor_reports[actor_id] = report
      return self._frames

  def set_learner_steps(self, steps: int) -> None:
    with self._lock:
      self._learner_steps = steps

  def request_stop(self, reason: str) -> None:
    with self._lock:
      if self._stop_reason is None:
        self._stop_reason = reason

  def mark_learner_done(self) -> None:
    """The learner has published its final weights and written its final checkpoint."""
    with self._lock:
      self._learner_done = True

  def stop_reason(self) -> str | None:
    with self._lock:
      return self._stop_reason

  def announce(self, line: str) -> None:
    """A line for the user (progress, evaluation, a role's warning): printed now if the counter echoes,
    and kept for `messages` (the newest `kept_messages` of them)."""
    with self._lock:
      self._messages.append(line)
      self._announced += 1
      if self._echo:
        print(line, flush=True)

  def messages(self, after: int = 0) -> tuple[list[str], int]:
    """The announced lines numbered `after` and up (lines dropped from the window are skipped), and the
    number to pass next time.

    >>> counter = Counter()
    >>> counter.announce("one"); counter.announce("two")
    >>> counter.messages(after=1)
    (['two'], 2)
    """
    with self._lock:
      first_kept = self._announced - len(self._messages)
      return list(self._messages)[max(after - first_kept, 0):], self._announced

  def snapshot(self) -> dict:
    with self._lock:
      returns = list(self._returns)
      return {"frames": self._frames, "episodes": self._episodes, "learner_steps": self._learner_steps,
              "recent_return": sum(returns) / len(returns) if returns else float("nan"),
              "actors": dict(self._actor_reports), "actor_starts": dict(self._actor_starts),
              "stop_reason": self._stop_reason, "learner_done": self._learner_done,
              "resumed_at_frames": self._resumed_at_frames, "elapsed_s": time.time() - self._started}
