"""Local mode end to end: real Ray processes, killed roles, Ctrl-C with a final checkpoint.

One run serves most checks (Ray and TensorFlow start-up in six processes costs about a minute on 2 cores):
it kills one actor process and waits for the restart to show in train.csv, kills the evaluator and waits for
its next evaluation, then sends Ctrl-C to the whole process group, as a terminal would. A killed learner,
replay server or counter ends a run, so each has its own; the learner's resumed run ends with SIGTERM to the
driver alone, as `kill` or Kubernetes would send it. Ray's token authentication is on, as Ray sets it up by default.
"""

import json
import os
import secrets
import signal
import subprocess
import sys
import time

import psutil
import pytest

from launch import metrics
from launch.modes import local
from launch.checkpoints import CheckpointStore
from launch.experiment import Experiment
from launch.program import fit_to_nodes

TINY_LOCAL = ["--mode", "local", "--actors", "2", "--task", "cartpole-swingup", "--image-size", "32",
              "--action-repeat", "2", "--render-quality", "fast", "--batch-size", "16", "--hidden-sizes", "32",
              "--conv-channels", "8", "--feature-dim", "16", "--min-replay-size", "100", "--samples-per-insert", "8",
              "--eval-every-frames", "100000", "--log-every-s", "2", "--publish-every-steps", "5",
              "--weights-update-period", "20", "--video-format", "gif", "--video-size", "64",
              "--frames", "1000000"]


ROLE_CLASSES = {"replay": "ReplayProcess", "learner": "LearnerProcess", "evaluator": "EvaluatorProcess",
                "actor-0": "ActorProcess", "counter": "ray::Counter"}


@pytest.fixture(scope="module", autouse=True)
def ray_token_authentication(tmp_path_factory):
  """Ray's token authentication as Ray sets it up by default (RAY_AUTH_MODE unset, a token available), with a
  token of the tests' own, so that they neither read nor create ~/.ray/auth_token."""
  token = tmp_path_factory.mktemp("ray") / "auth_token"
  token.write_text(secrets.token_hex(32))
  with pytest.MonkeyPatch.context() as environment:
    environment.delenv("RAY_AUTH_MODE", raising=False)  # tests/conftest.py turns it off for in-process Ray
    environment.setenv("RAY_AUTH_TOKEN_PATH", str(token))
    yield


def _start_train(*args: str, stdout=subprocess.PIPE, environ=os.environ) -> subprocess.Popen:
  """`rlrep train ARGS` in a process group of its own (a test can signal all of it)."""
  return subprocess.Popen([sys.executable, "-m", "launch.cli", "train", *args], stdout=stdout,
                          stderr=subprocess.STDOUT, text=True, start_new_session=True, env=dict(environ))


def _processes_named(root: psutil.Process, fragment: str) -> list[psutil.Process]:
  found = []
  for process in root.children(recursive=True):
    try:
      if fragment in process.name() or fragment in " ".join(process.cmdline()):
        found.append(process)
    except psutil.NoSuchProcess:
      continue
  return found


def _without_malloc_setting(environment):
  """The test's environment without a MALLOC_ARENA_MAX of its own: the run must set it for its roles."""
  return {name: value for name, value in environment.items() if name != "MALLOC_ARENA_MAX"}


