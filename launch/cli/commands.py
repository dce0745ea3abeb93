"""The `rlrep` command: `rlrep train`, `rlrep cluster`, `rlrep compare`, `rlrep doctor`, `rlrep rollout`; see
`rlrep --help`."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import pathlib
import sys


# Each command's line in `rlrep --help`. A command's own options are built only when it is the one given (or for the
# full parser), so `rlrep --help`, `rlrep doctor` and the light commands load no agent, TensorFlow or Reverb.
COMMANDS = {
    "train": "train an agent (actors + replay + replicated learner) and write logs, checkpoints, videos",
    "doctor": "check the Python stack, GL rendering and TF devices",
    "compare": "plot evaluation return vs frames of several runs (seeds pooled) beside reference curves",
    "report": "per-task and aggregate results (IQM, mean, median) with bootstrap intervals, beside published curves "
              "(rliable)",
    "sweep": "run tasks x seeds of one recipe into one result tree, skipping finished runs and resuming interrupted "
             "ones",
    "cluster": "status, logs, stop or outputs of a job submitted with `rlrep train --mode cluster`",
    "rollout": "step a task with random actions; write a video and a frame strip",
}


def _doctor(_: argparse.Namespace) -> int:
  from launch.cli import doctor
  return doctor.run()


def _rollout(args: argparse.Namespace) -> int:
  from launch.cli import rollout
  result = rollout.rollout(args.task, args.steps, args.out, size=args.size, render_quality=args.render_quality,
                           action_repeat=args.action_repeat, frame_stack=args.frame_stack, seed=args.seed,
                           video_format=args.video_format)
  print(f"{result.frames} frames at {result.frames_per_second:.1f} frames/s; wrote {result.video} and {result.strip}")
  return 0


def _compare(args: argparse.Namespace) -> int:
  from launch.results import compare
  print(compare.compare(args.runs, args.reference, args.out, args.at, args.title, args.equal_updates))
  print(f"wrote {args.out}")
  return 0


def _sweep(args: argparse.Namespace) -> int:
  from launch.results import sweep
  train_options = args.train_options
  experiment_for = train_experiment
  root = pathlib.Path(args.root)
  sweep.check_train_options(train_options)
  frames = experiment_for(["--task", args.tasks[0]] + list(train_options)).frames
  cells = sweep.plan(root, args.tasks, args.seeds, train_options, experiment_for)
  counts = {state: sum(cell.state == state for cell in cells) for state in ("finished", "resume", "start")}
  print(f"sweep: {len(cells)} runs in {root}: {counts['finished']} finished, {counts['resume']} to resume, "
        f"{counts['start']} to start", flush=True)
  if args.ray_address:
    outcomes = sweep.run_as_ray_jobs(cells, train_options, frames, root, args.ray_address, args.max_concurrent,
                                     args.entrypoint_cpus)
  else:
    outcomes = sweep.run_here(cells, train_options, frames)
  for name, outcome in outcomes.items():
    print(f"  {name}: {outcome}")
  if "interrupted" in outcomes.values():
    return 130  # as an interrupted `rlrep train`
  return 0 if all(outcome in ("done", "finished before") for outcome in outcomes.values()) else 1


def _cluster(args: argparse.Namespace) -> int:
  from launch.cluster import kube
  job = kube.Job.from_out(args.out)
  if args.action == "status":
    print(kube.status_report(job))
  elif args.action == "logs" and args.no_follow:
    kube.print_logs(job)
  elif args.action == "logs":
    kube.follow(job)  # a failed job raises RunFailed: exit 1
  elif args.action == "stop":
    print(kube.stop(job))
  else:
    dest = pathlib.Path(args.dest or args.out)
    kube.fetch(job, dest, image=args.image)
    print(f"copied {job.name}'s outputs to {dest}")
  return 0


class _DefaultsHelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
  """Appends each option's default to its help, unless the help already says it or the default is None (an
  option left out, which "(default: None)" does not explain)."""

  def _get_help_string(self, action: argparse.Action) -> str | None:
    if action.default is None or "(default:" in (action.help or ""):
      return action.help
    return super()._get_help_string(action)


def _frame_budgets(text: str) -> list[float]:
  try:
    budgets = [float(part) for part in text.split(",") if part.strip()]
  except ValueError:
    raise argparse.ArgumentTypeError(f"expected comma-separated frame counts, e.g. 100000,200000; got {text!r}")
  if not budgets or min(budgets) < 0:
    raise argparse.ArgumentTypeError(f"expected non-negative frame counts, got {text!r}")
  return budgets


def _update_schedule(text: str):
  from launch.results import compare
  if text.strip().lower() == "drqv2":
    return compare.DRQV2_UPDATES
  try:
    start, per_update = (float(part) for part in text.split(","))
  except ValueError:
    raise argparse.ArgumentTypeError(f"expected drqv2 or START_FRAMES,FRAMES_PER_UPDATE, e.g. 4000,4; got {text!r}")
  if start < 0 or per_update <= 0:
    raise argparse.ArgumentTypeError(f"expected START_FRAMES >= 0 and FRAMES_PER_UPDATE > 0, got {text!r}")
  return compare.UpdateSchedule(start, per_update)


def experiment_from_args(args: argparse.Namespace):
  """The experiment `rlrep train` runs for parsed `args`, and where each setting came from (flag, preset,
  saved run, default)."""
  import agents
  from launch import experiment as experiment_lib
  from launch.cli import options
  from launch.cluster.config import ClusterConfig
  from launch.modes import train

  agent = agents.get(getattr(args, "agent", agents.DEFAULT_AGENT))
  agent_overrides = options.given_values(args, agent.config)
  experiment_overrides = options.given_values(args, experiment_lib.Experiment)
  cluster_overrides = options.given_values(args, ClusterConfig)
  flags = {k: "flag" for k in [*agent_overrides, *experiment_overrides, *cluster_overrides]}
  if args.resume:
    if "out" in experiment_overrides or agent_overrides:
      raise ValueError("--resume continues the saved experiment: only budget, scale and logging options "
                       "(e.g. --frames, --actors, --mode) can change; drop --out and agent settings.")
    experiment = train.resolve_experiment(None, args.resume, experiment_overrides, cluster_overrides)
    return experiment, {name: "saved" for name in _setting_names(experiment)} | flags
  pixels = agent_overrides.get("pixels", True)
  base = agent.config() if pixels else agent.state_features()
  task = experiment_overrides.get("task", experiment_lib.Experiment.task)
  preset = agent.preset(task, agent_overrides) if pixels else {}
  experiment = experiment_lib.Experiment(
      **experiment_overrides, cluster=ClusterConfig(**cluster_overrides),
      agent_config=dataclasses.replace(base, **preset, **agent_overrides))
  return experiment, {k: "preset" for k in preset} | flags


def train_experiment(arguments: list[str]):
  """The experiment `rlrep train ARGUMENTS` would run (without running it)."""
  parsed = build_parser(requested_agent(["train", *arguments])).parse_args(["train", *arguments])
  return experiment_from_args(parsed)[0]


def _train(args: argparse.Namespace) -> int:
  from launch.modes import train
  experiment, sources = experiment_from_args(args)
  print(settings_summary(experiment, sources), flush=True)
  print(precision_line(experiment), flush=True)
  summary = train.train(experiment, resume=bool(args.resume), overwrite=args.overwrite, dry_run=args.dry_run,
                        detach=args.detach)
  print(json.dumps(summary, indent=2, default=str))
  if "final_eval_return" in summary:  # a finished run (cluster mode returns what it submitted)
    print(summary_line(summary))
  return 0


def summary_line(summary: dict) -> str:
  """The run in one line: budget, speed, and the evaluation return from its first evaluation to its last.

  >>> line = summary_line({"frames": 20000, "wall_s": 500.0, "learner_steps": 1200, "first_eval_return": 1.0,
  ...                      "first_eval_frames": 0, "final_eval_return": 160.25, "best_eval_return": 181.0,
  ...                      "best_eval_frames": 16000})
  >>> for part in line.split("; "):
  ...   print(part)
  done: 20,000 frames in 8m20s (40.0 frames/s), 1,200 learner steps
  evaluation return 1.0 at 0 frames -> 160.2 at the end (best 181.0 at 16,000 frames)

  A resumed run's time and speed are its own (`wall_s` counts from the resume):

  >>> summary_line({"frames": 20000, "resumed_at_frames": 15000, "wall_s": 100.0, "learner_steps": 1200,
  ...               "first_eval_return": 1.0, "first_eval_frames": 0, "final_eval_return": 160.25,
  ...               "best_eval_return": 181.0, "best_eval_frames": 16000}).split("; ")[0]
  'done: 20,000 frames, resumed at 15,000: 5,000 in 1m40s (50.0 frames/s), 1,200 learner steps'
  """
  minutes, seconds = divmod(int(summary["wall_s"]), 60)
  resumed_at = summary.get("resumed_at_frames", 0)  # summaries written before it was recorded: a fresh run
  stepped = summary["frames"] - resumed_at
  budget = (f"{summary['frames']:,d} frames, resumed at {resumed_at:,d}: {stepped:,d}" if resumed_at else
            f"{summary['frames']:,d} frames")
  return (f"done: {budget} in {minutes}m{seconds:02d}s ({stepped / max(summary['wall_s'], 1e-9):.1f} frames/s), "
          f"{summary['learner_steps']:,d} learner steps; evaluation return {summary['first_eval_return']:.1f} at "
          f"{summary['first_eval_frames']:,d} frames -> {summary['final_eval_return']:.1f} at the end (best "
          f"{summary['best_eval_return']:.1f} at {summary['best_eval_frames']:,d} frames)")


def precision_line(experiment) -> str:
  """The header line saying which precision the learner computes in, and why."""
  from launch.modes import checks
  choice = checks.choose_precision(experiment)
  requested = experiment.agent_config.precision
  if choice is None:
    return f"  precision: {requested}, decided on the learner's devices when it starts (its first line says which)"
  return f"  precision: {requested} -> {choice.precision} ({choice.reason})"


def _setting_names(experiment) -> list[str]:
  """The settings the run uses: the experiment's, cluster mode's own only in cluster mode, the agent's."""
  cluster = dataclasses.fields(experiment.cluster) if experiment.mode == "cluster" else ()
  return [f.name for f in dataclasses.fields(experiment) if f.name not in ("cluster", "agent_config")] + [
      f.name for f in (*cluster, *dataclasses.fields(experiment.agent_config))]


