"""Replay settings, checked up front: a bad combination fails here, not as a silent stall hours later.

Rate-limiter deadlocks are the most reported failure of Reverb-based agents. The rules enforced here:

* `min_replay_size <= max_replay_size`: FIFO removal keeps the table at most `max_replay_size` items, so a
  larger minimum is never reached and the learner waits forever.
* `error_buffer >= batch_size` and `>= samples_per_insert`: the learner takes a batch as `batch_size`
  separate samples. With a tolerance smaller than a batch, a learner blocked half-way through a batch
  waits for inserts, while actors are blocked waiting for samples: neither side moves.
* `min_replay_size >= 1`, `batch_size >= 1`, `samples_per_insert > 0`, `n_step >= 1`, `0 <= discount <= 1`.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class ReplayConfig:
  """How experience is stored, limited and sampled.

  Attributes:
    batch_size: global learner batch (summed over replicas).
    n_step: transitions span this many agent steps (fewer at an episode's end).
    discount: per-step discount gamma used in n-step returns.
    frame_stack: frames per observation; each frame is stored once and stacks are rebuilt when sampled.
    samples_per_insert: target ratio of sampled items to inserted items (the replay ratio); None removes
      the rate limit (only a minimum size), for debugging.
    min_replay_size: items in the table before the learner may sample.
    max_replay_size: items kept; the oldest are removed first.
    error_buffer: how far the sample/insert ratio may drift before one side blocks; None chooses
      max(2 * batch_size, 2 * samples_per_insert, 10% of min_replay_size).
    chunk_length: steps per stored chunk (see `rlrep.replay.adder`): longer chunks cost less memory per
      step but more decompression per sample, and items reach the server up to this many steps late.
  """
  batch_size: int = 256
  n_step: int = 3
  discount: float = 0.99
  frame_stack: int = 1
  samples_per_insert: float | None = 32.0
  min_replay_size: int = 1000
  max_replay_size: int = 1_000_000
  error_buffer: float | None = None
  chunk_length: int = 4

  def __post_init__(self):
    problems = []
    if self.batch_size < 1:
      problems.append(f"batch_size must be >= 1, got {self.batch_size}")
    if self.n_step < 1:
      problems.append(f"n_step must be >= 1, got {self.n_step}")
    if not 0.0 <= self.discount <= 1.0:
      problems.append(f"discount must be in [0, 1], got {self.discount}")
    if self.frame_stack < 1:
      problems.append(f"frame_stack must be >= 1, got {self.frame_stack}")
    if self.chunk_length < 1:
      problems.append(f"chunk_length must be >= 1, got {self.chunk_length}")
    if self.min_replay_size < 1:
      problems.append(f"min_replay_size must be >= 1, got {self.min_replay_size}")
    if self.max_replay_size < self.min_replay_size:
      problems.append(
          f"min_replay_size ({self.min_replay_size}) exceeds max_replay_size ({self.max_replay_size}): the table "
          "never holds enough items to start sampling, so the learner would wait forever")
    if self.samples_per_insert is not None:
      if self.samples_per_insert <= 0:
        problems.append(f"samples_per_insert must be > 0 (or None for no rate limit), got {self.samples_per_insert}")
      elif self.error_buffer is not None and self.error_buffer < max(self.batch_size, self.samples_per_insert):
        problems.append(
            f"error_buffer ({self.error_buffer}) is smaller than one batch ({self.batch_size}) or than "
            f"samples_per_insert ({self.samples_per_insert}): the learner would block in the middle of a batch "
            "while the actors block waiting for samples, a deadlock; use at least "
            f"{max(self.batch_size, self.samples_per_insert)} or leave it None")
    if problems:
      raise ValueError("invalid replay settings:\n  - " + "\n  - ".join(problems))

  @property
  def resolved_error_buffer(self) -> float:
    if self.error_buffer is not None:
      return self.error_buffer
    spi = self.samples_per_insert or 1.0
    return max(2.0 * self.batch_size, 2.0 * spi, 0.1 * self.min_replay_size)
