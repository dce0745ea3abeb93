"""`rlrep report`: per-task seed means and intervals, aggregates (IQM, mean, median) as rliable computes them,
unequal seed counts, references beside the runs, runs short of a budget, mixed settings refused, outputs."""

import csv
import json
import sys

import imageio.v2 as imageio
import numpy as np
import pytest
import scipy.stats

from agents.d4pg import D4PGConfig
from launch import cli
from launch.results import report
from launch.experiment import Experiment

REPS = 200


def _run(root, name, returns, seed=0, task="cartpole-swingup", **agent):
  """A run directory as `rlrep train --out` writes it: experiment.json and logs/eval.csv."""
  directory = root / "runs" / name
  (directory / "logs").mkdir(parents=True)
  experiment = Experiment(task=task, seed=seed, out=str(directory),
                          agent_config=D4PGConfig(**agent))
  (directory / "experiment.json").write_text(json.dumps(experiment.to_json()))
  rows = "".join(f"{frames},{value},{frames // 4}\n" for frames, value in returns)
  (directory / "logs" / "eval.csv").write_text("frames,eval_return,learner_steps\n" + rows)
  return directory


def _references(root, curves):
  """METHOD-TASK.csv files from {(method, task): {seed: [(frames, return), ...]}}."""
  directory = root / "reference"
  directory.mkdir()
  for (method, task), seeds in curves.items():
    rows = "".join(f"{frames},{value},{seed}\n" for seed, points in seeds.items() for frames, value in points)
    (directory / f"{method}-{task}.csv").write_text("frames,return,seed\n" + rows)
  (directory / "README.md").write_text("sources\n")  # not a curve
  return directory


def _summary(path):
  with open(path) as f:
    return list(csv.DictReader(f))


def _row(rows, task, frames, method):
  (row,) = [r for r in rows if (r["task"], r["frames"], r["method"]) == (task, str(frames), method)]
  return {k: v if k in ("task", "method") else float(v) for k, v in row.items()}


def test_a_task_is_reported_as_its_seed_mean_with_a_bootstrap_interval_beside_the_references(tmp_path):
  _run(tmp_path, "s0", [(0, 0), (100_000, 300)], seed=0)
  _run(tmp_path, "s1", [(0, 0), (90_000, 400), (110_000, 600)], seed=1)  # read between evaluations: 500
  _run(tmp_path, "s2", [(0, 0), (100_000, 800)], seed=2)
  references = _references(tmp_path, {("base", "cartpole-swingup"): {1: [(0, 0), (100_000, 100)],
                                                                      2: [(0, 0), (50_000, 100), (150_000, 300)]},
                                      ("base", "walker-walk"): {1: [(0, 0), (100_000, 900)]}})  # no run on it
  printed = report.report(tmp_path / "runs", references, [100_000], tmp_path / "out", reps=REPS)
  rows = _summary(tmp_path / "out" / "summary.csv")
  runs = _row(rows, "cartpole-swingup", 100_000, "rlrep")
  assert runs["seeds"] == 3 and runs["mean"] == pytest.approx((300 + 500 + 800) / 3)
  assert 300 <= runs["ci_low"] < runs["mean"] < runs["ci_high"] <= 800
  base = _row(rows, "cartpole-swingup", 100_000, "base")
  assert base["seeds"] == 2 and base["mean"] == pytest.approx((100 + 200) / 2)
  assert 100 <= base["ci_low"] <= base["ci_high"] <= 200
  assert not [r for r in rows if r["task"] == "walker-walk"]  # the report covers the runs' tasks
  assert "cartpole-swingup" in printed and "533.3 [" in printed and "n=3" in printed
  assert (tmp_path / "out" / "summary.txt").read_text() == printed + "\n"


def test_the_iqm_row_is_rliables_interquartile_mean_of_all_normalised_runs(tmp_path):
  returns = {"cartpole-swingup": [100, 200, 650, 900], "walker-walk": [50, 400, 700, 980]}
  for task, values in returns.items():
    for seed, value in enumerate(values):
      _run(tmp_path, f"{task}-{seed}", [(0, 0), (100_000, value)], seed=seed, task=task)
  report.report(tmp_path / "runs", _references(tmp_path, {}), [100_000], tmp_path, reps=REPS)
  rows = _summary(tmp_path / "summary.csv")
  scores = np.array([returns["cartpole-swingup"], returns["walker-walk"]]) / 1000
  iqm = _row(rows, "IQM", 100_000, "rlrep")
  assert iqm["seeds"] == 8 and iqm["mean"] == pytest.approx(scipy.stats.trim_mean(scores.ravel(), 0.25))
  assert iqm["ci_low"] <= iqm["mean"] <= iqm["ci_high"]
  assert _row(rows, "aggregate-mean", 100_000, "rlrep")["mean"] == pytest.approx(scores.mean())
  assert _row(rows, "aggregate-median", 100_000, "rlrep")["mean"] == pytest.approx(np.median(scores.mean(axis=1)))


