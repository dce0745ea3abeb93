"""`rlrep compare`: evaluation return against frames for several runs, seeds pooled, beside reference curves.

Runs that share an experiment except for the seed (and output directory) form one group, drawn as the mean
over seeds with a min-max band; each group is labelled by its agent, task and whatever settings (of those
every group has) set it apart from the other groups. Reference curves (e.g. a published baseline) come from
CSV files with `frames` and `return` columns (several rows per frame, e.g. one per seed, are averaged). The
terminal table gives every curve's return at chosen frame budgets, read off by linear interpolation between
evaluations and left empty beyond a run's last evaluation.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import pathlib
from typing import Sequence

import numpy as np

from launch import metrics
from launch.experiment import EXPERIMENT_FILE, Experiment

# Settings that place, budget or present a run without changing what it learns.
IGNORED_FOR_GROUPING = ("seed", "out", "mode", "frames", "actors", "replicas", "log_every_s", "checkpoint_every_s",
                        "cluster", "video_size", "video_format", "replay_port")


@dataclasses.dataclass
class Curve:
  """One line of the plot: the mean over `runs` (one per seed) or a reference, with its min-max band."""
  label: str
  frames: np.ndarray
  mean: np.ndarray
  low: np.ndarray
  high: np.ndarray
  runs: int

  def at(self, budget: float) -> float:
    """The return at `budget` frames, interpolated between evaluations; NaN beyond this curve."""
    if len(self.frames) == 0 or budget > self.frames[-1] or budget < self.frames[0]:
      return math.nan
    return float(np.interp(budget, self.frames, self.mean))


def load_run(directory: str | pathlib.Path) -> tuple[dict, list[dict[str, float]]]:
  """(experiment settings, evaluation rows) of a run directory, or ValueError saying why it is not one.

  The settings are read as `Experiment` reads them, so files written by older versions (fields added since
  take their defaults) group with new ones."""
  path = pathlib.Path(directory)
  settings_file = path / EXPERIMENT_FILE
  rows = metrics.read_log(path, "eval")
  if not settings_file.exists() or not rows:
    missing = EXPERIMENT_FILE if not settings_file.exists() else "logs/eval.csv rows"
    raise ValueError(f"{path} is not an rlrep run with evaluations (no {missing}); pass directories that "
                     "`rlrep train --out` wrote.")
  return Experiment.from_json(json.loads(settings_file.read_text())).to_json(), rows


def _flatten(settings: dict) -> dict:
  agent = {f"agent_config.{k}": v for k, v in settings.get("agent_config", {}).items() if k != "seed"}
  return {**{k: v for k, v in settings.items() if k != "agent_config" and k not in IGNORED_FOR_GROUPING}, **agent}


def group_runs(directories: Sequence[str | pathlib.Path]) -> list[Curve]:
  """One curve per group of runs that differ only by seed (and output directory, mode, scale, budget)."""
  groups: dict[str, list[tuple[dict, list[dict[str, float]]]]] = {}
  for directory in directories:
    settings, rows = load_run(directory)
    groups.setdefault(json.dumps(_flatten(settings), sort_keys=True, default=str), []).append((settings, rows))
  flats = [json.loads(key) for key in groups]
  # Settings one agent has and another lacks are told apart by the agent's name; only shared ones label.
  shared = set.intersection(*(set(flat) for flat in flats)) if flats else set()
  differing = sorted({k for k in shared if any(other[k] != flats[0][k] for other in flats)} - {"task", "agent"})
  curves = []
  for flat, members in zip(flats, groups.values()):
    settings = members[0][0]
    extra = ", ".join(f"{k.split('.')[-1]}={flat.get(k)}" for k in differing)
    label = f"{settings['agent']} {settings['task']}" + (f" ({extra})" if extra else "")
    curves.append(_pool(label, [[(r["frames"], r["eval_return"]) for r in rows] for _, rows in members]))
  return curves


def _pool(label: str, runs: list[list[tuple[float, float]]]) -> Curve:
  """Mean and min-max over runs on the frames where every run has been evaluated (interpolated)."""
  grid = np.array(sorted({frames for run in runs for frames, _ in run}))
  last = min(run[-1][0] for run in runs)
  grid = grid[grid <= last]
  values = np.array([np.interp(grid, [f for f, _ in run], [r for _, r in run]) for run in runs])
  return Curve(label, grid, values.mean(axis=0), values.min(axis=0), values.max(axis=0), len(runs))


def load_reference(path: str | pathlib.Path, label: str | None = None) -> Curve:
  """A reference curve from a CSV with `frames` and `return` columns (rows at one frame count averaged)."""
  path = pathlib.Path(path)
  if not path.exists():
    raise ValueError(f"--reference {path}: no such file.")
  with path.open() as f:
    reader = csv.DictReader(f)
    columns = set(reader.fieldnames or [])
    if not {"frames", "return"} <= columns:
      raise ValueError(f"--reference {path}: needs 'frames' and 'return' columns, found {sorted(columns)}.")
    by_frames: dict[float, list[float]] = {}
    for row in reader:
      by_frames.setdefault(float(row["frames"]), []).append(float(row["return"]))
  frames = np.array(sorted(by_frames))
  values = [np.array(by_frames[f]) for f in frames]
  return Curve(label or path.stem, frames, np.array([v.mean() for v in values]), np.array([v.min() for v in values]),
               np.array([v.max() for v in values]), max(len(v) for v in values))


def table(curves: Sequence[Curve], budgets: Sequence[float]) -> str:
  """Returns at each frame budget, one row per curve."""
  width = max(len(c.label) for c in curves) + 2
  header = f"{'curve':{width}s}{'runs':>5s}" + "".join(f"{f'{int(b):,d} frames':>16s}" for b in budgets)
  lines = [header, "-" * len(header)]
  for curve in curves:
    cells = "".join(f"{'':>16s}" if math.isnan(v := curve.at(b)) else f"{v:16.1f}" for b in budgets)
    lines.append(f"{curve.label:{width}s}{curve.runs:5d}{cells}")
  return "\n".join(lines)


def plot(curves: Sequence[Curve], references: Sequence[Curve], path: str | pathlib.Path, title: str) -> None:
  import matplotlib
  matplotlib.use("Agg")
  from matplotlib import pyplot as plt

  figure, axes = plt.subplots(figsize=(7, 4.5), dpi=100)
  for curve, style in [*((c, "o-") for c in curves), *((r, "--") for r in references)]:
    line, = axes.plot(curve.frames, curve.mean, style, markersize=3,
                      label=f"{curve.label} (mean of {curve.runs})" if curve.runs > 1 else curve.label)
    if curve.runs > 1:
      axes.fill_between(curve.frames, curve.low, curve.high, color=line.get_color(), alpha=0.15)
  axes.set_xlabel("environment frames")
  axes.set_ylabel("evaluation return")
  axes.set_title(title)
  axes.grid(alpha=0.3)
  axes.legend(loc="best", fontsize=8)
  figure.tight_layout()
  path = pathlib.Path(path)
  path.parent.mkdir(parents=True, exist_ok=True)
  figure.savefig(path)
  plt.close(figure)


def compare(run_dirs: Sequence[str], references: Sequence[str], out: str, budgets: Sequence[float],
            title: str | None = None) -> str:
  """Plots the runs (grouped by seed) and references to `out`; returns the table of returns at `budgets`."""
  if not run_dirs:
    raise ValueError("name at least one run directory.")
  curves = group_runs(run_dirs)
  reference_curves = [load_reference(path) for path in references]
  tasks = sorted({c.label.split()[1] for c in curves})
  plot(curves, reference_curves, out, title or " vs ".join(tasks))
  return table([*curves, *reference_curves], budgets)
