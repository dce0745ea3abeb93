"""`rlrep train --ray-address`: local mode attached to a real multi-node Ray cluster started on this machine.

Every node is a `ray start --block` on a loopback address of its own (127.0.0.1 is avoided: Ray rewrites it to the
host's address), in a process session of its own: a test kills a node by killing that session, and every node the
tests started is stopped the same way (never `ray stop`, which ends every Ray process on the host). Ray's token
authentication is on, with a token made for these tests; the driver is given the token but not RAY_AUTH_MODE,
as users are.

The nodes mirror a real cluster: the head (the driver's node, which also advertises `rlrep_replay_host`), an
accelerator node (`rlrep_learner_host`, standing in for a GPU or TPU host) and a CPU node (`rlrep_worker`).

The first tests check what attaching refuses (a wrong token; an --out some node does not share) and run a learner
on two accelerator nodes; the rest follow one run through what a user lives through: roles placed by those
resources, the CPU node dies mid-run and its actor and evaluator come back on a CPU node that joined meanwhile, then
the accelerator node dies and the run stops with the resume command; a new accelerator node joins and the resumed
run reaches its frame budget. They are marked `cluster`: the test command runs them after the default suite.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import psutil
import pytest

from launch import metrics
from launch.checkpoints import CheckpointStore

pytestmark = pytest.mark.cluster  # run after the default suite: `pytest -q -m cluster`

RAY = os.path.join(os.path.dirname(sys.executable), "ray")
# Loopback addresses of the nodes: the head, the accelerator node, CPU nodes and a node without the shared --out.
HEAD, ACCELERATOR, CPU_NODE, LATE_CPU_NODE, UNSHARED_NODE, SECOND_ACCELERATOR = (f"127.0.0.{i}" for i in range(2, 8))
TINY = ["--mode", "local", "--actors", "1", "--no-pixels", "--task", "cartpole-swingup", "--action-repeat", "2",
        "--batch-size", "16", "--hidden-sizes", "32", "--min-replay-size", "100", "--samples-per-insert", "8",
        "--eval-every-frames", "100000", "--log-every-s", "2", "--publish-every-steps", "5",
        "--weights-update-period", "20", "--video-format", "gif", "--video-size", "64", "--checkpoint-every-s", "3"]


class LoopbackCluster:
  """Ray nodes on loopback addresses of this machine, each `ray start --block` in a session of its own."""

  def __init__(self, base, token_path):
    self.base, self.nodes, self.logs = base, {}, {}
    self.temp_dir = tempfile.mkdtemp(prefix="rr", dir="/tmp")  # short: Ray's socket paths live under it
    self.port = _free_port(HEAD)
    self.address = f"{HEAD}:{self.port}"
    # The token every node and the driver use: the cluster's own, in a file of the test's (RAY_AUTH_TOKEN_PATH).
    self.environ = {**{k: v for k, v in os.environ.items() if k not in ("RAY_AUTH_MODE", "RAY_ADDRESS")},
                    "RAY_AUTH_TOKEN_PATH": str(token_path)}

  def start(self, ip: str, cpus: int, resources: dict, wrap: tuple[str, ...] = ()) -> None:
    """Starts a node (`wrap` runs its `ray start`) and waits until it has joined. Nodes start with
    RAY_AUTH_MODE=token, which Ray needs on every node of a cluster with token authentication."""
    head = ["--head", "--port", str(self.port), "--include-dashboard", "false", "--temp-dir", self.temp_dir]
    command = [*wrap, RAY, "start", "--block", "--disable-usage-stats", "--node-ip-address", ip,
               *(head if ip == HEAD else ["--address", self.address]), "--num-cpus", str(cpus),
               "--resources", json.dumps(resources)]
    self.logs[ip] = (self.base / f"node-{ip}.log").open("w")
    self.nodes[ip] = subprocess.Popen(command, stdout=self.logs[ip], stderr=subprocess.STDOUT, start_new_session=True,
                                      env={**self.environ, "RAY_AUTH_MODE": "token"})
    deadline = time.monotonic() + 120
    while "Ray runtime started." not in (self.base / f"node-{ip}.log").read_text():  # it has joined the cluster
      if self.nodes[ip].poll() is not None or time.monotonic() > deadline:
        pytest.fail(f"node {ip} did not start:\n{(self.base / f'node-{ip}.log').read_text()[-3000:]}")
      time.sleep(1.0)

  def kill(self, ip: str) -> None:
    """Kills every process of node `ip` (the node's session), as a machine that dies would end them."""
    _kill_session(self.nodes.pop(ip).pid)
    self.logs.pop(ip).close()

  def stop(self) -> None:
    """Kills every node still running, the head last, and removes Ray's temporary files."""
    for ip in sorted(self.nodes, key=lambda ip: ip == HEAD):
      self.kill(ip)
    shutil.rmtree(self.temp_dir, ignore_errors=True)


def _free_port(ip: str) -> int:
  with socket.socket() as probe:
    probe.bind((ip, 0))
    return probe.getsockname()[1]


def _session(pid: int) -> list[psutil.Process]:
  found = []
  for process in psutil.process_iter():
    try:
      if os.getsid(process.pid) == pid:
        found.append(process)
    except (ProcessLookupError, PermissionError, psutil.Error):
      continue
  return found


def _kill_session(pid: int) -> None:
  members = _session(pid)
  for process in members:
    try:
      process.kill()
    except psutil.NoSuchProcess:
      continue
  _, alive = psutil.wait_procs(members, timeout=30)
  assert not alive, f"still running after SIGKILL: {alive}"


def _train(cluster: LoopbackCluster, *args: str, stdout=subprocess.PIPE) -> subprocess.Popen:
  """`rlrep train ARGS` attached to `cluster`, in a session of its own: the token is here, RAY_AUTH_MODE unset."""
  return subprocess.Popen([sys.executable, "-m", "launch.cli", "train", "--ray-address", cluster.address, *args],
                          stdout=stdout, stderr=subprocess.STDOUT, text=True, start_new_session=True,
                          env=cluster.environ)


def _devices(out, role: str) -> list[dict]:
  """The device reports a role's processes wrote to its log, one per start."""
  path = out / "logs" / f"{role}.log"
  lines = path.read_text().splitlines() if path.exists() else []
  return [json.loads(line.split(" ", 1)[1]) for line in lines if line.startswith("devices: ")]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
  base = tmp_path_factory.mktemp("cluster")
  token = base / "auth_token"
  token.write_text(os.urandom(32).hex())
  nodes = LoopbackCluster(base, token)
  try:
    nodes.start(HEAD, cpus=1, resources={"rlrep_replay_host": 1})
    nodes.start(ACCELERATOR, cpus=1, resources={"rlrep_learner_host": 1})
    nodes.start(CPU_NODE, cpus=2, resources={"rlrep_worker": 1000})
    yield nodes
  finally:
    nodes.stop()


def test_a_driver_without_the_clusters_token_is_refused_with_what_to_do(cluster, tmp_path):
  wrong = tmp_path / "token"
  wrong.write_text("0" * 64)
  result = subprocess.run([sys.executable, "-m", "launch.cli", "train", "--ray-address", cluster.address, *TINY,
                           "--frames", "1000", "--out", str(tmp_path / "run")], capture_output=True, text=True,
                          env={**cluster.environ, "RAY_AUTH_TOKEN_PATH": str(wrong)}, timeout=300)
  assert result.returncode == 1, result.stdout[-3000:] + result.stderr[-3000:]
  assert f"could not attach to the Ray cluster at {cluster.address}" in result.stderr
  assert "Authentication token is missing or incorrect" in result.stderr


def test_an_out_that_a_node_does_not_share_is_refused_before_any_role_starts(cluster, tmp_path):
  if subprocess.run(["unshare", "--mount", "true"], capture_output=True).returncode != 0:
    pytest.skip("making a node that does not see --out takes `unshare --mount` (root or CAP_SYS_ADMIN)")
  private = tmp_path / "not-shared"
  private.mkdir()
  # This node sees its own empty file system at `private`: a machine that does not mount the run's storage.
  cluster.start(UNSHARED_NODE, cpus=1, resources={"rlrep_worker": 1000},
                wrap=("unshare", "--mount", "--propagation", "private", "sh", "-c",
                      f'mount -t tmpfs tmpfs {private} && exec "$0" "$@"'))
  try:
    result = subprocess.run([sys.executable, "-m", "launch.cli", "train", "--ray-address", cluster.address, *TINY,
                             "--frames", "1000", "--out", str(private / "run")], capture_output=True, text=True,
                            env=cluster.environ, timeout=400)
  finally:
    cluster.kill(UNSHARED_NODE)
  assert result.returncode == 2, result.stdout[-3000:] + result.stderr[-3000:]
  assert f"is not a directory every node of the Ray cluster shares (node {UNSHARED_NODE}: FileNotFoundError" in \
      result.stderr
  assert not (private / "run" / "logs").exists()  # no role started


def test_a_learner_on_two_accelerator_nodes_trains_with_one_process_on_each(cluster, tmp_path):
  """--learner-hosts 2: a learner process on each node advertising rlrep_learner_host, joined by the TF_CONFIG rlrep
  builds from where Ray placed them (collectives across nodes), replay reached from both."""
  cluster.start(SECOND_ACCELERATOR, cpus=1, resources={"rlrep_learner_host": 1})
  out = tmp_path / "run"
  try:
    result = subprocess.run([sys.executable, "-m", "launch.cli", "train", "--ray-address", cluster.address, *TINY,
                             "--learner-hosts", "2", "--replicas", "cpu", "--frames", "1500", "--out", str(out)],
                            capture_output=True, text=True, env=cluster.environ, timeout=600)
  finally:
    cluster.kill(SECOND_ACCELERATOR)
  output = result.stdout + result.stderr
  assert result.returncode == 0, output[-4000:]
  assert "learner: 2 hosts of 1 CPU device(s) each (this is host 0)" in output
  assert {role: _nodes(_devices(out, role)) for role in ("learner", "learner-1", "replay")} in (
      {"learner": [ACCELERATOR], "learner-1": [SECOND_ACCELERATOR], "replay": [HEAD]},
      {"learner": [SECOND_ACCELERATOR], "learner-1": [ACCELERATOR], "replay": [HEAD]})
  assert json.loads((out / "summary.json").read_text())["stop_reason"] == "frame budget reached"


@pytest.fixture(scope="module")
def node_failures(cluster, tmp_path_factory, wait_for):
  """The story: a run on the cluster loses its CPU node (a new one has joined), then its accelerator node; a new
  accelerator node joins and the run resumes to its frame budget."""
  out = tmp_path_factory.mktemp("attached") / "run"
  log_path = out.parent / "driver.log"
  with log_path.open("w") as log:
    process = _train(cluster, *TINY, "--frames", "1000000", "--out", str(out), stdout=log)
    try:
      wait_for(lambda: any(r["learner_steps"] >= 10 for r in metrics.read_log(out, "train")), "learner steps",
                process)
      before = {role: _devices(out, role) for role in ("replay", "learner", "evaluator", "actor-0")}
      cluster.start(LATE_CPU_NODE, cpus=2, resources={"rlrep_worker": 1000})
      frames_at_kill = metrics.read_log(out, "train")[-1]["frames"]
      cluster.kill(CPU_NODE)
      wait_for(lambda: any(r.get("actor_restarts", 0) >= 1 and r["frames"] >= frames_at_kill + 300
                            for r in metrics.read_log(out, "train")),
                "the lost actor to restart on the new node and the run to go on", process, timeout_s=240)
      checkpoint = CheckpointStore(out / "checkpoints")
      steps_then = metrics.read_log(out, "train")[-1]["learner_steps"]
      wait_for(lambda: (checkpoint.latest() or {}).get("learner_steps", 0) > steps_then, "a newer checkpoint",
                process)
      cluster.kill(ACCELERATOR)
      process.wait(timeout=240)
    except pytest.fail.Exception as failure:
      log.flush()
      pytest.fail(f"{failure}\n--- the run's output, last 4000 characters:\n{log_path.read_text()[-4000:]}")
    finally:
      if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
  first = {"returncode": process.returncode, "log": log_path.read_text(), "before": before,
           "after": {role: _devices(out, role) for role in ("evaluator", "actor-0")},
           "checkpoint": CheckpointStore(out / "checkpoints").latest()}

  cluster.start(ACCELERATOR, cpus=1, resources={"rlrep_learner_host": 1})
  resumed = _train(cluster, "--resume", str(out), "--frames", str(first["checkpoint"]["frames"] + 1500))
  try:
    output, _ = resumed.communicate(timeout=400)
  finally:
    if resumed.poll() is None:
      os.killpg(resumed.pid, signal.SIGKILL)
  return {"out": out, "first": first, "resumed": {"returncode": resumed.returncode, "log": output}}


def _nodes(reports: list[dict]) -> list[str]:
  return [report["node"] for report in reports]


def test_roles_run_where_the_nodes_resources_say(node_failures):
  before = node_failures["first"]["before"]
  assert _nodes(before["learner"]) == [ACCELERATOR]
  assert _nodes(before["replay"]) == [HEAD]
  assert _nodes(before["evaluator"]) == _nodes(before["actor-0"]) == [CPU_NODE]
  log = node_failures["first"]["log"]
  assert f"replay server at {HEAD}:" in log  # the node's address, which the other nodes reach


def test_no_role_sees_a_gpu_and_each_says_so_in_its_log(node_failures):
  for reports in node_failures["first"]["before"].values():
    assert reports[0]["cuda_visible_devices_at_start"] == "" and reports[0]["tensorflow_gpus"] == []


def test_the_actor_and_evaluator_of_a_dead_node_restart_on_a_live_one(node_failures):
  after = node_failures["first"]["after"]
  assert _nodes(after["actor-0"]) == _nodes(after["evaluator"]) == [CPU_NODE, LATE_CPU_NODE]
  log = node_failures["first"]["log"]
  assert f"[actor-0] restarted by Ray on node {LATE_CPU_NODE}" in log, log[-3000:]


def test_a_dead_learner_node_stops_the_run_with_the_resume_command(node_failures):
  first = node_failures["first"]
  out = node_failures["out"]
  assert first["returncode"] == 1, first["log"][-3000:]
  assert "rlrep train: run failed: the learner died (" in first["log"], first["log"][-3000:]
  assert f"continue with `rlrep train --resume {out}`" in first["log"]


def test_the_resumed_run_reaches_its_budget_on_the_new_accelerator_node(node_failures):
  resumed = node_failures["resumed"]
  assert resumed["returncode"] == 0, resumed["log"][-3000:]
  out = node_failures["out"]
  summary = json.loads((out / "summary.json").read_text())
  assert summary["stop_reason"] == "frame budget reached"
  assert summary["resumed_at_frames"] >= node_failures["first"]["checkpoint"]["frames"]
  assert _nodes(_devices(out, "learner")) == [ACCELERATOR, ACCELERATOR]