def settings_summary(experiment, sources: dict[str, str]) -> str:
  """The run's effective settings grouped by where each came from (flag, preset, saved run, default)."""
  values = {**{f.name: getattr(experiment, f.name) for f in dataclasses.fields(experiment)},
            **dataclasses.asdict(experiment.cluster), **dataclasses.asdict(experiment.agent_config)}
  groups: dict[str, list[str]] = {}
  for name in _setting_names(experiment):
    value = values[name]
    shown = ",".join(map(str, value)) if isinstance(value, (tuple, list)) else value
    groups.setdefault(sources.get(name, "default"), []).append(f"{name}={shown}")
  lines = [f"rlrep train: {experiment.agent} on {experiment.task}, {experiment.mode} mode, "
           f"{experiment.frames:,d} frames -> {experiment.out}"]
  for source in ("flag", "preset", "saved", "default"):
    if source in groups:
      lines.append(f"  {source + ':':9s}" + " ".join(groups[source]))
  return "\n".join(lines)


def _add_train_parser(commands, agent_name: str) -> None:
  import agents
  from launch import experiment as experiment_lib
  from launch.cli import options
  from launch.cluster.config import ClusterConfig

  agent = agents.get(agent_name)

  train = commands.add_parser(
      "train", help=COMMANDS["train"],
      description="Train an agent on a Control Suite task. Writes to --out: logs/train.csv, logs/eval.csv, "
                  "tensorboard/, checkpoints/, videos/, learning_curve.png and summary.json.")
  groups = options.add_dataclass_options(train, experiment_lib.Experiment, skip=("cluster", "agent_config"))
  groups["run"].add_argument("--resume", metavar="DIR",
                             help="continue the experiment saved in DIR from its last checkpoint")
  groups["run"].add_argument("--overwrite", action="store_true", help="replace whatever --out holds")
  [cluster_group] = options.add_dataclass_options(train, ClusterConfig).values()
  cluster_group.add_argument("--dry-run", action="store_true", help="write and validate the manifests only; submit "
                             "nothing")
  cluster_group.add_argument("--detach", action="store_true", help="submit and return at once instead of following "
                             "the job to its end; `rlrep cluster logs OUT` follows it later")
  train.add_argument_group(f"{agent_name} settings (`rlrep train --agent NAME --help` shows another agent's)",
                           agent.about)
  options.add_dataclass_options(train, agent.config, title_prefix=f"{agent_name}: ")
  train.set_defaults(handler=_train)


