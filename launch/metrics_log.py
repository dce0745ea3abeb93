"""The writer of a run's metric rows: to `<out>/logs/<name>.csv`, to TensorBoard under `<out>/tensorboard/<name>`
and, from the log that owns the run's W&B run, to Weights & Biases (launch/wandb_log.py, which reads the rows back
from the CSV files).

Every row is keyed by environment frames (the x-axis of RL learning curves). Appending to an existing CSV (after
`--resume`) keeps its columns; a metric that first appears later widens the header. Reading rows back, the progress
line and the learning curve are launch/metrics.py's, which loads neither TensorFlow nor W&B.
"""

from __future__ import annotations

import csv
import math
import pathlib

import tensorflow as tf

from launch import wandb_log
from launch.metrics import read_csv


class MetricsLog:
  """Appends rows of numbers to a CSV file and to TensorBoard, with `frames` as the step (and, for the log that
  owns the run's W&B mirror, sends the rows the CSV files have gained to W&B)."""

  def __init__(self, out_dir: pathlib.Path, name: str):
    self.path = out_dir / "logs" / f"{name}.csv"
    self.path.parent.mkdir(parents=True, exist_ok=True)
    self._columns: list[str] | None = None
    if self.path.exists() and self.path.stat().st_size:
      with self.path.open() as f:
        self._columns = next(csv.reader(f))
    self._summary = tf.summary.create_file_writer(str(out_dir / "tensorboard" / name))
    self._wandb = wandb_log.mirror_for(out_dir, name)

  def write(self, row: dict[str, float]) -> None:
    if "frames" not in row:
      raise ValueError(f"a metrics row needs 'frames' (its x-axis); got {sorted(row)}.")
    new_columns = [key for key in row if key not in (self._columns or [])]
    if new_columns:  # e.g. learner losses appear after the first row: rewrite the file with a wider header
      earlier = read_csv(self.path) if self._columns else []
      self._columns = (self._columns or []) + new_columns
      with self.path.open("w", newline="") as f:
        writer = csv.DictWriter(f, self._columns)
        writer.writeheader()
        writer.writerows(earlier)
    with self.path.open("a", newline="") as f:
      csv.DictWriter(f, self._columns, extrasaction="ignore").writerow(row)
    with self._summary.as_default(step=int(row["frames"])):
      for key, value in row.items():
        if key != "frames" and isinstance(value, (int, float)) and math.isfinite(value):
          tf.summary.scalar(key, value)
    self._summary.flush()
    if self._wandb:
      self._wandb.sync()

  def close(self) -> None:
    """Finishes the W&B run this log feeds, if any. Call it once the log's last row is written: the exit of a Ray
    worker (local and cluster mode) kills W&B's service before a W&B run can finish (launch/wandb_log.py)."""
    if self._wandb:
      self._wandb.close()
