"""Soak test of local mode: the resident memory of every role process over a long run, as growth per hour.

Starts `rlrep train --mode local` with small images and a frame budget it never reaches, in its own process
group, and samples the resident memory (RSS) of the driver, of each role process (counter, replay, learner,
evaluator, actors) and of Ray's daemons (gcs_server, raylet) every --every-s seconds. After --minutes it
stops the run with Ctrl-C (SIGINT to its process group, as a terminal would) and checks nothing is left.

* Role processes are recognised by what local mode makes of them: a role's stdout is `<run>/logs/<role>.log`,
  and the counter's Ray process is titled `ray::Counter`. A role seen with a new PID was restarted: it is
  reported, and judged on its newest process only, after that process's own warm-up.
* Growth per hour is the least-squares slope of RSS over the samples after warm-up, divided by their mean.
  Warm-up ends --warmup-minutes after the learner's first step (first compilations and allocator pools
  settle by then). The goal is under 5% per hour for every role.
* The replay role is meant to grow while its table fills, so it is judged only from the moment the table
  holds `max_replay_size` items (read from the run's train.csv) and after warm-up. The default size fills in
  about a third of --minutes at the rate measured on a 2-core machine shared with another training run.

Writes to --out: rss.csv (seconds since start, role, pid, rss_mb, replay_items), driver.log (the run's
terminal) and run/ (the run itself). Exits 0 when every role passed and none restarted, else 1.

Usage: python benchmarks/soak.py [--minutes 30] [--every-s 30] [--out runs/soak] [--actors 2]
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import math
import os
import pathlib
import signal
import statistics
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # for this process and the run's

import psutil  # noqa: E402

from launch import metrics  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
LIMIT_PCT_PER_HOUR = 5.0
MIN_SAMPLES = 3  # a slope needs a few points after warm-up
RAY_DAEMONS = ("gcs_server", "raylet")
REPLAY_ITEMS_PER_MINUTE = 2700  # agent steps/min measured here with these settings, 2 actors, a shared machine
STOP_TIMEOUT_S = 300.0  # the learner checkpoints and the evaluator runs a final evaluation before exiting
REAP_TIMEOUT_S = 60.0  # local mode itself waits 30 s for Ray's workers, then kills them
# Small but complete: every role does its usual work (evaluations with videos, checkpoints every 2 minutes);
# batch 32 keeps the learner cheap on 2 cores, so more learner steps happen per minute.
RUN_FLAGS = ["--mode", "local", "--task", "cartpole-swingup", "--render-quality", "fast", "--batch-size", "32",
             "--min-replay-size", "200", "--eval-every-frames", "20000", "--eval-episodes", "1",
             "--video-format", "gif", "--video-size", "64", "--log-every-s", "10", "--checkpoint-every-s", "120",
             "--frames", "1e9", "--overwrite"]


@dataclasses.dataclass(frozen=True)
class Sample:
  t: float  # seconds since the run started
  role: str
  pid: int
  rss_mb: float
  replay_items: int | None


@dataclasses.dataclass(frozen=True)
class Verdict:
  role: str
  pids: list[int]
  start_mb: float | None  # RSS at the start of the judged window (end of warm-up)
  end_mb: float | None
  growth_pct_per_hour: float | None
  result: str  # PASS, FAIL or n/a
  note: str = ""


def growth_pct_per_hour(times_s: list[float], rss_mb: list[float]) -> float:
  """Least-squares slope of RSS against time, per hour, as a percentage of the mean RSS.

  >>> round(growth_pct_per_hour([0, 1800, 3600], [100, 101, 102]), 6)
  1.980198
  """
  slope_mb_per_s = statistics.linear_regression(times_s, rss_mb).slope
  return 100.0 * slope_mb_per_s * 3600.0 / statistics.fmean(rss_mb)


def judge(samples: list[Sample], not_before: float | None, warmup_s: float, limit_pct: float,
          why_unjudged: str = "") -> Verdict:
  """The verdict on one role from its samples (in time order), judging only those from `not_before` on (None:
  never, for `why_unjudged`) and after the newest process's own warm-up, so a restart starts a new window."""
  pids = list(dict.fromkeys(s.pid for s in samples))
  newest = [s for s in samples if s.pid == pids[-1]]
  notes = [f"restarted {len(pids) - 1}x: pids {', '.join(map(str, pids))}"] if len(pids) > 1 else []
  if not_before is None:
    return Verdict(samples[0].role, pids, None, None, None, "n/a", "; ".join([why_unjudged, *notes]))
  window = [s for s in newest if s.t >= max(not_before, newest[0].t + warmup_s)]
  if len(window) < MIN_SAMPLES:
    notes.insert(0, f"{len(window)} samples after warm-up, {MIN_SAMPLES} needed")
    return Verdict(samples[0].role, pids, None, None, None, "n/a", "; ".join(notes))
  growth = growth_pct_per_hour([s.t for s in window], [s.rss_mb for s in window])
  return Verdict(samples[0].role, pids, window[0].rss_mb, window[-1].rss_mb, growth,
                 "PASS" if growth < limit_pct else "FAIL", "; ".join(notes))