def requested_agent(argv: list[str]) -> str:
  """The `--agent` given in `argv` (its options shape the parser), else the default agent.

  >>> requested_agent(["train", "--agent=d4pg", "--frames", "10"]), requested_agent(["train", "--agent", "x"])
  ('d4pg', 'x')
  """
  import agents
  for index, arg in enumerate(argv):
    if arg.startswith("--agent="):
      return arg.split("=", 1)[1]
    if arg == "--agent" and index + 1 < len(argv):
      return argv[index + 1]
  return agents.DEFAULT_AGENT


def _add_cluster_parser(commands) -> None:
  cluster = commands.add_parser(
      "cluster", help=COMMANDS["cluster"],
      description="Follow up a job submitted with `rlrep train --mode cluster --out OUT`: OUT holds experiment.json "
                  "and manifests/, which name the RayJob and its namespace. Runs your kubectl (its current context "
                  "and credentials).")
  actions = cluster.add_subparsers(dest="action", required=True, metavar="ACTION")
  out_help = "the --out the job was submitted with"
  status = actions.add_parser("status", help="the RayJob's state in one line, and warnings (unschedulable pods, quota)")
  logs = actions.add_parser("logs", help="follow the driver's log to the job's end; exit 0 if it succeeded, 1 if not")
  logs.add_argument("--no-follow", action="store_true", help="print the log so far and return")
  stop = actions.add_parser("stop", help="delete the RayJob (with its Ray cluster), its ConfigMap and NetworkPolicy; "
                                         "outputs on the volume stay")
  fetch = actions.add_parser(
      "fetch", help="copy the run's outputs from the volume to a local directory",
      description="Copy /rlrep-runs/<job name>/ from the job's volume (claim or bucket) into DEST, through a "
                  "short-lived helper pod that mounts it read-only (the job's own pods are gone 120 s after it "
                  "ends). Works while the job runs too (a snapshot). DEST then looks like a local run's --out (for "
                  "`rlrep compare`); the volume's experiment.json replaces OUT's, which differs only in out and "
                  "replay_port.")
  for action in (status, logs, stop, fetch):
    action.add_argument("out", metavar="OUT", help=out_help)
  fetch.add_argument("dest", metavar="DEST", nargs="?", help="where to copy to (default: OUT)")
  fetch.add_argument("--image", help="the helper pod's image, any with tar and sleep (default: the run's --image)")
  cluster.set_defaults(handler=_cluster)