@pytest.fixture(scope="module")
def interrupted_run(tmp_path_factory, wait_for):
  out = tmp_path_factory.mktemp("local") / "run"
  log = (out.parent / "driver.log").open("w")
  process = _start_train(*TINY_LOCAL, "--out", str(out), stdout=log, environ=_without_malloc_setting(os.environ))
  driver = psutil.Process(process.pid)
  try:
    wait_for(lambda: any(r["learner_steps"] >= 20 for r in metrics.read_log(out, "train")), "learner steps",
              process)
    actor_processes = wait_for(lambda: _processes_named(driver, "ActorProcess"), "actor processes", process)
    every_process = driver.children(recursive=True)
    # What each role process started with: /proc/PID/environ holds the environment it was started with.
    environments = {role: _processes_named(driver, name)[0].environ() for role, name in ROLE_CLASSES.items()}
    killed = actor_processes[0]
    killed.kill()
    frames_at_kill = metrics.read_log(out, "train")[-1]["frames"]
    wait_for(lambda: any(r.get("actor_restarts", 0) >= 1 and r["frames"] >= frames_at_kill + 300
                          for r in metrics.read_log(out, "train")),
              "the killed actor to restart and the run to go on", process)
    # Killed only once its first evaluation is logged: killed during it, the run would log one evaluation in
    # all (the restarted evaluator's), as the next is 100k frames away.
    wait_for(lambda: metrics.read_log(out, "eval"), "the first evaluation", process)
    wait_for(lambda: _processes_named(driver, "EvaluatorProcess"), "the evaluator process", process)[0].kill()
    # The restarted evaluator evaluates at once: its first evaluation is due at the frames so far rounded down to
    # a multiple of --eval-every-frames, here 0.
    wait_for(lambda: len(metrics.read_log(out, "eval")) >= 2, "the restarted evaluator to evaluate", process)
    os.killpg(process.pid, signal.SIGINT)  # Ctrl-C in a terminal reaches the whole foreground group
    process.wait(timeout=240)
  except pytest.fail.Exception as failure:
    log.flush()
    pytest.fail(f"{failure}\n--- the run's output, last 4000 characters:\n"
                f"{(out.parent / 'driver.log').read_text()[-4000:]}")
  finally:
    if process.poll() is None:
      os.killpg(process.pid, signal.SIGKILL)
    log.close()
  return {"out": out, "returncode": process.returncode, "processes": every_process, "killed": killed.pid,
          "environments": environments, "log": (out.parent / "driver.log").read_text()}


def test_ctrl_c_stops_cleanly_with_a_final_checkpoint_and_summary(interrupted_run):
  assert interrupted_run["returncode"] == 0, interrupted_run["log"][-3000:]
  out = interrupted_run["out"]
  summary = json.loads((out / "summary.json").read_text())
  assert summary["stop_reason"] == "interrupted (Ctrl-C)" and summary["mode"] == "local"
  state = CheckpointStore(out / "checkpoints").latest()
  assert state["learner_steps"] == summary["learner_steps"] > 0  # the final checkpoint came after the last step


def test_role_processes_use_two_malloc_arenas(interrupted_run):
  assert interrupted_run["environments"]["actor-0"].get("MALLOC_ARENA_MAX") == "2"


def test_roles_without_gpus_start_with_cuda_visible_devices_empty_and_tensorflow_sees_none(interrupted_run):
  """No GPU here and a CPU learner: every role process starts with CUDA_VISIBLE_DEVICES="" (so TensorFlow cannot
  load a GPU), and each role's log reports what its TensorFlow sees and how it renders."""
  assert {role: env.get("CUDA_VISIBLE_DEVICES") for role, env in interrupted_run["environments"].items()} == {
      role: "" for role in ROLE_CLASSES}
  for role in ("replay", "learner", "evaluator", "actor-0", "actor-1"):
    lines = (interrupted_run["out"] / "logs" / f"{role}.log").read_text().splitlines()
    report = json.loads(next(line for line in lines if line.startswith("devices: ")).split(" ", 1)[1])
    assert report["role"] == role and report["cuda_visible_devices_at_start"] == ""
    assert report["tensorflow_gpus"] == [] and report["rendering"].startswith(("egl", "osmesa"))
  log = interrupted_run["log"]
  assert "devices: the learner on CPUs (no GPU); every other role sees no GPU" in log
  assert "[evaluator] rendering: " in log and "[actor-0] rendering: " in log


def test_a_killed_evaluator_is_restarted_and_evaluates_again(interrupted_run):
  evaluations = metrics.read_log(interrupted_run["out"], "eval")
  assert len(evaluations) >= 3 and evaluations[1]["frames"] > 0  # 0 frames, after the restart, final


def test_a_killed_actor_is_restarted_and_the_run_goes_on(interrupted_run):
  summary = json.loads((interrupted_run["out"] / "summary.json").read_text())
  assert sorted(summary["actor_starts"].values()) == [1, 2]
  assert not psutil.pid_exists(interrupted_run["killed"]) or \
      psutil.Process(interrupted_run["killed"]).status() == psutil.STATUS_ZOMBIE


def test_no_process_is_left_behind(interrupted_run):
  survivors = []
  for process in interrupted_run["processes"]:
    try:
      if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
        survivors.append(f"{process.pid} {process.name()}")
    except psutil.NoSuchProcess:
      continue
  assert not survivors, f"still running after the driver exited: {survivors}"