def first_time(samples: list[Sample], condition) -> float | None:
  """When `condition(sample)` first held, or None."""
  return next((s.t for s in samples if condition(s)), None)


def role_of(process: psutil.Process, logs: pathlib.Path) -> str | None:
  """The role `process` plays in the run writing `logs`, or None (Ray's helpers and idle workers)."""
  try:
    stdout = pathlib.Path(os.readlink(f"/proc/{process.pid}/fd/1"))
    if stdout.parent == logs:
      return stdout.stem
    name = process.name()  # the title Ray gives a worker, e.g. ray::Counter
  except (OSError, psutil.Error):  # gone, or a zombie
    return None
  if name == "ray::Counter":
    return "counter"
  return f"ray {name}" if name in RAY_DAEMONS else None


def run_progress(run: pathlib.Path) -> tuple[int | None, bool]:
  """(items in the replay table, whether the learner has stepped) from the run's latest train.csv row."""
  try:
    rows = metrics.read_log(run, "train")
  except (OSError, TypeError, ValueError):  # caught mid-write: a partial row, or the header being widened
    return None, False
  if not rows:
    return None, False
  size = rows[-1].get("replay_size", math.nan)
  return (int(size) if math.isfinite(size) else None), rows[-1].get("learner_steps", 0) > 0


def clock(seconds: float) -> str:
  return f"{int(seconds) // 60}m{int(seconds) % 60:02d}s"


def when(t: float | None) -> str:
  return "never" if t is None else f"at {clock(t)}"


def sample(driver: psutil.Process, logs: pathlib.Path, t: float, items: int | None,
           seen: dict[int, psutil.Process]) -> list[Sample]:
  """RSS of the driver and of every role process now; adds every process of the run to `seen`."""
  found = {"driver": driver}
  for process in driver.children(recursive=True):
    seen.setdefault(process.pid, process)
    role = role_of(process, logs)
    if role is not None and (role not in found or process.create_time() > found[role].create_time()):
      found[role] = process  # an overlapping restart: the newer process is the role now
  samples = []
  for role, process in found.items():
    try:
      samples.append(Sample(t, role, process.pid, process.memory_info().rss / 2**20, items))
    except psutil.Error:
      continue
  return samples


def stop(process: subprocess.Popen, seen: dict[int, psutil.Process]) -> list[str]:
  """Ctrl-C to the run, then waits for every process it started; returns (after killing them) the ones left."""
  left = []
  if process.poll() is None:
    os.killpg(process.pid, signal.SIGINT)
    try:
      process.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
      left.append(f"the driver (pid {process.pid}), {STOP_TIMEOUT_S:.0f}s after Ctrl-C")
      os.killpg(process.pid, signal.SIGKILL)
      process.wait()
  _, alive = psutil.wait_procs(list(seen.values()), timeout=REAP_TIMEOUT_S)
  for survivor in alive:
    try:
      if survivor.status() != psutil.STATUS_ZOMBIE:
        left.append(f"{survivor.name()} (pid {survivor.pid})")
        survivor.kill()
    except psutil.NoSuchProcess:
      continue
  return left