def _add_report_parser(commands) -> None:
  def handler(args: argparse.Namespace) -> int:
    from launch.results import report  # here: `rlrep --help` need not load rliable and matplotlib
    print(report.report(args.root, args.reference_dir, args.at, args.out, args.reps, args.seed))
    print(f"wrote summary.csv, summary.txt and plots to {args.out or args.root}")
    return 0

  report = commands.add_parser(
      "report", help=COMMANDS["report"], formatter_class=_DefaultsHelpFormatter,
      description="Report the runs under ROOT as the field reports results (rliable): per task the mean over seeds "
                  "with a 95% bootstrap interval; across tasks the IQM, mean and median of return / 1000 with "
                  "stratified bootstrap intervals; performance profiles; each reference method beside them on the "
                  "same tasks. A run's value at a budget is its evaluation return there (interpolated between "
                  "evaluations); a run short of a budget does not count at it. Writes summary.csv and PNG plots to "
                  "--out. Runs of one task must differ only by seed. Needs rliable: pip install 'rlrep[report]'.")
  report.add_argument("root", metavar="ROOT", help="directory holding run directories at any depth (experiment.json "
                                                   "with logs/eval.csv, or with eval.csv beside it)")
  report.add_argument("--reference-dir", default="benchmarks/results/reference", metavar="DIR",
                      help="folder of METHOD-TASK.csv reference curves (columns frames, return, seed)")
  report.add_argument("--at", type=_frame_budgets, default=[100_000.0, 200_000.0], metavar="FRAMES",
                      help="comma-separated frame budgets to report at")
  report.add_argument("--out", metavar="DIR", help="where to write summary.csv and the plots (default: ROOT)")
  report.add_argument("--reps", type=int, default=2000, help="bootstrap resamples per interval")
  report.add_argument("--seed", type=int, default=0, help="seed of the bootstrap resampling: the same seed gives "
                                                          "the same numbers")
  report.set_defaults(handler=handler)