def test_a_killed_learner_stops_the_run_and_a_resume_goes_on_until_sigterm(tmp_path, wait_for):
  out = tmp_path / "run"
  args = [arg if arg != "1000000" else "1500" for arg in TINY_LOCAL]
  process = _start_train(*args, "--actors", "1", "--checkpoint-every-s", "3", "--out", str(out))
  try:
    store = CheckpointStore(out / "checkpoints")
    wait_for(lambda: (store.latest() or {}).get("learner_steps", 0) > 0, "a checkpoint", process)
    _processes_named(psutil.Process(process.pid), "LearnerProcess")[0].kill()
    output, _ = process.communicate(timeout=180)
  finally:
    if process.poll() is None:
      os.killpg(process.pid, signal.SIGKILL)
  assert process.returncode != 0
  assert f"continue with `rlrep train --resume {out}`" in output
  checkpointed = store.latest()
  assert not (out / "summary.json").exists()

  # The resumed run is stopped as `kill`, a batch scheduler or Kubernetes would: SIGTERM to the driver alone.
  # Only the resumed run's rows count: the killed run may have logged steps past its last checkpoint, and a
  # SIGTERM sent on those could reach the new driver before it handles the signal.
  rows_before_resume = len(metrics.read_log(out, "train"))
  resumed = _start_train("--resume", str(out), "--frames", "1000000")
  try:
    wait_for(lambda: any(r["learner_steps"] >= checkpointed["learner_steps"] + 10
                          for r in metrics.read_log(out, "train")[rows_before_resume:]),
              "the resumed learner to step", resumed)
    started = psutil.Process(resumed.pid).children(recursive=True)
    resumed.send_signal(signal.SIGTERM)
    output, _ = resumed.communicate(timeout=240)
  finally:
    if resumed.poll() is None:
      os.killpg(resumed.pid, signal.SIGKILL)
  assert resumed.returncode == 0, output[-3000:]
  summary = json.loads((out / "summary.json").read_text())
  assert summary["stop_reason"] == "interrupted (SIGTERM)" and summary["mode"] == "local"
  assert summary["resumed_at_frames"] >= checkpointed["frames"]
  assert store.latest()["learner_steps"] == summary["learner_steps"] > checkpointed["learner_steps"]
  _, alive = psutil.wait_procs(started, timeout=30)
  assert not alive, f"still running after the driver exited: {alive}"


def test_the_terminal_shows_driver_lines_without_ray_prefixes(interrupted_run):
  log = interrupted_run["log"]
  progress = [line for line in log.splitlines() if line.startswith("frames ")]
  assert len(progress) >= 3 and any(line.startswith("evaluation at 0 frames") for line in log.splitlines())
  assert "pid=" not in log and "\x1b[" not in log, log[-3000:]  # only Ray's notices of the killed actor remain
  assert len(progress) == len(set(progress))  # each interval once
  role_logs = interrupted_run["out"] / "logs"
  assert "Started replay server" in (role_logs / "replay.log").read_text()  # Reverb's C++ log, kept aside
  assert (role_logs / "learner.log").exists() and (role_logs / "actor-0.log").exists()


def _run_until_killed(tmp_path, role_class: str, then_wait_for, wait_for):
  """Starts a tiny local run, SIGKILLs the process of `role_class` once the learner has stepped, and returns
  (process, driver output) once `then_wait_for(out)` holds or the run has ended."""
  out = tmp_path / "run"
  process = _start_train(*TINY_LOCAL, "--actors", "1", "--out", str(out))
  driver = psutil.Process(process.pid)
  try:
    wait_for(lambda: any(r["learner_steps"] >= 10 for r in metrics.read_log(out, "train")), "learner steps", process)
    started = driver.children(recursive=True)
    wait_for(lambda: _processes_named(driver, role_class), f"the {role_class} process", process)[0].kill()
    deadline = time.monotonic() + 240
    while process.poll() is None and not then_wait_for(out) and time.monotonic() < deadline:
      time.sleep(1.0)
    if process.poll() is None:
      os.killpg(process.pid, signal.SIGINT)
    output, _ = process.communicate(timeout=240)
  finally:
    if process.poll() is None:
      os.killpg(process.pid, signal.SIGKILL)
  _, alive = psutil.wait_procs(started, timeout=30)
  return process.returncode, output, out, alive


