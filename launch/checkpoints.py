"""Learner checkpoints plus the run's counters, so `--resume` continues with counters intact.

`<out>/checkpoints/state.json` lists the kept learner checkpoints, oldest first, each with the frames,
episodes and learner steps at the moment it was written and the size and SHA-256 of each of its files.

* A checkpoint joins the list only after all its files are written, and state.json is replaced
  atomically, so a crash mid-write never makes a half checkpoint the latest.
* `latest()` verifies the files against the recorded sizes and hashes and falls back, with a warning, to
  the newest checkpoint that is intact (a truncated or corrupted file is found before TensorFlow reads it).
* A save that fails (a full disk, a lost volume) logs an error naming the checkpoint still usable, removes
  its partial files and lets training go on.

Replay contents are the replay server's to save (`--checkpoint-replay`, launch/roles/replay_server.py); without
them a resumed run refills replay to `min_replay_size` before the learner continues.
"""

from __future__ import annotations

import hashlib
import json
import logging
import pathlib

STATE_FILE = "state.json"
COUNTS = ("frames", "episodes", "learner_steps")


class CheckpointStore:
  """Writes numbered learner checkpoints, keeps the newest `keep`, and remembers the counters."""

  def __init__(self, directory: pathlib.Path, keep: int = 3):
    if keep < 1:
      raise ValueError(f"keep must be >= 1, got {keep}")
    self.directory = directory
    self._keep = keep

  def save(self, learner, counts: dict) -> str | None:
    """Writes a checkpoint of `learner` with `counts`; returns its prefix, or None if writing failed."""
    name = f"learner-{learner.num_steps:09d}"
    try:
      self.directory.mkdir(parents=True, exist_ok=True)
      prefix = pathlib.Path(learner.save(str(self.directory / name)))
      entry = {"prefix": prefix.name, **{k: counts[k] for k in COUNTS},
               "files": {path.name: _fingerprint(path) for path in self._files_of(prefix.name)}}
      earlier = [e for e in self._entries() if e["prefix"] != entry["prefix"]]
      self._write_state([*earlier, entry][-self._keep:])
    except Exception as error:  # noqa: BLE001  (OSError, or TensorFlow's errors for the same disk problems)
      for path in self._files_of(name):
        path.unlink(missing_ok=True)
      usable = self.latest()
      logging.error("checkpoint %s could not be written (%s: %s); %s", name, type(error).__name__, error,
                    f"the latest usable one is {usable['prefix']}" if usable else "no earlier checkpoint exists")
      return None
    self._remove_unlisted()
    return str(prefix)

  def latest(self) -> dict | None:
    """{'prefix', 'frames', 'episodes', 'learner_steps'} of the newest intact checkpoint, or None."""
    damaged = []
    for entry in reversed(self._entries()):
      problem = self._problem(entry)
      if problem is None:
        if damaged:
          logging.warning("checkpoint %s is damaged (%s); using the previous one, %s (learner step %d)",
                          damaged[0][0], damaged[0][1], entry["prefix"], entry["learner_steps"])
        return {"prefix": str(self.directory / entry["prefix"]), **{k: entry[k] for k in COUNTS}}
      damaged.append((entry["prefix"], problem))
    if damaged:
      logging.warning("no intact checkpoint in %s: %s", self.directory,
                      "; ".join(f"{name}: {problem}" for name, problem in damaged))
    return None

  def restore(self, learner) -> dict | None:
    """Restores the newest intact checkpoint into `learner`; returns its counts (None: nothing to restore)."""
    state = self.latest()
    if state is not None:
      learner.restore(state["prefix"])
    return state

  def _entries(self) -> list[dict]:
    path = self.directory / STATE_FILE
    if not path.exists():
      return []
    try:
      state = json.loads(path.read_text())
    except (OSError, ValueError) as error:
      logging.warning("%s is unreadable (%s): no checkpoint to resume from", path, error)
      return []
    return state.get("checkpoints", [])

  def _problem(self, entry: dict) -> str | None:
    """Why the checkpoint's files differ from what was written, or None if they match."""
    for name, (size, digest) in entry["files"].items():
      path = self.directory / name
      if not path.exists():
        return f"{name} is missing"
      if path.stat().st_size != size:
        return f"{name} has {path.stat().st_size} bytes, {size} were written"
      if _fingerprint(path)[1] != digest:
        return f"{name} changed since it was written"
    return None if entry["files"] else "it lists no files"

  def _files_of(self, prefix_name: str) -> list[pathlib.Path]:
    return sorted(self.directory.glob(f"{prefix_name}.*"))

  def _write_state(self, entries: list[dict]) -> None:
    temporary = self.directory / (STATE_FILE + ".tmp")
    temporary.write_text(json.dumps({"checkpoints": entries}, indent=2) + "\n")
    temporary.replace(self.directory / STATE_FILE)  # atomic on POSIX file systems

  def _remove_unlisted(self) -> None:
    listed = {name for entry in self._entries() for name in entry["files"]}
    for path in self.directory.glob("learner-*"):
      if path.name not in listed:
        path.unlink()


def _fingerprint(path: pathlib.Path) -> tuple[int, str]:
  digest = hashlib.sha256()
  with path.open("rb") as f:
    for block in iter(lambda: f.read(1 << 20), b""):
      digest.update(block)
  return path.stat().st_size, digest.hexdigest()