def build_parser(agent_name: str | None = None, command: str | None = None) -> argparse.ArgumentParser:
  """The `rlrep` parser; `train`'s agent options are those of `agent_name` (default: the default agent).

  With `command`, only that command gets its options (the others are listed with their help line), so parsing
  loads only what that command needs: `build_parser(command="doctor")` imports no agent, TensorFlow or Reverb.
  """
  parser = argparse.ArgumentParser(
      prog="rlrep", description="Distributed RL from pixels on DeepMind Control Suite tasks.",
      formatter_class=_DefaultsHelpFormatter)
  commands = parser.add_subparsers(dest="command", required=True)
  adders = {"train": lambda: _add_train_parser(commands, agent_name or _default_agent()),
            "doctor": lambda: _add_doctor_parser(commands),
            "compare": lambda: _add_compare_parser(commands),
            "report": lambda: _add_report_parser(commands),
            "sweep": lambda: _add_sweep_parser(commands),
            "cluster": lambda: _add_cluster_parser(commands),
            "rollout": lambda: _add_rollout_parser(commands)}
  for name, add in adders.items():
    if command is None or command == name:
      add()
    else:
      commands.add_parser(name, help=COMMANDS[name], add_help=False)
  return parser


def _default_agent() -> str:
  import agents
  return agents.DEFAULT_AGENT


def _add_doctor_parser(commands) -> None:
  commands.add_parser("doctor", help=COMMANDS["doctor"]).set_defaults(handler=_doctor)


def _add_compare_parser(commands) -> None:
  from launch.results import compare as compare_lib
  drqv2 = compare_lib.DRQV2_UPDATES
  compare = commands.add_parser("compare", help=COMMANDS["compare"], formatter_class=_DefaultsHelpFormatter)
  compare.add_argument("runs", nargs="+", metavar="RUN_DIR", help="directories written by `rlrep train --out`")
  compare.add_argument("--reference", action="append", default=[], metavar="CSV",
                       help="a reference curve: CSV with 'frames' and 'return' columns (repeatable)")
  compare.add_argument("--out", default="comparison.png", help="the PNG to write")
  compare.add_argument("--at", type=_frame_budgets, default=[100_000.0, 200_000.0], metavar="FRAMES",
                       help="comma-separated frame budgets for the table")
  compare.add_argument("--title", help="plot title (default: the tasks compared)")
  compare.add_argument("--equal-updates", type=_update_schedule, metavar="SCHEDULE",
                       help="also read the references at the runs' learner updates, given the references' schedule: "
                            f"START_FRAMES,FRAMES_PER_UPDATE, or drqv2 ({drqv2.start_frames:.0f},"
                            f"{drqv2.frames_per_update:.0f}: updates begin after {drqv2.start_frames:,.0f} seed "
                            "frames, then one per 2 agent steps at action repeat 2)")
  compare.set_defaults(handler=_compare)


def _add_sweep_parser(commands) -> None:
  sweep = commands.add_parser(
      "sweep", usage="rlrep sweep ROOT --tasks TASKS [--seeds SEEDS] [sweep options] [-- TRAIN_OPTIONS ...]",
      help=COMMANDS["sweep"], formatter_class=_DefaultsHelpFormatter,
      description="Run every task x seed as `rlrep train --out ROOT/<task>/seed<N>` with the train options given "
                  "after -- (any of `rlrep train`'s: the recipe, budget and scale). Run it again to continue: finished "
                  "runs are skipped, interrupted ones resume from their checkpoints; a cell holding a run of "
                  "another recipe is refused.")
  sweep.add_argument("root", metavar="ROOT", help="the result tree (one directory per task, one per seed in it)")
  sweep.add_argument("--tasks", required=True, type=_names, help="comma-separated Control Suite tasks")
  sweep.add_argument("--seeds", default="0", type=_seeds, help="comma-separated seeds, or a range such as 0-2")
  sweep.add_argument("--ray-address", metavar="URL",
                     help="run the cells as Ray jobs on the cluster whose job server this is (e.g. "
                          "http://HEAD:8265); ROOT must be storage every node shares. Default: one after another "
                          "on this machine.")
  sweep.add_argument("--max-concurrent", type=int, default=4, help="Ray jobs running at once (with --ray-address)")
  sweep.add_argument("--entrypoint-cpus", type=float, default=2.0,
                     help="CPUs each Ray job reserves for its run (with --ray-address): where Ray places it")
  sweep.set_defaults(handler=_sweep)