def watch(process: subprocess.Popen, run: pathlib.Path, minutes: float, every_s: float,
          rss_file) -> tuple[list[Sample], float | None, dict[int, psutil.Process]]:
  """Samples the run every `every_s` for `minutes` (or until it ends, or Ctrl-C), appending to `rss_file`.

  Returns the samples, when the learner's first step was seen, and every process the run started."""
  rss_csv = csv.writer(rss_file)
  rss_csv.writerow(["seconds", "role", "pid", "rss_mb", "replay_items"])
  driver, logs = psutil.Process(process.pid), run / "logs"
  samples, learner_started, seen = [], None, {}
  start = time.monotonic()
  try:
    while (t := time.monotonic() - start) < 60.0 * minutes and process.poll() is None:
      items, stepped = run_progress(run)
      if stepped and learner_started is None:
        learner_started = t
      now = sample(driver, logs, t, items, seen)
      samples += now
      rss_csv.writerows([f"{s.t:.1f}", s.role, s.pid, f"{s.rss_mb:.1f}", s.replay_items] for s in now)
      rss_file.flush()
      print(f"{clock(t):>7s} replay {items or 0:>7,d} | MB " + " ".join(f"{s.role} {s.rss_mb:.0f}" for s in now),
            flush=True)
      time.sleep(max(0.0, every_s - (time.monotonic() - start - t)))
  except KeyboardInterrupt:
    print("soak interrupted: stopping the run and reporting what was sampled", flush=True)
  return samples, learner_started, seen