@pytest.mark.parametrize("role_class, name", [("ReplayProcess", "replay"), ("ray::Counter", "counter")])
def test_a_killed_replay_or_counter_stops_the_run_naming_it_with_the_resume_command(tmp_path, role_class, name,
                                                                                    wait_for):
  code, output, out, alive = _run_until_killed(tmp_path, role_class, lambda out: False, wait_for)
  assert code == 1, output[-3000:]
  assert f"the {name} role died" in output and f"rlrep train --resume {out}" in output, output[-3000:]
  assert "Traceback" not in output.split(f"the {name} role died")[0][-2000:]
  assert not alive


def test_ray_address_attaches_local_mode_only():
  with pytest.raises(ValueError, match="--ray-address attaches local mode's roles to a Ray cluster: use it with --mode "
                                       "local, not --mode inprocess"):
    Experiment(ray_address="10.0.0.2:6379")


def _nodes(*resources: dict) -> list[dict]:
  return [{"NodeManagerAddress": f"10.0.0.{i}", "Resources": node} for i, node in enumerate(resources, start=2)]


def test_a_cluster_that_cannot_host_every_role_is_refused_with_the_ray_start_line_that_fixes_it():
  experiment = Experiment(mode="local", replicas="gpu", actors=2)
  gpu_less = _nodes({"CPU": 1.0, "rlrep_learner_host": 1.0}, {"CPU": 8.0, "rlrep_worker": 1000.0})
  program = {role.name: role for role in fit_to_nodes(experiment, [node["Resources"] for node in gpu_less])}
  with pytest.raises(ValueError, match=r"learner needs \{'CPU': 1.0, 'GPU': 1, 'rlrep_learner_host': 1\}.*"
                                       r"ray start --address HEAD:PORT --num-gpus N"):
    local._check_placeable(program, gpu_less, "10.0.0.2:6379")
  small = _nodes({"CPU": 1.0, "GPU": 2.0, "rlrep_learner_host": 1.0}, {"CPU": 2.0, "rlrep_worker": 1000.0})
  program = {role.name: role for role in fit_to_nodes(experiment, [node["Resources"] for node in small])}
  assert program["learner"].accelerator_count == 2  # --replicas gpu: every GPU of the learner's node
  with pytest.raises(ValueError, match="the roles that need rlrep_worker need 4 CPU in all, their nodes offer 2"):
    local._check_placeable(program, small, "10.0.0.2:6379")
  roomy = _nodes({"CPU": 1.0, "GPU": 2.0, "rlrep_learner_host": 1.0}, {"CPU": 4.0, "rlrep_worker": 1000.0})
  local._check_placeable(program, roomy, "10.0.0.2:6379")


def test_a_learner_on_two_hosts_trains_in_lockstep_and_only_its_chief_writes(tmp_path):
  """--learner-hosts 2 on this machine: two learner processes joined by the TF_CONFIG rlrep builds, each sampling
  its own half of every batch; the chief (host 0) logs, publishes and checkpoints, and the run ends cleanly."""
  out = tmp_path / "two-hosts"
  tiny = TINY_LOCAL[:TINY_LOCAL.index("--frames")]
  tiny[tiny.index("--actors") + 1] = "1"  # two learner processes and an actor share this machine's cores
  result = subprocess.run([sys.executable, "-m", "launch.cli", "train", *tiny, "--learner-hosts", "2",
                           "--replicas", "cpu", "--frames", "1500", "--out", str(out)],
                          capture_output=True, text=True, timeout=600)
  output = result.stdout + result.stderr
  assert result.returncode == 0, output[-4000:]
  assert "learner: 2 hosts of 1 CPU device(s) each (this is host 0)" in output
  summary = json.loads((out / "summary.json").read_text())
  assert summary["stop_reason"] == "frame budget reached" and summary["learner_steps"] > 0
  # every host reported its devices; the chief alone wrote the progress rows and the checkpoint
  for role in ("learner", "learner-1"):
    assert '"role": "' + role + '"' in (out / "logs" / f"{role}.log").read_text()
  rows = metrics.read_log(out, "train")
  assert rows and rows[-1]["learner_steps"] == summary["learner_steps"]
  assert CheckpointStore(out / "checkpoints").latest()["learner_steps"] == summary["learner_steps"]
