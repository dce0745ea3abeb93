"""`rlrep compare`: evaluation return against frames for several runs, seeds pooled, beside reference curves.

Runs that share an experiment except for the seed (and output directory) form one group, drawn as the mean
over seeds with a min-max band; each group is labelled by its agent, task and whatever settings (of those
every group has) set it apart from the other groups. Reference curves (e.g. a published baseline) come from
CSV files with `frames` and `return` columns (several rows per frame, e.g. one per seed, are averaged). The
terminal table gives every curve's return at chosen frame budgets, read off by linear interpolation between
evaluations and left empty beyond a run's last evaluation.

Frames are not the only budget: on a small machine the learner's updates are what a run pays for. Given a
reference's update schedule (`UpdateSchedule`; DrQ-v2's is `DRQV2_UPDATES`), `equal_updates_table` reads each
reference at the frames where it had made as many learner updates as the run had at a frame budget.
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


@dataclasses.dataclass
class Curve:
  """One line of the plot: the mean over `runs` (one per seed) or a reference, with its min-max band."""
  label: str
  frames: np.ndarray
  mean: np.ndarray
  low: np.ndarray
  high: np.ndarray
  runs: int
  updates: np.ndarray | None = None  # learner updates at each of `frames` (mean over runs); None for references

  def at(self, budget: float, values: np.ndarray | None = None) -> float:
    """The return (or other `values` on the same frames) at `budget` frames, interpolated between
    evaluations; NaN beyond this curve."""
    if len(self.frames) == 0 or budget > self.frames[-1] or budget < self.frames[0]:
      return math.nan
    return float(np.interp(budget, self.frames, self.mean if values is None else values))


@dataclasses.dataclass(frozen=True)
class UpdateSchedule:
  """When a reference made its learner updates: none in its first `start_frames`, then one every
  `frames_per_update` frames."""
  start_frames: float
  frames_per_update: float

  def frames_at(self, updates: float) -> float:
    return self.start_frames + self.frames_per_update * updates


# DrQ-v2 (facebookresearch/drqv2 cfgs/config.yaml): 4,000 seed frames, then one update of 256 every 2 agent
# steps at action repeat 2.
DRQV2_UPDATES = UpdateSchedule(start_frames=4000, frames_per_update=4)


def load_run(directory: str | pathlib.Path) -> tuple[dict, list[dict[str, float]]]:
  """(experiment settings, evaluation rows) of a run directory, or ValueError saying why it is not one.

  A result directory as committed under benchmarks/results/ (eval.csv beside experiment.json) reads too.
  The settings are read as `Experiment` reads them, so files written by older versions (fields added since
  take their defaults) group with new ones."""
  # Loads the agents' configs, so TensorFlow: imported here, where runs are read, so that `rlrep compare --help`
  # (which reads this module for its defaults) stays light.
  from launch.experiment import EXPERIMENT_FILE, Experiment
  path = pathlib.Path(directory)
  settings_file = path / EXPERIMENT_FILE
  rows = metrics.read_log(path, "eval") or (metrics.read_csv(path / "eval.csv") if (path / "eval.csv").exists() else [])
  if not settings_file.exists() or not rows:
    missing = EXPERIMENT_FILE if not settings_file.exists() else "logs/eval.csv or eval.csv rows"
    raise ValueError(f"{path} is not an rlrep run with evaluations (no {missing}); pass directories that "
                     "`rlrep train --out` wrote.")
  return Experiment.from_json(json.loads(settings_file.read_text())).to_json(), rows


def grouping_settings(settings: dict) -> dict:
  """The settings (of `load_run`'s) that decide what a run computes, but the seed (`Experiment.defining_settings`):
  runs with equal ones are seeds of one experiment."""
  from launch.experiment import Experiment
  return {name: value for name, value in Experiment.from_json(settings).defining_settings().items() if name != "seed"}


def group_runs(directories: Sequence[str | pathlib.Path]) -> list[Curve]:
  """One curve per group of runs that differ only by seed (and output directory, mode, scale, budget)."""
  groups: dict[str, list[tuple[dict, list[dict[str, float]]]]] = {}
  for directory in directories:
    settings, rows = load_run(directory)
    groups.setdefault(json.dumps(grouping_settings(settings), sort_keys=True, default=str), []).append((settings, rows))
  flats = [json.loads(key) for key in groups]
  # Settings one agent has and another lacks are told apart by the agent's name; only shared ones label.
  shared = set.intersection(*(set(flat) for flat in flats)) if flats else set()
  differing = sorted({k for k in shared if any(other[k] != flats[0][k] for other in flats)} - {"task", "agent"})
  curves = []
  for flat, members in zip(flats, groups.values()):
    settings = members[0][0]
    extra = ", ".join(f"{k.split('.')[-1]}={flat.get(k)}" for k in differing)
    label = f"{settings['agent']} {settings['task']}" + (f" ({extra})" if extra else "")
    curves.append(_pool(label, [[(r["frames"], r["eval_return"], r.get("learner_steps", math.nan)) for r in rows]
                                for _, rows in members]))
  return curves


def _pool(label: str, runs: list[list[tuple[float, float, float]]]) -> Curve:
  """Mean and min-max over runs on the frames where every run has been evaluated (interpolated), with the
  runs' mean learner updates there (None if a run's log has none)."""
  grid = np.array(sorted({row[0] for run in runs for row in run}))
  last = min(run[-1][0] for run in runs)
  grid = grid[grid <= last]

  def column(index: int) -> np.ndarray:
    return np.array([np.interp(grid, [row[0] for row in run], [row[index] for row in run]) for run in runs])

  values, updates = column(1), column(2).mean(axis=0)
  return Curve(label, grid, values.mean(axis=0), values.min(axis=0), values.max(axis=0), len(runs),
               None if np.isnan(updates).any() else updates)


def read_reference(path: str | pathlib.Path) -> list[dict[str, float]]:
  """The rows of a reference CSV with `frames` and `return` columns (and others, e.g. `seed`), as numbers."""
  path = pathlib.Path(path)
  if not path.exists():
    raise ValueError(f"reference {path}: no such file.")
  with path.open() as f:
    columns = set(next(csv.reader(f), []))
  if not {"frames", "return"} <= columns:
    raise ValueError(f"reference {path}: needs 'frames' and 'return' columns, found {sorted(columns)}.")
  return metrics.read_csv(path)


def load_reference(path: str | pathlib.Path, label: str | None = None) -> Curve:
  """A reference curve from a CSV with `frames` and `return` columns (rows at one frame count averaged)."""
  by_frames: dict[float, list[float]] = {}
  for row in read_reference(path):
    by_frames.setdefault(row["frames"], []).append(row["return"])
  frames = np.array(sorted(by_frames))
  values = [np.array(by_frames[f]) for f in frames]
  return Curve(label or pathlib.Path(path).stem, frames, np.array([v.mean() for v in values]),
               np.array([v.min() for v in values]), np.array([v.max() for v in values]), max(len(v) for v in values))


def table(curves: Sequence[Curve], budgets: Sequence[float]) -> str:
  """Returns at each frame budget, one row per curve."""
  width = max(len(c.label) for c in curves) + 2
  header = f"{'curve':{width}s}{'runs':>5s}" + "".join(f"{f'{int(b):,d} frames':>16s}" for b in budgets)
  lines = [header, "-" * len(header)]
  for curve in curves:
    cells = "".join(f"{'':>16s}" if math.isnan(v := curve.at(b)) else f"{v:16.1f}" for b in budgets)
    lines.append(f"{curve.label:{width}s}{curve.runs:5d}{cells}")
  return "\n".join(lines)


def equal_updates_table(curves: Sequence[Curve], references: Sequence[Curve], budgets: Sequence[float],
                        schedule: UpdateSchedule) -> str:
  """For each run curve and frame budget: its learner updates and return there, and each reference's return
  at the frames where `schedule` says it had made as many updates."""
  if missing := [c.label for c in curves if c.updates is None]:
    raise ValueError(f"{', '.join(missing)}: the evaluation log has no learner_steps column, so updates cannot "
                     "be compared; drop --equal-updates for these runs.")
  width = max(len(c.label) for c in curves) + 2
  lines = [f"at equal learner updates (references: none in the first {schedule.start_frames:,.0f} frames, then one "
           f"per {schedule.frames_per_update:g} frames)",
           f"{'curve':{width}s}{'frames':>10s}{'updates':>10s}{'return':>9s}"
           + "".join(f"  {r.label} (at frames)" for r in references)]
  lines.append("-" * len(lines[-1]))
  for curve in curves:
    for budget in budgets:
      updates = curve.at(budget, curve.updates)
      if math.isnan(updates):
        continue
      frames = schedule.frames_at(updates)  # where every reference had made as many updates
      cells = []
      for reference in references:
        value = reference.at(frames)
        cells.append(f"  {'beyond its curve' if math.isnan(value) else f'{value:.1f}'} ({frames:,.0f})")
      lines.append(f"{curve.label:{width}s}{budget:10,.0f}{updates:10,.0f}{curve.at(budget):9.1f}" + "".join(cells))
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
            title: str | None = None, equal_updates: UpdateSchedule | None = None) -> str:
  """Plots the runs (grouped by seed) and references to `out`; returns the table of returns at `budgets`,
  then, given the references' update schedule, the table at equal learner updates."""
  if not run_dirs:
    raise ValueError("name at least one run directory.")
  if equal_updates and not references:
    raise ValueError("--equal-updates reads reference curves at the runs' learner updates: add a --reference.")
  curves = group_runs(run_dirs)
  reference_curves = [load_reference(path) for path in references]
  tasks = sorted({c.label.split()[1] for c in curves})
  result = table([*curves, *reference_curves], budgets)
  if equal_updates:  # before the plot: input it refuses leaves no file behind
    result += "\n\n" + equal_updates_table(curves, reference_curves, budgets, equal_updates)
  plot(curves, reference_curves, out, title or " vs ".join(tasks))
  return result