def _names(text: str) -> list[str]:
  names = [part.strip() for part in text.split(",") if part.strip()]
  if not names:
    raise argparse.ArgumentTypeError(f"expected comma-separated tasks, e.g. walker-walk,finger-spin; got {text!r}")
  return names


def _seeds(text: str) -> list[int]:
  """'0,1,2' or '0-2' (or a mix, '0-2,5').

  >>> _seeds("0-2,5")
  [0, 1, 2, 5]
  """
  seeds = []
  try:
    for part in (part.strip() for part in text.split(",") if part.strip()):
      first, _, last = part.partition("-")
      seeds.extend(range(int(first), int(last or first) + 1))
  except ValueError:
    raise argparse.ArgumentTypeError(f"expected seeds such as 0,1,2 or 0-2; got {text!r}") from None
  if not seeds or min(seeds) < 0:
    raise argparse.ArgumentTypeError(f"expected non-negative seeds, got {text!r}")
  return list(dict.fromkeys(seeds))


def _add_rollout_parser(commands) -> None:
  from environments import dmc
  rollout = commands.add_parser("rollout", help=COMMANDS["rollout"], formatter_class=_DefaultsHelpFormatter)
  rollout.add_argument("--task", default="walker-walk", help="'domain-task', e.g. cheetah-run")
  rollout.add_argument("--steps", type=int, default=200, help="agent steps (each is --action-repeat frames)")
  rollout.add_argument("--out", default="runs/rollout", help="output directory")
  rollout.add_argument("--size", type=int, default=dmc.IMAGE_SIZE, help="image height and width in pixels")
  rollout.add_argument("--render-quality", choices=("standard", "fast"), default="standard",
                       help="'fast' drops shadows, reflections and multisampling (much faster in software)")
  rollout.add_argument("--action-repeat", type=int, default=dmc.ACTION_REPEAT)
  rollout.add_argument("--frame-stack", type=int, default=dmc.FRAME_STACK)
  rollout.add_argument("--seed", type=int, default=0)
  rollout.add_argument("--video-format", choices=("mp4", "gif"), default="mp4")
  rollout.set_defaults(handler=_rollout)


def given_command(argv: list[str]) -> str:
  """The command `argv` names (its first argument that is not an option), or "" for none.

  >>> given_command(["--help"]), given_command(["compare", "--help"])
  ('', 'compare')
  """
  return next((arg for arg in argv if not arg.startswith("-")), "")


def main(argv: list[str] | None = None) -> int:
  os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # TensorFlow's start-up chatter hides our messages
  try:
    argv = sys.argv[1:] if argv is None else argv
    command = given_command(argv)
    # train loads agents and environments to build its options: a bad MUJOCO_GL fails here
    parser = build_parser(requested_agent(argv) if command == "train" else None, command=command)
  except ValueError as error:
    print(f"rlrep: error: {error}", file=sys.stderr)
    return 2
  train_options: list[str] = []
  if argv[:1] == ["sweep"] and "--" in argv:  # what follows -- are the train options every cell shares
    argv, train_options = argv[:argv.index("--")], argv[argv.index("--") + 1:]
  try:
    args = parser.parse_args(argv)
    args.train_options = train_options
  except SystemExit as exit_:  # --help (0) or a usage error argparse has already explained (2)
    return exit_.code
  try:
    return args.handler(args)
  except ValueError as error:  # bad settings: the message says what to change
    print(f"rlrep {args.command}: error: {error}", file=sys.stderr)
    return 2
  except KeyboardInterrupt:  # e.g. Ctrl-C while following a cluster job, which has said how to follow it again
    print(f"rlrep {args.command}: interrupted", file=sys.stderr)
    return 130
  except RuntimeError as error:
    from launch.experiment import RunFailed
    if not isinstance(error, RunFailed):
      raise  # a bug: its traceback is what a report needs
    print(f"rlrep {args.command}: run failed: {error}", file=sys.stderr)
    return 1

