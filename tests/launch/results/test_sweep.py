"""`rlrep sweep`: tasks x seeds into one tree; run again, it skips finished runs, resumes interrupted ones and
refuses a tree of another recipe. Real runs (state features, a few thousand frames) in child processes."""

import contextlib
import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

from launch import cli
from launch.checkpoints import CheckpointStore
from launch.cli import commands
from launch.results import sweep

TINY = ["--no-pixels", "--frames", "1500", "--eval-every-frames", "1500", "--min-replay-size", "100",
        "--log-every-s", "2"]


def _sweep(root, *options, train=TINY) -> subprocess.CompletedProcess:
  return subprocess.run([sys.executable, "-m", "launch.cli", "sweep", str(root), *options, "--", *train],
                        capture_output=True, text=True, timeout=600)


def _summary(root, task, seed) -> dict:
  return json.loads((sweep.cell_dir(root, task, seed) / "summary.json").read_text())


def test_a_sweep_runs_every_cell_then_skips_finished_and_resumes_interrupted_ones(tmp_path):
  root = tmp_path / "tree"
  first = _sweep(root, "--tasks", "cartpole-balance", "--seeds", "0-1")
  assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
  assert "2 runs in" in first.stdout and "0 finished, 0 to resume, 2 to start" in first.stdout
  for seed in (0, 1):
    summary = _summary(root, "cartpole-balance", seed)
    assert summary["stop_reason"] == sweep.FINISHED and summary["frames"] >= 1500
    saved = json.loads((sweep.cell_dir(root, "cartpole-balance", seed) / "experiment.json").read_text())
    assert saved["seed"] == seed and "seed" not in saved["agent_config"] and saved["frames"] == 1500

  again = _sweep(root, "--tasks", "cartpole-balance", "--seeds", "0-1")
  assert again.returncode == 0 and "2 finished, 0 to resume, 0 to start" in again.stdout
  assert again.stdout.count("finished before") == 2 and "learner steps" not in again.stdout  # nothing ran

  # seed 1 "interrupted": its summary gone, its checkpoint kept; a larger budget resumes seed 0 as well
  (sweep.cell_dir(root, "cartpole-balance", 1) / "summary.json").unlink()
  longer = ["--no-pixels", "--frames", "2500", *TINY[3:]]
  resumed = _sweep(root, "--tasks", "cartpole-balance", "--seeds", "0-1", train=longer)
  assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
  assert "0 finished, 2 to resume, 0 to start" in resumed.stdout
  for seed in (0, 1):
    summary = _summary(root, "cartpole-balance", seed)
    assert summary["frames"] >= 2500 and summary["resumed_at_frames"] >= 1500


def test_a_cell_holding_another_recipe_is_refused_before_anything_runs(tmp_path):
  root = tmp_path / "tree"
  assert _sweep(root, "--tasks", "cartpole-balance", "--seeds", "0").returncode == 0
  before = (sweep.cell_dir(root, "cartpole-balance", 0) / "logs" / "train.csv").read_text()
  other = _sweep(root, "--tasks", "cartpole-balance", "--seeds", "0,1", train=[*TINY, "--n-step", "5"])
  assert other.returncode == 2
  assert "holds a run of another recipe (it differs in agent_config.n_step)" in other.stderr
  assert (sweep.cell_dir(root, "cartpole-balance", 0) / "logs" / "train.csv").read_text() == before
  assert not sweep.cell_dir(root, "cartpole-balance", 1).exists()


def test_a_cells_recipe_is_what_defines_its_run_so_budget_scale_and_speed_may_differ():
  run = commands.train_experiment(["--task", "walker-walk", "--seed", "1"])
  faster = commands.train_experiment(["--task", "walker-walk", "--seed", "1", "--actors", "4", "--frames", "5",
                                 "--precision", "float32", "--eval-episodes", "3"])
  assert sweep.recipe_difference(run, faster) == []
  other = commands.train_experiment(["--task", "walker-walk", "--seed", "2", "--n-step", "5"])
  assert sweep.recipe_difference(run, other) == ["agent_config.n_step", "seed"]


@pytest.mark.parametrize("option", ["--seed", "--out=x", "--resume", "--task"])
def test_options_the_sweep_sets_itself_are_refused(tmp_path, capsys, option):
  assert cli.main(["sweep", str(tmp_path), "--tasks", "walker-walk", "--", option, "1"]) == 2
  assert f"rlrep sweep sets {option.split('=')[0]} itself" in capsys.readouterr().err


def test_a_cell_with_an_intact_checkpoint_resumes_and_one_without_starts_afresh(tmp_path):
  out = tmp_path / "walker-walk" / "seed0"
  assert sweep.cell_state(out, 1000) == "start"
  out.mkdir(parents=True)
  (out / "summary.json").write_text(json.dumps({"stop_reason": "interrupted (Ctrl-C)", "frames": 500}))
  assert sweep.cell_state(out, 1000) == "start"  # stopped before its first checkpoint: nothing to keep
  (out / "summary.json").write_text(json.dumps({"stop_reason": sweep.FINISHED, "frames": 1000}))
  assert sweep.cell_state(out, 1000) == "finished"
  with pytest.raises(ValueError, match="finished at 1,000 frames with no checkpoint to continue from to 2,000"):
    sweep.cell_state(out, 2000)  # a committed result without checkpoints is never replaced


class _OneFileLearner:
  """Saves a one-file checkpoint: all `CheckpointStore` needs to call a run resumable."""
  num_steps = 7

  def save(self, path):
    pathlib.Path(path + ".index").write_text("weights")
    return path


