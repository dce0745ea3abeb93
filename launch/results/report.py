"""`rlrep report`: the runs under one directory reported as the field reports results (rliable, Agarwal et al.
2021): per task and aggregated over tasks, with bootstrap intervals, beside published reference curves.

Runs. Every directory under ROOT, at any depth, that `compare.load_run` reads (experiment.json with logs/eval.csv,
or with eval.csv beside it as committed under benchmarks/results/) is a run; a directory with experiment.json that
it cannot read (e.g. a run before its first evaluation) is listed as skipped. Runs are grouped by task, and the
runs of one task must be seeds of one experiment (equal `compare.grouping_settings`): pooling two configurations
as seeds would misreport both, so the report refuses them.

A run's value at a budget is its evaluation return at that many frames as `compare.Curve.at` reads a curve: the
evaluation logged at exactly that frame count, else the linear interpolation between the evaluations before and
after it. A run whose evaluations end before the budget does not count there. Each seed of a reference
(`METHOD-TASK.csv` in the reference directory, columns frames, return, seed) is read the same way.

Per task and budget (rows named by the task, raw returns): the mean over seeds with a 95% percentile bootstrap
interval (seeds resampled with replacement: rliable's bootstrap on one task).

Across tasks (rows `IQM`, `aggregate-mean`, `aggregate-median`, on return / 1000, Control Suite returns lying in
[0, 1000]): rliable's interquartile mean of all runs, and the mean and median of the task means, each with a 95%
stratified bootstrap interval (runs resampled within each task). At a budget the tasks are those where a run
under ROOT reached it, and a reference is aggregated over the same tasks, only if it has seeds on all of them,
so that the aggregates at one budget compare. Performance profiles (the fraction of runs scoring above each
threshold, rliable's `create_performance_profile`) are taken on the same scores.

Unequal seed counts: rliable bootstraps a (runs x tasks) array, which needs as many runs on every task. With
equal counts that is what it gets. With unequal counts (e.g. a reference with 8 seeds on one task and 10 on
another) every run is kept: `get_interval_estimates` is given one array per task, which it resamples
independently (its `StratifiedIndependentBootstrap`, the same stratified bootstrap), and every task weighs the
same: the mean and median are over task means as before; the IQM is that of all runs with each of a task's n runs
weighing 1/n (the weighted mean of the middle half of the weight; rliable's IQM when the counts are equal and
their total is a multiple of 4, since its trimmed mean cuts whole runs); the profile is the mean over tasks of
each task's fraction of runs above the threshold.

Outputs in OUT: summary.csv (`COLUMNS`), summary.txt (the terminal's table), aggregates-FRAMES.png (IQM, mean
and median intervals per method), profile-FRAMES.png (performance profiles) and tasks.png (per-task means and
intervals at every budget).
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import json
import math
import pathlib
from typing import Iterator, Sequence

import numpy as np

from launch.results import compare
from launch.experiment import EXPERIMENT_FILE

RUNS = "rlrep"  # the method name of the runs under ROOT
SCALE = 1000.0  # Control Suite returns lie in [0, 1000]: aggregates are over return / SCALE
AGGREGATES = ("IQM", "aggregate-mean", "aggregate-median")
COLUMNS = ("task", "frames", "method", "seeds", "mean", "ci_low", "ci_high")
TAUS = np.linspace(0.0, 1.0, 101)  # performance profile thresholds on return / SCALE


@dataclasses.dataclass(frozen=True)
class Estimate:
  """A row of summary.csv: `mean` with its 95% bootstrap interval over `seeds` runs (for an aggregate, summed
  over tasks)."""
  task: str
  frames: float
  method: str
  seeds: int
  mean: float
  ci_low: float
  ci_high: float


def _pyplot():
  import matplotlib
  matplotlib.use("Agg")  # files only; before anything (rliable's plot_utils too) imports pyplot
  from matplotlib import pyplot
  return pyplot


def _rliable():
  _pyplot()
  try:
    from rliable import library, metrics, plot_utils
  except ImportError as error:
    raise ValueError(f"rlrep report computes its statistics with rliable, which is missing ({error}): install it: "
                     "pip install 'rlrep[report]'") from error
  return library, metrics, plot_utils


@contextlib.contextmanager
def _seeded(seed: int) -> Iterator[None]:
  # rliable's bootstraps draw from NumPy's global generator (np.random.choice) whatever random_state they are
  # given: seed it for each estimate, so that every number depends only on its data and --seed.
  state = np.random.get_state()
  np.random.seed(seed)
  try:
    yield
  finally:
    np.random.set_state(state)


def _curve(label: str, frames: Sequence[float], returns: Sequence[float]) -> compare.Curve:
  """One seed as a curve, so that it is read at a budget as `compare.Curve.at` reads every curve."""
  order = np.argsort(frames, kind="stable")
  frames, returns = np.asarray(frames, float)[order], np.asarray(returns, float)[order]
  return compare.Curve(label, frames, returns, returns, returns, 1)


def load_runs(root: str | pathlib.Path) -> tuple[dict[str, list[compare.Curve]], list[str]]:
  """The runs under `root` by task, one curve per run, and why directories with experiment.json were skipped."""
  root = pathlib.Path(root)
  if not root.is_dir():
    raise ValueError(f"{root}: no such directory; pass the directory that holds the run directories.")
  curves: dict[str, list[compare.Curve]] = {}
  experiments: dict[str, dict[str, list[pathlib.Path]]] = {}  # task -> grouping settings -> run directories
  skipped = []
  for settings_file in sorted(root.rglob(EXPERIMENT_FILE)):
    try:
      settings, rows = compare.load_run(settings_file.parent)
    except ValueError as error:
      skipped.append(str(error))
      continue
    key = json.dumps(compare.grouping_settings(settings), sort_keys=True, default=str)
    experiments.setdefault(settings["task"], {}).setdefault(key, []).append(settings_file.parent)
    curves.setdefault(settings["task"], []).append(
        _curve(str(settings_file.parent), [r["frames"] for r in rows], [r["eval_return"] for r in rows]))
  if not curves:
    raise ValueError(f"no run under {root}: a report reads directories with experiment.json and logs/eval.csv (as "
                     "`rlrep train --out` writes them) or eval.csv (as committed under benchmarks/results/); pass "
                     "the directory that holds them." + "".join(f"\n  skipped: {reason}" for reason in skipped))
  for task, groups in experiments.items():
    if len(groups) > 1:
      raise ValueError(_mixed_settings(root, task, groups))
  return curves, skipped


def _mixed_settings(root: pathlib.Path, task: str, groups: dict[str, list[pathlib.Path]]) -> str:
  flats = [json.loads(key) for key in groups]
  differing = sorted({k for flat in flats for k in flat if any(other.get(k) != flat.get(k) for other in flats)})
  parts = []
  for flat, directories in zip(flats, groups.values()):
    values = ", ".join(f"{k.split('.')[-1]}={flat.get(k)}" for k in differing)
    more = f" and {len(directories) - 1} more" if len(directories) > 1 else ""
    parts.append(f"{values} in {directories[0]}{more}")
  return (f"runs of {task} under {root} differ in more than the seed ({'; '.join(parts)}), and a report pools one "
          "experiment's seeds per task: keep one experiment per task under the directory you report (move the "
          "others to another directory and report that one separately).")


def load_references(directory: str | pathlib.Path) -> dict[str, dict[str, list[compare.Curve]]]:
  """Each reference method's seeds by task, one curve per seed, from the `METHOD-TASK.csv` files in
  `directory` (columns frames, return, seed)."""
  directory = pathlib.Path(directory)
  if not directory.is_dir():
    raise ValueError(f"--reference-dir {directory}: no such directory; pass the folder of METHOD-TASK.csv reference "
                     "curves (benchmarks/results/reference in the rlrep repository).")
  methods: dict[str, dict[str, list[compare.Curve]]] = {}
  for path in sorted(directory.glob("*-*.csv")):
    method, task = path.stem.split("-", 1)
    seeds: dict[float, list[tuple[float, float]]] = {}
    for row in compare.read_reference(path):
      if "seed" not in row:
        raise ValueError(f"reference {path}: every row needs a 'seed' (a report resamples seeds); add the column.")
      seeds.setdefault(row["seed"], []).append((row["frames"], row["return"]))
    methods.setdefault(method, {})[task] = [_curve(f"{path.stem} seed {seed:g}", *zip(*points))
                                           for seed, points in seeds.items()]
  return methods


def scores_at(seeds: dict[str, list[compare.Curve]], budget: float) -> dict[str, np.ndarray]:
  """Each task's returns at `budget` frames, one per run that reached it; tasks that none reached left out."""
  values = {task: np.array([v for curve in curves if not math.isnan(v := curve.at(budget))])
            for task, curves in seeds.items()}
  return {task: v for task, v in values.items() if len(v)}


