"""`rlrep sweep`: every task x seed of one recipe into one result tree, safe to run again.

Each cell (task, seed) is one `rlrep train` run with `--out ROOT/<task>/seed<N>` and the sweep's other train
options (the recipe). Running the same command again continues where the tree stands:

* a cell whose run reached the frame budget is skipped;
* a cell with an intact checkpoint is resumed from it (an interrupted run, or a budget raised since);
* a cell with no intact checkpoint starts afresh (a directory left by a run that died before its first
  checkpoint holds nothing to keep and is replaced), unless it holds a finished run (say, a committed result
  kept without its checkpoints), which is refused rather than replaced.

Before anything runs, every existing cell is checked against the recipe: a directory holding a run with
other learning settings (`Experiment.defining_settings`) is refused, so one tree never mixes recipes.

Cells run one after another in child processes on this machine, or, with `--ray-address`, as separate Ray
jobs on a Ray cluster (its job server, e.g. http://HEAD:8265), up to `--max-concurrent` at a time; Ray places
each job's entrypoint on a node with the CPUs it asks for, so ROOT must be storage every node shares.

Stopping a sweep on this machine (Ctrl-C, or SIGTERM or SIGHUP to the sweep) stops the running cell as its own
Ctrl-C would: the signal goes on to the cell's run, which checkpoints on its way out, and no further cell starts.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import pathlib
import signal
import subprocess
import sys
import time
from typing import Callable, Sequence

from launch.checkpoints import CheckpointStore
from launch.experiment import EXPERIMENT_FILE, Experiment

SUMMARY_FILE = "summary.json"
FINISHED = "frame budget reached"       # the stop reason of a run that trained to its budget
SET_BY_THE_SWEEP = ("--task", "--seed", "--out", "--resume", "--overwrite", "--dry-run", "--detach")
JOB_POLL_S = 10.0
FORWARDED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@dataclasses.dataclass(frozen=True)
class Cell:
  """One run of the sweep: its task, seed, output directory and what it needs (`state`)."""
  task: str
  seed: int
  out: pathlib.Path
  state: str  # "finished", "resume" or "start"

  @property
  def name(self) -> str:
    return f"{self.task} seed {self.seed}"


def cell_dir(root: pathlib.Path, task: str, seed: int) -> pathlib.Path:
  return root / task / f"seed{seed}"


def cell_state(out: pathlib.Path, frames: int) -> str:
  """"finished" (trained to `frames` or beyond), "resume" (an intact checkpoint) or "start" (nothing to keep)."""
  summary = out / SUMMARY_FILE
  done = json.loads(summary.read_text()) if summary.exists() else {}
  finished = done.get("stop_reason") == FINISHED
  if finished and done.get("frames", 0) >= frames:
    return "finished"
  if CheckpointStore(out / "checkpoints").latest() is not None:
    return "resume"
  if finished:  # e.g. a committed result, kept without its checkpoints: starting again would replace it
    raise ValueError(f"{out} holds a run finished at {done['frames']:,d} frames with no checkpoint to continue from "
                     f"to {frames:,d}: give the sweep --frames {done['frames']} (or less), or move that run away.")
  return "start"


def check_train_options(train_options: Sequence[str]) -> None:
  """Refuses train options the sweep sets itself, saying what to use instead."""
  for option in train_options:
    if option.split("=", 1)[0] in SET_BY_THE_SWEEP:
      raise ValueError(f"rlrep sweep sets {option.split('=', 1)[0]} itself for each cell: give tasks with "
                       "--tasks, seeds with --seeds and the tree with ROOT, and leave it out of the train options.")


def plan(root: pathlib.Path, tasks: Sequence[str], seeds: Sequence[int], train_options: Sequence[str],
         experiment_for: Callable[[list[str]], Experiment]) -> list[Cell]:
  """The cells in order (task by task), each with its state; refuses a cell that holds another recipe.

  `experiment_for(arguments)` is the experiment `rlrep train arguments` would run (launch/cli/commands.py's parser),
  so the recipe is checked exactly as a run would be configured.
  """
  check_train_options(train_options)
  cells = []
  for task in tasks:
    for seed in seeds:
      out = cell_dir(root, task, seed)
      wanted = experiment_for(cell_arguments(task, seed, out, train_options))
      saved = out / EXPERIMENT_FILE
      if saved.exists():
        differing = recipe_difference(Experiment.from_json(json.loads(saved.read_text())), wanted)
        if differing:
          raise ValueError(f"{out} holds a run of another recipe (it differs in {', '.join(differing)}): give the "
                           "sweep another ROOT, or move that run away.")
      cells.append(Cell(task, seed, out, cell_state(out, wanted.frames)))
  return cells


def recipe_difference(saved: Experiment, wanted: Experiment) -> list[str]:
  """The settings deciding what a run computes in which two experiments differ (`Experiment.defining_settings`)."""
  left, right = saved.defining_settings(), wanted.defining_settings()
  return sorted(name for name in left.keys() | right.keys() if left.get(name) != right.get(name))


def cell_arguments(task: str, seed: int, out: pathlib.Path, train_options: Sequence[str]) -> list[str]:
  return ["--task", task, "--seed", str(seed), "--out", str(out), *train_options]


def train_command(cell: Cell, train_options: Sequence[str], frames: int) -> list[str]:
  """The `rlrep train` command line for `cell` (without the interpreter)."""
  if cell.state == "resume":  # the saved experiment is the recipe; only the budget may have grown
    return ["train", "--resume", str(cell.out), "--frames", str(frames)]
  return ["train", *cell_arguments(cell.task, cell.seed, cell.out, train_options), "--overwrite"]


def run_here(cells: Sequence[Cell], train_options: Sequence[str], frames: int,
             echo: Callable[[str], None] = print) -> dict[str, str]:
  """Runs the unfinished cells one after another in child processes; returns each cell's outcome."""
  outcomes = {}
  pending = [cell for cell in cells if cell.state != "finished"]
  for cell in cells:
    if cell.state == "finished":
      outcomes[cell.name] = "finished before"
  for index, cell in enumerate(pending, 1):
    echo(f"sweep: [{index}/{len(pending)}] {cell.name}: "
         f"{'resuming from its checkpoint' if cell.state == 'resume' else 'starting'} in {cell.out}")
    returncode, signalled = run_forwarding_signals([sys.executable, "-m", "launch.cli",
                                                    *train_command(cell, train_options, frames)])
    if signalled or returncode == 130:  # the run checkpointed on its way out; stop the sweep too
      outcomes[cell.name] = "interrupted"
      echo("sweep: interrupted; run the same command again to resume where it stopped")
      break
    outcomes[cell.name] = "done" if returncode == 0 else f"failed (exit {returncode})"
  return outcomes


def run_forwarding_signals(command: Sequence[str]) -> tuple[int, bool]:
  """Runs `command` to its end, passing on each Ctrl-C, SIGTERM or SIGHUP this process gets; returns its exit
  code and whether a signal came.

  The child runs in its own session, so a terminal's Ctrl-C reaches it once, through here, instead of twice
  (to the whole foreground group, then forwarded), which a run takes as a second signal and aborts without its
  final checkpoint; and a SIGTERM sent to the sweep alone no longer leaves its run training on, orphaned.
  """
  child = subprocess.Popen(list(command), start_new_session=True)
  signalled = []

  def forward(number, frame):
    signalled.append(number)
    child.send_signal(number)

  previous = {number: signal.signal(number, forward) for number in FORWARDED_SIGNALS}
  try:
    return child.wait(), bool(signalled)
  finally:
    for number, handler in previous.items():
      signal.signal(number, handler)


def job_id(cell: Cell, root: pathlib.Path) -> str:
  """A Ray job id unique to the cell and tree, new for each attempt (Ray keeps ended jobs' ids)."""
  digest = hashlib.sha1(str(root.resolve()).encode()).hexdigest()[:8]
  return f"rlrep-{cell.task}-seed{cell.seed}-{digest}-{int(time.time())}"


def run_as_ray_jobs(cells: Sequence[Cell], train_options: Sequence[str], frames: int, root: pathlib.Path,
                    address: str, max_concurrent: int, entrypoint_cpus: float,
                    echo: Callable[[str], None] = print, client=None) -> dict[str, str]:
  """Submits the unfinished cells as Ray jobs to the cluster at `address`, at most `max_concurrent` at a
  time, and waits for every one; returns each cell's outcome. Each job's log stays on Ray's job server
  (`ray job logs ID`) and the run's own logs in its output directory."""
  if client is None:
    from ray.job_submission import JobSubmissionClient
    client = JobSubmissionClient(address)
  outcomes = {cell.name: "finished before" for cell in cells if cell.state == "finished"}
  waiting = [cell for cell in cells if cell.state != "finished"]
  running: dict[str, Cell] = {}
  while waiting or running:
    while waiting and len(running) < max_concurrent:
      cell = waiting.pop(0)
      entrypoint = " ".join([sys.executable, "-m", "launch.cli", *train_command(cell, train_options, frames)])
      submitted = client.submit_job(entrypoint=entrypoint, submission_id=job_id(cell, root),
                                    entrypoint_num_cpus=entrypoint_cpus)
      running[submitted] = cell
      echo(f"sweep: {cell.name}: submitted as Ray job {submitted} ({cell.state})")
    for submitted, cell in list(running.items()):
      status = str(client.get_job_status(submitted)).rsplit(".", 1)[-1]
      if status in ("SUCCEEDED", "FAILED", "STOPPED"):
        del running[submitted]
        outcomes[cell.name] = "done" if status == "SUCCEEDED" else f"{status.lower()} (ray job logs {submitted})"
        echo(f"sweep: {cell.name}: {outcomes[cell.name]}")
    if running:
      time.sleep(JOB_POLL_S)
  return outcomes
