"""`rlrep train --wandb PROJECT`: every metric row of the run, and its evaluation videos, in one W&B run.

One process sends everything: the evaluator's. It runs from the run's start to its end and writes the run's
last row (the final evaluation, which waits for the learner to stop), while the learner writes train.csv from
another process in local and cluster mode (from another thread in-process). So the W&B run is not fed by each
writer: the evaluator's `MetricsLog` sends the rows both CSV files have gained since it last looked, after each
row it writes and, from a thread, every `log_every_s`. Every mode thus gives exactly one W&B run holding both
logs, with neither a second writer to the same run (W&B's shared mode needs its server) nor a channel between
roles; the learner's process never imports wandb.

Rows are logged as "train/<metric>" and "eval/<metric>" against "frames" (`define_metric`), not as W&B steps:
the two logs' frames interleave out of order, and W&B drops a row whose step is below the last one. An
evaluation's video is logged with its row.

`<out>/logs/wandb.json` keeps the W&B run's id and how many rows of each log it has received, so a `--resume` (or
an evaluator Ray restarted) continues the same W&B run (`resume="allow"`; offline, W&B ignores it and starts a new
offline run with the same id) without sending a row twice, and a run resumed with `--wandb` for the first time (or
another project) sends its earlier rows first. W&B's environment variables apply (WANDB_MODE=offline,
WANDB_ENTITY, WANDB_NAME, WANDB_DIR, ...); its files go to <out>/wandb unless WANDB_DIR is set.

`MetricsLog.close()` on the evaluator's log finishes the W&B run, as does, failing that, the exit of its process.
A Ray worker's exit kills W&B's service (a child process) before Python's exit hooks run, so in local and cluster
mode only the evaluator's own `close()` call finishes the run with every row on record.
"""

from __future__ import annotations

import atexit
import json
import logging
import math
import os
import pathlib
import threading

from launch import metrics
from launch.experiment import EXPERIMENT_FILE, RunFailed

OWNER_LOG = "eval"  # the log whose process sends both logs to W&B (see above)
LOGS = ("train", "eval")
STATE_FILE = "wandb.json"

_mirrors: dict[pathlib.Path, Mirror] = {}  # by output directory: this process's W&B run for each rlrep run


def mirror_for(out_dir: pathlib.Path, name: str) -> Mirror | None:
  """The W&B mirror `MetricsLog(out_dir, name)` feeds: a new one for the evaluator's log of a run saved with
  `wandb` set, otherwise None (the learner's log, a run without --wandb, a directory without experiment.json)."""
  path = out_dir / EXPERIMENT_FILE
  if name != OWNER_LOG or not path.exists():
    return None
  experiment = json.loads(path.read_text())
  if not experiment.get("wandb"):
    return None
  key = out_dir.resolve()
  if key in _mirrors:  # the run started again in this process (e.g. resumed): its earlier W&B session ends first
    _mirrors[key].close()
  _mirrors[key] = Mirror(out_dir, experiment)
  return _mirrors[key]


class Mirror:
  """One W&B run receiving the rows of a run's train and eval logs, read from their CSV files."""

  def __init__(self, out_dir: pathlib.Path, experiment: dict):
    project = experiment["wandb"]
    try:
      import wandb
    except ImportError:
      raise RunFailed(f"--wandb {project}: the wandb package is not installed. Install it with "
                      "`pip install 'rlrep[wandb]'`, or drop --wandb.") from None
    self._wandb, self._project, self._out, self._key = wandb, project, out_dir, out_dir.resolve()
    self._state_path = out_dir / "logs" / STATE_FILE
    state = json.loads(self._state_path.read_text()) if self._state_path.exists() else {}
    if state.get("project") != project:  # never sent, or to another project: a new W&B run gets every row
      state = {"project": project, "run_id": None, "rows_sent": {name: 0 for name in LOGS}}
    self._rows_sent: dict[str, int] = state["rows_sent"]
    name = os.environ.get("WANDB_NAME", f"{experiment['task']}__{out_dir.name}__{experiment['seed']}")
    try:
      self._run = wandb.init(project=project, id=state["run_id"], resume="allow", name=name,
                             dir=os.environ.get("WANDB_DIR", str(out_dir)))
    except wandb.errors.Error as error:
      raise RunFailed(f"--wandb {project}: W&B could not start a run ({error}). Log in with `wandb login` (or set "
                      "WANDB_API_KEY), or log offline with WANDB_MODE=offline and upload later with `wandb sync "
                      f"{out_dir}/wandb`.") from None
    self._save_state()
    self._run.config.update(experiment, allow_val_change=True)  # a resume may change some, e.g. frames
    self._run.define_metric("frames")
    for name in LOGS:
      self._run.define_metric(f"{name}/*", step_metric="frames")
    self._lock, self._stop = threading.Lock(), threading.Event()
    self.sync()  # rows written before this process started: a resume, a restarted evaluator
    self._poller = threading.Thread(target=self._poll, args=(experiment["log_every_s"],), name="wandb",
                                    daemon=True)
    self._poller.start()
    atexit.register(self.close)  # after wandb.init, so it runs before W&B's own exit hook finishes the run

  def sync(self) -> None:
    """Sends the rows train.csv and eval.csv have gained since the last call, whichever process wrote them.

    A file or W&B failure is logged and retried at the next call: the CSV files still hold every row.
    """
    with self._lock:
      sent = dict(self._rows_sent)
      try:
        for name in LOGS:
          # Fewer rows than sent: the file is being rewritten with a wider header; its rows come back.
          for row in metrics.read_complete_rows(self._out, name)[self._rows_sent[name]:]:
            self._run.log(self._entry(name, row))
            self._rows_sent[name] += 1
      except (OSError, ValueError, self._wandb.errors.Error) as error:
        logging.warning("W&B: rows not sent (%s); retrying at the next row", error)
      if self._rows_sent != sent:
        self._save_state()

  def close(self) -> None:
    """Sends the rows not sent yet and finishes the W&B run; at this process's exit unless called before."""
    if self._stop.is_set():
      return
    atexit.unregister(self.close)
    self._stop.set()
    self._poller.join()
    self.sync()
    self._run.finish()
    # `finish` can return before W&B's service has written the run (offline, 3 of 8 runs had an empty .wandb file
    # just after it) and a Ray worker's children die with it; this waits. Role processes hold no other W&B runs.
    self._wandb.teardown()
    if _mirrors.get(self._key) is self:
      del _mirrors[self._key]

  def _entry(self, name: str, row: dict[str, float]) -> dict:
    frames = int(row["frames"])
    entry = {"frames": frames, **{f"{name}/{key}": value for key, value in row.items()
                                  if key != "frames" and math.isfinite(value)}}
    # The evaluator writes an evaluation's video (named by its frames) before its row.
    video = next((self._out / "videos").glob(f"eval-{frames:010d}.*"), None) if name == "eval" else None
    if video is not None:
      entry["eval/video"] = self._wandb.Video(str(video), caption=f"{frames:,d} frames", format=video.suffix[1:])
    return entry

  def _save_state(self) -> None:
    temporary = self._state_path.with_suffix(".tmp")  # replaced in one step: a crash leaves the old or the new
    temporary.write_text(json.dumps({"project": self._project, "run_id": self._run.id,
                                     "rows_sent": self._rows_sent}) + "\n")
    os.replace(temporary, self._state_path)

  def _poll(self, every_s: float) -> None:
    while not self._stop.wait(every_s):
      self.sync()