def task_estimate(returns: np.ndarray, reps: int, seed: int) -> tuple[float, float, float]:
  """The mean of one task's `returns` (one per run) and its 95% percentile bootstrap interval."""
  library, metrics, _ = _rliable()
  with _seeded(seed):
    point, interval = library.get_interval_estimates(
        {"": returns[:, None]}, lambda x: np.array([metrics.aggregate_mean(x)]), reps=reps)
  return float(point[""][0]), float(interval[""][0, 0]), float(interval[""][1, 0])


def _equal_counts(scores: dict[str, np.ndarray]) -> bool:
  return len({len(v) for v in scores.values()}) == 1


def _task_weighted_iqm(tasks: Sequence[np.ndarray]) -> float:
  """The mean of the middle half, by weight, of all runs' scores, each of a task's n runs weighing 1/n."""
  values = np.concatenate([t.ravel() for t in tasks])
  weights = np.concatenate([np.full(t.size, 1.0 / (t.size * len(tasks))) for t in tasks])
  order = np.argsort(values, kind="stable")
  values, weights = values[order], weights[order]
  upper = np.cumsum(weights)
  kept = np.clip(np.minimum(upper, 0.75) - np.maximum(upper - weights, 0.25), 0.0, None)
  return float(np.sum(kept * values) / np.sum(kept))


