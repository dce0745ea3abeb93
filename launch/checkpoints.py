"""Learner checkpoints plus the run's counters, so `--resume` continues with counters intact.

`<out>/checkpoints/state.json` names the newest learner checkpoint and the frames, episodes and learner
steps at the moment it was written. Replay contents are not checkpointed: a resumed run refills replay to
`min_replay_size` before the learner continues (pixel replay is tens of GB at full size).
"""

from __future__ import annotations

import json
import pathlib

STATE_FILE = "state.json"


class CheckpointStore:
  """Writes numbered learner checkpoints, keeps the newest `keep`, and remembers the counters."""

  def __init__(self, directory: pathlib.Path, keep: int = 2):
    self.directory = directory
    self._keep = keep

  def save(self, learner, counts: dict) -> str:
    self.directory.mkdir(parents=True, exist_ok=True)
    prefix = learner.save(str(self.directory / f"learner-{learner.num_steps:09d}"))
    state = {"prefix": pathlib.Path(prefix).name, **{k: counts[k] for k in ("frames", "episodes", "learner_steps")}}
    temporary = self.directory / (STATE_FILE + ".tmp")
    temporary.write_text(json.dumps(state, indent=2) + "\n")
    temporary.replace(self.directory / STATE_FILE)  # atomic: a crash never leaves a half-written state
    self._remove_old()
    return prefix

  def latest(self) -> dict | None:
    """{'prefix', 'frames', 'episodes', 'learner_steps'} of the newest checkpoint, or None."""
    path = self.directory / STATE_FILE
    if not path.exists():
      return None
    state = json.loads(path.read_text())
    state["prefix"] = str(self.directory / state["prefix"])
    return state

  def restore(self, learner) -> dict | None:
    state = self.latest()
    if state is not None:
      learner.restore(state["prefix"])
    return state

  def _remove_old(self) -> None:
    prefixes = sorted({p.name.split(".")[0] for p in self.directory.glob("learner-*")})
    for old in prefixes[:-self._keep]:
      for path in self.directory.glob(f"{old}.*"):
        path.unlink()
