"""Run outputs a researcher reads: the metric rows read back from their CSV files, the progress line and the
learning curve.

Every metric row is keyed by environment frames (the x-axis of RL learning curves); `MetricsLog`
(launch/metrics_log.py) writes them to `<out>/logs/<name>.csv`. Reading them loads neither TensorFlow nor W&B, so
`rlrep compare` and `rlrep report` read runs cheaply.
"""

from __future__ import annotations

import csv
import io
import math
import pathlib


def read_csv(path: pathlib.Path) -> list[dict[str, float]]:
  with path.open() as f:
    return _numbers(csv.DictReader(f))


def read_log(out_dir: str | pathlib.Path, name: str) -> list[dict[str, float]]:
  """The rows `MetricsLog(out_dir, name)` has written so far ("train", "eval"); none before the first."""
  path = pathlib.Path(out_dir) / "logs" / f"{name}.csv"
  return read_csv(path) if path.exists() else []


def read_complete_rows(out_dir: str | pathlib.Path, name: str) -> list[dict[str, float]]:
  """`read_log` of a log another process may be writing: a last line without its line end (a row being
  appended, or the rewrite of a widened header) is left out."""
  path = pathlib.Path(out_dir) / "logs" / f"{name}.csv"
  text = path.read_text() if path.exists() else ""
  return _numbers(csv.DictReader(io.StringIO(text[:text.rfind("\n") + 1])))


def _numbers(rows) -> list[dict[str, float]]:
  return [{k: float(v) for k, v in row.items() if v != ""} for row in rows]


def progress_line(row: dict[str, float]) -> str:
  """One line a researcher can watch: throughput, returns, replay (its size, and the items inserted and sampled a
  second: which side to grow), weight freshness, waiting shares."""
  def fmt(key: str, spec: str = ".1f") -> str:
    value = row.get(key, float("nan"))
    return "n/a" if not math.isfinite(value) else format(value, spec)

  return (f"frames {int(row['frames']):>9,d} | {fmt('frames_per_s')} frames/s | learner steps "
          f"{int(row.get('learner_steps', 0)):,d} ({fmt('learner_steps_per_s', '.2f')}/s) | return "
          f"{fmt('episode_return')} | replay {fmt('replay_size', ',.0f')} (in {fmt('replay_inserts_per_s', ',.0f')}/s, "
          f"out {fmt('replay_samples_per_s', ',.0f')}/s) | staleness "
          f"{fmt('weights_staleness', '.0f')} steps | waiting: actors {fmt('actor_wait_share', '.0%')}, "
          f"learner {fmt('learner_wait_share', '.0%')}" + (
              f" | actor restarts {int(row['actor_restarts'])}" if row.get("actor_restarts") else ""))


def plot_learning_curve(out_dir: pathlib.Path, path: pathlib.Path, title: str) -> None:
  """Evaluation return (and training episode return) of the run in `out_dir` against frames, as a PNG."""
  import matplotlib
  matplotlib.use("Agg")
  from matplotlib import pyplot as plt

  figure, axes = plt.subplots(figsize=(6, 4), dpi=100)
  for name, key, label, style in (("train", "episode_return", "training episodes (recent mean)", "-"),
                                  ("eval", "eval_return", "evaluation (deterministic policy)", "o-")):
    rows = [r for r in read_log(out_dir, name) if math.isfinite(r.get(key, float("nan")))]
    if rows:
      axes.plot([r["frames"] for r in rows], [r[key] for r in rows], style, label=label)
  axes.set_xlabel("environment frames")
  axes.set_ylabel("episode return")
  axes.set_title(title)
  axes.grid(alpha=0.3)
  axes.legend(loc="best")
  figure.tight_layout()
  path.parent.mkdir(parents=True, exist_ok=True)
  figure.savefig(path)
  plt.close(figure)