def main() -> int:
  parser = argparse.ArgumentParser(description=__doc__.split("\n\nUsage:")[0],
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--minutes", type=float, default=30.0, help="how long the run goes before Ctrl-C (%(default)s)")
  parser.add_argument("--every-s", type=float, default=30.0, help="seconds between RSS samples (%(default)s)")
  parser.add_argument("--warmup-minutes", type=float,
                      help="minutes after the learner's first step that are not judged (a sixth of --minutes)")
  parser.add_argument("--max-replay-size", type=int,
                      help=f"replay table items ({REPLAY_ITEMS_PER_MINUTE // 3} per --minutes: full after about a "
                           "third of the run on a shared 2-core machine)")
  parser.add_argument("--actors", type=int, default=2, help="actor processes (%(default)s)")
  parser.add_argument("--image-size", type=int, default=32, help="observation height and width (%(default)s)")
  parser.add_argument("--out", default="runs/soak", help="directory for rss.csv, driver.log and run/ (%(default)s)")
  args = parser.parse_args()
  if args.minutes <= 0 or args.every_s <= 0:
    parser.error("--minutes and --every-s must be > 0")
  warmup_s = 60.0 * (args.warmup_minutes if args.warmup_minutes is not None else args.minutes / 6)
  max_replay = args.max_replay_size or round(REPLAY_ITEMS_PER_MINUTE * args.minutes / 3)

  from launch.experiment import Experiment  # here: they load TensorFlow, which the pure helpers above do not need
  from launch.program import make_program
  expected_roles = ["driver", *(role.name for role in make_program(Experiment(actors=args.actors)))]

  out = pathlib.Path(args.out).resolve()
  out.mkdir(parents=True, exist_ok=True)
  command = [sys.executable, "-m", "launch.cli", "train", *RUN_FLAGS, "--actors", str(args.actors),
             "--image-size", str(args.image_size), "--max-replay-size", str(max_replay), "--out", str(out / "run")]
  print(f"soak: {args.minutes:g} min, RSS every {args.every_s:g}s, warm-up {clock(warmup_s)} after the learner's "
        f"first step, replay {max_replay:,d} items; writing {out}\n  rlrep {' '.join(command[3:])}", flush=True)
  signal.signal(signal.SIGINT, signal.default_int_handler)  # a backgrounded soak inherits SIGINT ignored
  with (out / "driver.log").open("w") as driver_log, (out / "rss.csv").open("w", newline="") as rss_file:
    process = subprocess.Popen(command, cwd=ROOT, stdout=driver_log, stderr=subprocess.STDOUT,
                               start_new_session=True)
    samples, learner_started, seen = watch(process, out / "run", args.minutes, args.every_s, rss_file)
  ended_early = process.poll() is not None
  if not ended_early:
    print("stopping the run (Ctrl-C to its process group) ...", flush=True)
  stop_started = time.monotonic()
  run_problems = [f"left running after the run: {name}" for name in stop(process, seen)]
  if ended_early:
    print(f"the run ended by itself (exit {process.returncode}) before the soak's end; the end of driver.log:")
    print("\n".join((out / "driver.log").read_text().splitlines()[-20:]))
    run_problems.append(f"the run ended by itself (exit {process.returncode})")
  else:
    print(f"the run exited with code {process.returncode} {time.monotonic() - stop_started:.0f}s after Ctrl-C")
    run_problems += [f"the run exited with code {process.returncode} after Ctrl-C"] if process.returncode else []
  return report(samples, expected_roles, learner_started, warmup_s, max_replay, run_problems)


def report(samples: list[Sample], expected_roles: list[str], learner_started: float | None, warmup_s: float,
           max_replay: int, run_problems: list[str]) -> int:
  """Prints the per-role table and the overall result (with `run_problems` found otherwise); returns the exit
  code."""
  warmup_end = None if learner_started is None else learner_started + warmup_s
  full_at = first_time(samples, lambda s: (s.replay_items or 0) >= max_replay)
  print(f"\nlearner's first step seen {when(learner_started)}; warm-up ends {when(warmup_end)}; replay "
        f"reached {max_replay:,d} items {when(full_at)}; limit {LIMIT_PCT_PER_HOUR:g}%/h")
  seen_roles = list(dict.fromkeys(s.role for s in samples))
  roles = [role for role in expected_roles if role in seen_roles] + [r for r in seen_roles if r not in expected_roles]
  verdicts = []
  for role in roles:
    mine = [s for s in samples if s.role == role]
    if role == "replay":
      not_before = None if full_at is None or warmup_end is None else max(full_at, warmup_end)
      why = f"replay not full: at most {max(s.replay_items or 0 for s in samples):,d} items"
    else:
      not_before, why = warmup_end, "the learner never stepped"
    verdicts.append(judge(mine, not_before, warmup_s, LIMIT_PCT_PER_HOUR, why))
  print(f"{'role':<16s}{'pid':>8s}{'MB judged from':>15s}{'MB at end':>11s}{'%/hour':>9s}  result")
  for v in verdicts:
    numbers = (f"{v.start_mb:15.1f}{v.end_mb:11.1f}{v.growth_pct_per_hour:+9.2f}" if v.growth_pct_per_hour is not None
               else f"{'-':>15s}{'-':>11s}{'-':>9s}")
    print(f"{v.role:<16s}{v.pids[-1]:>8d}{numbers}  {v.result}" + (f" ({v.note})" if v.note else ""))
  problems = [f"{v.role} {v.result}" + (f" ({v.note})" if v.note else "") for v in verdicts
              if v.result != "PASS" or len(v.pids) > 1]
  problems += [f"{role} never seen" for role in expected_roles if role not in seen_roles] + run_problems
  print("soak: PASS" if not problems else "soak: NOT PASSED: " + "; ".join(problems))
  return 0 if not problems else 1


if __name__ == "__main__":
  sys.exit(main())