def aggregate_estimates(scores: dict[str, np.ndarray], reps: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
  """IQM, mean and median (`AGGREGATES`) over the tasks of `scores` (task -> normalised score of each run), and
  their 95% stratified bootstrap intervals (2 x 3: lower bounds, upper bounds); see the module docstring for
  unequal run counts."""
  library, metrics, _ = _rliable()
  if _equal_counts(scores):
    data = np.stack(list(scores.values()), axis=1)  # runs x tasks

    def statistics(x: np.ndarray) -> np.ndarray:
      return np.array([metrics.aggregate_iqm(x), metrics.aggregate_mean(x), metrics.aggregate_median(x)])
  else:
    data = [v[:, None] for v in scores.values()]

    def statistics(*tasks: np.ndarray) -> np.ndarray:
      means = [t.mean() for t in tasks]
      return np.array([_task_weighted_iqm(tasks), np.mean(means), np.median(means)])
  with _seeded(seed):
    point, interval = library.get_interval_estimates({"": data}, statistics, reps=reps)
  return point[""], interval[""]


def performance_profile(scores: dict[str, np.ndarray], reps: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
  """The fraction of runs whose normalised score exceeds each of `TAUS`, and its 95% stratified bootstrap band."""
  library, _, _ = _rliable()
  with _seeded(seed):
    if _equal_counts(scores):
      # rliable's score distribution (fraction of all runs above tau), vectorised over the thresholds
      profiles, bands = library.create_performance_profile(
          {"": np.stack(list(scores.values()), axis=1)}, TAUS, reps=reps,
          custom_profile_func=lambda x, taus: np.mean(x[..., None] > taus, axis=(0, 1)))
    else:
      profiles, bands = library.get_interval_estimates(
          {"": [v[:, None] for v in scores.values()]},
          lambda *tasks: np.mean([np.mean(t[:, 0, None] > TAUS, axis=0) for t in tasks], axis=0), reps=reps)
  return profiles[""], bands[""]


def report(root: str | pathlib.Path, reference_dir: str | pathlib.Path, budgets: Sequence[float],
           out: str | pathlib.Path | None = None, reps: int = 2000, seed: int = 0) -> str:
  """Writes summary.csv, summary.txt (the returned table) and the plots to `out` (default `root`) for the runs
  under `root` beside the references in `reference_dir`, at each of `budgets` frames; returns the table."""
  if reps < 1:
    raise ValueError(f"--reps {reps}: a bootstrap needs at least one resample (the field uses thousands).")
  runs, skipped = load_runs(root)
  references = load_references(reference_dir)
  # On the tasks the runs cover: those are what the report compares.
  methods = {RUNS: runs, **{method: {task: c for task, c in tasks.items() if task in runs}
                            for method, tasks in sorted(references.items())}}
  estimates, notes = [], []
  aggregates: dict[float, dict[str, tuple[np.ndarray, np.ndarray]]] = {}
  profiles: dict[float, dict[str, tuple[np.ndarray, np.ndarray]]] = {}
  for budget in budgets:
    scores = {method: scores_at(seeds, budget) for method, seeds in methods.items()}
    for task in sorted(runs):
      for method, by_task in scores.items():
        if task in by_task:
          estimates.append(Estimate(task, budget, method, len(by_task[task]),
                                    *task_estimate(by_task[task], reps, seed)))
    tasks = sorted(scores[RUNS])
    if not tasks:
      notes.append(f"no run reached {budget:,.0f} frames: no aggregates there")
      continue
    aggregates[budget], profiles[budget] = {}, {}
    for method, by_task in scores.items():
      if missing := [task for task in tasks if task not in by_task]:
        notes.append(f"{method}: no aggregates at {budget:,.0f} frames (no seed of it there on {', '.join(missing)})")
        continue
      normalised = {task: by_task[task] / SCALE for task in tasks}
      point, interval = aggregates[budget][method] = aggregate_estimates(normalised, reps, seed)
      runs_counted = sum(len(v) for v in normalised.values())
      estimates += [Estimate(name, budget, method, runs_counted, float(point[i]), float(interval[0, i]),
                             float(interval[1, i])) for i, name in enumerate(AGGREGATES)]
      profiles[budget][method] = performance_profile(normalised, reps, seed)
  out = pathlib.Path(out or root)
  out.mkdir(parents=True, exist_ok=True)
  write_summary(estimates, out / "summary.csv")
  colors = {method: f"C{i}" for i, method in enumerate(methods)}
  for budget in aggregates:
    plot_aggregates(aggregates[budget], colors, out / f"aggregates-{budget:.0f}.png", budget)
    plot_profiles(profiles[budget], colors, out / f"profile-{budget:.0f}.png", budget)
  plot_tasks(estimates, budgets, colors, out / "tasks.png")
  text = "\n\n".join([table(estimates, budgets), *(["\n".join(notes)] if notes else []),
                       *(["\n".join(f"skipped: {reason}" for reason in skipped)] if skipped else [])])
  (out / "summary.txt").write_text(text + "\n")  # the table as the terminal shows it, beside the CSV
  return text


def write_summary(estimates: Sequence[Estimate], path: pathlib.Path) -> None:
  with path.open("w", newline="") as f:
    writer = csv.writer(f)
    writer.writerow(COLUMNS)
    for e in estimates:
      frames = int(e.frames) if float(e.frames).is_integer() else e.frames
      writer.writerow([e.task, frames, e.method, e.seeds, *(f"{v:.6g}" for v in (e.mean, e.ci_low, e.ci_high))])


def table(estimates: Sequence[Estimate], budgets: Sequence[float]) -> str:
  """Per budget, a row per task and aggregate and a column per method: mean [95% interval] and runs counted."""
  methods = list(dict.fromkeys(e.method for e in estimates))
  cells = {}
  for e in estimates:
    d = 3 if e.task in AGGREGATES else 1  # aggregates are on return / SCALE
    cells[e.frames, e.task, e.method] = f"{e.mean:.{d}f} [{e.ci_low:.{d}f}, {e.ci_high:.{d}f}] n={e.seeds}"
  width = max(len(cell) for cell in cells.values()) + 2
  task_width = max(len(e.task) for e in estimates) + 2
  blocks = []
  for budget in budgets:
    tasks = list(dict.fromkeys(e.task for e in estimates if e.frames == budget))
    header = f"{f'{budget:,.0f} frames':{task_width}s}" + "".join(f"{method:{width}s}" for method in methods)
    lines = [header, "-" * len(header.rstrip())]
    lines += [f"{task:{task_width}s}" + "".join(f"{cells.get((budget, task, m), ''):{width}s}" for m in methods)
              for task in tasks]
    blocks.append("\n".join(line.rstrip() for line in lines))
  return (f"mean over seeds [95% bootstrap interval] n=runs; tasks in returns, {', '.join(AGGREGATES)} over "
          f"return / {SCALE:g}\n\n" + "\n\n".join(blocks))


def _save(figure, path: pathlib.Path) -> None:
  figure.savefig(path, dpi=100, bbox_inches="tight")
  _pyplot().close(figure)


def plot_aggregates(estimates: dict[str, tuple[np.ndarray, np.ndarray]], colors: dict[str, str], path: pathlib.Path,
                    budget: float) -> None:
  _, _, plot_utils = _rliable()
  figure, _ = plot_utils.plot_interval_estimates(
      {m: point for m, (point, _) in estimates.items()}, {m: interval for m, (_, interval) in estimates.items()},
      metric_names=["IQM", "Mean", "Median"], algorithms=list(estimates), colors=colors,
      xlabel=f"return / {SCALE:g} at {budget:,.0f} frames, 95% stratified bootstrap intervals", row_height=0.6,
      xlabel_y_coordinate=-0.25, wspace=0.25)
  _save(figure, path)


def plot_profiles(profiles: dict[str, tuple[np.ndarray, np.ndarray]], colors: dict[str, str], path: pathlib.Path,
                  budget: float) -> None:
  _, _, plot_utils = _rliable()
  figure, axes = _pyplot().subplots(figsize=(7, 4.5))
  plot_utils.plot_performance_profiles({m: profile for m, (profile, _) in profiles.items()}, TAUS,
                                       performance_profile_cis={m: band for m, (_, band) in profiles.items()},
                                       colors=colors, xlabel=rf"return / {SCALE:g} ($\tau$)", ax=axes, legend=True)
  axes.set_title(f"performance profiles at {budget:,.0f} frames")
  _save(figure, path)


def plot_tasks(estimates: Sequence[Estimate], budgets: Sequence[float], colors: dict[str, str],
               path: pathlib.Path) -> None:
  from matplotlib.patches import Patch
  rows = [e for e in estimates if e.task not in AGGREGATES]
  tasks = list(dict.fromkeys(e.task for e in rows))
  columns = min(4, len(tasks))
  figure, axes = _pyplot().subplots(math.ceil(len(tasks) / columns), columns, figsize=(3.4 * columns,
                                    2.8 * math.ceil(len(tasks) / columns)), squeeze=False)
  width = 0.8 / len(colors)
  for axis, task in zip(axes.flat, tasks):
    for index, method in enumerate(colors):
      bars = [e for e in rows if e.task == task and e.method == method]
      axis.bar([list(budgets).index(e.frames) + (index - (len(colors) - 1) / 2) * width for e in bars],
               [e.mean for e in bars], width, color=colors[method], capsize=2,
               yerr=[[e.mean - e.ci_low for e in bars], [e.ci_high - e.mean for e in bars]])
    axis.set_xticks(range(len(budgets)), [f"{b:,.0f}" for b in budgets])
    axis.set_title(task)
    axis.grid(alpha=0.3, axis="y")
  for axis in axes.flat[len(tasks):]:
    axis.set_visible(False)
  figure.supxlabel("frames")
  figure.supylabel("evaluation return\n(mean over seeds, 95% interval)")
  figure.legend(handles=[Patch(color=color, label=method) for method, color in colors.items()], loc="upper center",
                ncol=len(colors))
  figure.tight_layout(rect=(0, 0, 1, 1 - 0.35 / figure.get_figheight()))  # room for the legend above
  _save(figure, path)