def test_runs_saved_while_agent_configs_held_their_own_seed_are_recognised_as_finished_or_resumable(tmp_path):
  for seed in (0, 1):
    out = sweep.cell_dir(tmp_path, "cartpole-balance", seed)
    out.mkdir(parents=True)
    saved = commands.train_experiment(sweep.cell_arguments("cartpole-balance", seed, out, TINY)).to_json()
    saved["agent_config"]["seed"] = seed  # as such runs saved it: the experiment's seed, copied
    (out / "experiment.json").write_text(json.dumps(saved))
  (sweep.cell_dir(tmp_path, "cartpole-balance", 0) / "summary.json").write_text(
      json.dumps({"stop_reason": sweep.FINISHED, "frames": 1500}))
  CheckpointStore(sweep.cell_dir(tmp_path, "cartpole-balance", 1) / "checkpoints").save(
      _OneFileLearner(), {"frames": 700, "episodes": 1, "learner_steps": 7})
  cells = sweep.plan(tmp_path, ["cartpole-balance"], [0, 1], TINY, commands.train_experiment)
  assert [cell.state for cell in cells] == ["finished", "resume"]


class _FakeJobServer:
  """Ray's JobSubmissionClient as the sweep uses it: jobs end after two status polls, in submission order."""

  def __init__(self):
    self.submitted, self.polls, self.most_running = [], {}, 0

  def submit_job(self, entrypoint, submission_id, entrypoint_num_cpus):
    self.submitted.append((submission_id, entrypoint, entrypoint_num_cpus))
    self.polls[submission_id] = 0
    running = sum(1 for polls in self.polls.values() if polls < 2)
    self.most_running = max(self.most_running, running)
    return submission_id

  def get_job_status(self, submission_id):
    self.polls[submission_id] += 1
    return "JobStatus.SUCCEEDED" if self.polls[submission_id] >= 2 else "JobStatus.RUNNING"


def test_ray_jobs_are_submitted_at_most_max_concurrent_at_a_time_one_per_unfinished_cell(tmp_path, monkeypatch):
  monkeypatch.setattr(sweep, "JOB_POLL_S", 0.0)
  cells = [sweep.Cell("walker-walk", seed, tmp_path / f"seed{seed}", state)
           for seed, state in enumerate(["start", "finished", "resume", "start", "start"])]
  server = _FakeJobServer()
  outcomes = sweep.run_as_ray_jobs(cells, ["--frames", "100"], 100, tmp_path, "http://127.0.0.1:8265", 2, 1.5,
                                   echo=lambda line: None, client=server)
  assert len(server.submitted) == 4 and server.most_running <= 2
  assert outcomes == {"walker-walk seed 0": "done", "walker-walk seed 1": "finished before",
                      "walker-walk seed 2": "done", "walker-walk seed 3": "done", "walker-walk seed 4": "done"}
  entrypoints = {job_id.split("-seed")[1].split("-")[0]: entrypoint for job_id, entrypoint, _ in server.submitted}
  assert "train --resume" in entrypoints["2"] and "--frames 100" in entrypoints["2"]
  assert "--task walker-walk --seed 3" in entrypoints["3"] and all(cpus == 1.5 for *_, cpus in server.submitted)


def test_the_committed_result_tree_is_one_recipe_and_every_run_in_it_finished():
  """benchmarks/results/README.md's sweep command over the committed runs: nothing to run, nothing refused."""
  root = pathlib.Path(__file__).resolve().parents[3] / "benchmarks" / "results" / "runs" / "d4pg"
  tasks = sorted(path.name for path in root.iterdir() if path.is_dir())
  recipe = ["--render-quality", "fast", "--frames", "100000", "--eval-every-frames", "10000", "--eval-episodes", "5",
            "--video-format", "gif", "--checkpoint-replay"]
  seeds = sorted({int(path.name.removeprefix("seed")) for path in root.glob("*/seed*")})
  cells = [cell for cell in sweep.plan(root, tasks, seeds, recipe, commands.train_experiment) if cell.out.exists()]
  assert len(cells) >= 8 and {cell.state for cell in cells} == {"finished"}


def _processes_mentioning(text: str) -> list[int]:
  found = []
  for proc in pathlib.Path("/proc").iterdir():
    try:
      if proc.name.isdigit() and text in (proc / "cmdline").read_bytes().decode(errors="replace"):
        found.append(int(proc.name))
    except OSError:  # ended while we looked
      continue
  return found


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_to_the_sweep_stops_its_running_cell_with_a_checkpoint_and_starts_no_other(tmp_path, number):
  root = tmp_path / "tree"
  long_cells = ["--no-pixels", "--frames", "200000", *TINY[3:]]
  sweep_process = subprocess.Popen([sys.executable, "-m", "launch.cli", "sweep", str(root), "--tasks",
                                    "cartpole-balance", "--seeds", "0-1", "--", *long_cells],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
  try:
    train_csv = sweep.cell_dir(root, "cartpole-balance", 0) / "logs" / "train.csv"
    deadline = time.monotonic() + 300
    while not (train_csv.exists() and len(train_csv.read_text().splitlines()) >= 2):  # the cell is training
      assert sweep_process.poll() is None and time.monotonic() < deadline, "the first cell never started training"
      time.sleep(0.5)
    sweep_process.send_signal(number)  # to the sweep alone, as `kill` or a scheduler would
    output, _ = sweep_process.communicate(timeout=180)
    assert sweep_process.returncode == 130, output[-3000:]
    assert "interrupted; run the same command again" in output
    assert _summary(root, "cartpole-balance", 0)["stop_reason"].startswith("interrupted")
    assert not sweep.cell_dir(root, "cartpole-balance", 1).exists()  # no other cell started
    assert _processes_mentioning(str(root)) == []  # no run left training on its own
  finally:  # a failing run must not leave a 200k-frame run behind
    sweep_process.kill()
    for pid in _processes_mentioning(str(root)):
      with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