def test_with_unequal_seed_counts_every_run_counts_and_every_task_weighs_the_same(tmp_path):
  _run(tmp_path, "r", [(0, 0), (100_000, 500)], task="walker-walk")
  references = _references(tmp_path, {("base", "walker-walk"): {s: [(100_000, v)] for s, v in enumerate([800, 900])},
                                      ("base", "finger-spin"): {s: [(100_000, v)] for s, v in
                                                                enumerate([100, 200, 300, 400])}})
  _run(tmp_path, "f", [(0, 0), (100_000, 250)], task="finger-spin")
  report.report(tmp_path / "runs", references, [100_000], tmp_path, reps=REPS)
  rows = _summary(tmp_path / "summary.csv")
  # walker's 2 seeds weigh 1/4 each, finger's 4 seeds 1/8: sorted 0.1 0.2 0.3 0.4 0.8 0.9 with cumulative weight
  # .125 .25 .375 .5 .75 1; the middle half is 0.3 and 0.4 (1/8 each) and 0.8 (1/4).
  iqm = _row(rows, "IQM", 100_000, "base")
  assert iqm["seeds"] == 6 and iqm["mean"] == pytest.approx((0.3 / 8 + 0.4 / 8 + 0.8 / 4) / 0.5)
  assert iqm["ci_low"] <= iqm["mean"] <= iqm["ci_high"]
  assert _row(rows, "aggregate-mean", 100_000, "base")["mean"] == pytest.approx((0.85 + 0.25) / 2)


def test_a_run_short_of_a_budget_does_not_count_there(tmp_path):
  _run(tmp_path, "s0", [(0, 0), (100_000, 200), (200_000, 400)], seed=0)
  _run(tmp_path, "s1", [(0, 0), (100_000, 300), (150_000, 350)], seed=1)  # stops before 200k
  _run(tmp_path, "s2", [], seed=2)  # before its first evaluation: skipped, and said so
  printed = report.report(tmp_path / "runs", _references(tmp_path, {}), [100_000, 200_000, 300_000], tmp_path,
                          reps=REPS)
  rows = _summary(tmp_path / "summary.csv")
  assert _row(rows, "cartpole-swingup", 100_000, "rlrep")["seeds"] == 2
  late = _row(rows, "cartpole-swingup", 200_000, "rlrep")
  assert late["seeds"] == 1 and late["mean"] == late["ci_low"] == late["ci_high"] == 400
  assert not [r for r in rows if r["frames"] == "300000"]
  assert "no run reached 300,000 frames" in printed
  assert "skipped:" in printed and "s2 is not an rlrep run with evaluations" in printed


def test_summary_columns_and_plots(tmp_path):
  for seed, value in enumerate([300, 500]):
    _run(tmp_path, f"s{seed}", [(0, 0), (100_000, value), (200_000, value + 100)], seed=seed)
  references = _references(tmp_path, {("base", "cartpole-swingup"): {1: [(0, 0), (200_000, 600)],
                                                                      2: [(0, 0), (200_000, 800)]}})
  assert cli.main(["report", str(tmp_path / "runs"), "--reference-dir", str(references), "--out",
                   str(tmp_path / "out"), "--reps", str(REPS)]) == 0
  with open(tmp_path / "out" / "summary.csv") as f:
    assert next(csv.reader(f)) == ["task", "frames", "method", "seeds", "mean", "ci_low", "ci_high"]
  rows = _summary(tmp_path / "out" / "summary.csv")
  assert {r["task"] for r in rows} == {"cartpole-swingup", "IQM", "aggregate-mean", "aggregate-median"}
  assert {(r["method"], r["frames"]) for r in rows if r["task"] == "IQM"} == {
      (method, frames) for method in ("rlrep", "base") for frames in ("100000", "200000")}
  for name in ("aggregates-100000", "aggregates-200000", "profile-100000", "profile-200000", "tasks"):
    assert imageio.imread(tmp_path / "out" / f"{name}.png").std() > 10


def test_the_same_seed_gives_the_same_intervals():
  scores = {"a": np.linspace(0.1, 0.9, 10), "b": np.linspace(0.2, 0.6, 7)}
  same = [report.aggregate_estimates(scores, REPS, seed=0)[1] for _ in range(2)]
  np.testing.assert_array_equal(*same)
  assert not np.array_equal(same[0], report.aggregate_estimates(scores, REPS, seed=1)[1])
  assert np.array_equal(report.performance_profile(scores, REPS, 3)[1], report.performance_profile(scores, REPS, 3)[1])


def test_runs_of_one_task_with_different_settings_are_refused(tmp_path, capsys):
  _run(tmp_path, "a", [(0, 0), (100_000, 300)], seed=0)
  _run(tmp_path, "b", [(0, 0), (100_000, 500)], seed=1, learning_rate=1e-3)
  assert cli.main(["report", str(tmp_path / "runs"), "--reference-dir", str(_references(tmp_path, {}))]) == 2
  error = capsys.readouterr().err
  assert "runs of cartpole-swingup" in error and "differ in more than the seed" in error
  assert "learning_rate=0.0001" in error and "learning_rate=0.001" in error and "keep one experiment" in error


@pytest.mark.parametrize("make, message", [
    (lambda tmp: [str(tmp)], "no run under"),
    (lambda tmp: [str(tmp / "none")], "no such directory; pass the directory that holds the run directories"),
    (lambda tmp: [str(_run(tmp, "r", [(0, 1)]).parent), "--reference-dir", str(tmp / "none")],
     "--reference-dir"),
    (lambda tmp: [str(_run(tmp, "r", [(0, 1)]).parent), "--reps", "0"], "at least one resample"),
])
def test_bad_input_is_a_message_not_a_traceback(tmp_path, capsys, make, message):
  assert cli.main(["report", *make(tmp_path)]) == 2
  assert message in capsys.readouterr().err


def test_missing_rliable_says_how_to_install_it(monkeypatch):
  monkeypatch.setitem(sys.modules, "rliable", None)  # `import rliable` raises ImportError
  with pytest.raises(ValueError, match=r"pip install 'rlrep\[report\]'"):
    report.task_estimate(np.array([1.0, 2.0]), REPS, 0)


def test_the_help_lists_the_options(capsys):
  assert cli.main(["report", "--help"]) == 0
  printed = capsys.readouterr().out
  assert all(option in printed for option in ("ROOT", "--reference-dir", "--at", "--out", "--reps", "--seed"))
