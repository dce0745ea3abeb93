"""Fixtures shared by the launch tests."""

import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest


@pytest.fixture(scope="session", autouse=True)
def ctrl_c_raises():
  """Python's own Ctrl-C handler for the launch tests, whatever pytest inherited. A suite started as a
  background job (`cmd &` in a script, `nohup`) starts with Ctrl-C ignored; `launch.modes.interrupts` rightly
  leaves an ignored signal ignored, and every `rlrep train` a test starts would inherit it, so the tests
  that stop a run with Ctrl-C, in this process or in a child, would wait for a stop that never comes. A
  handler (unlike "ignored") is reset to the default when a child process starts."""
  previous = signal.signal(signal.SIGINT, signal.default_int_handler)
  yield
  signal.signal(signal.SIGINT, previous)


def _wait_for(condition, what: str, process: subprocess.Popen, timeout_s: float = 300.0):
  """The first true value of `condition()`, polled each second; fails the test when `process` (a run) ends or
  `timeout_s` passes first."""
  deadline = time.monotonic() + timeout_s
  while time.monotonic() < deadline:
    if process.poll() is not None:
      pytest.fail(f"the run ended (exit {process.returncode}) while waiting for {what}")
    value = condition()
    if value:
      return value
    time.sleep(1.0)
  pytest.fail(f"timed out waiting for {what}")


@pytest.fixture(scope="session")
def wait_for():
  """Waits on a running `rlrep train` for a condition (`_wait_for`)."""
  return _wait_for


FAKE_KUBECTL = f"""#!{sys.executable} -S
import json, os, pathlib, sys
state = pathlib.Path(os.environ["FAKE_KUBECTL_STATE"])
args = sys.argv[1:]
call = {{"argv": args}}
if args[:3] == ["apply", "-f", "-"]:
  call["stdin"] = sys.stdin.read()
rules = json.loads((state / "scenario.json").read_text())
matched = [index for index, (text, _) in enumerate(rules) if " ".join(args).startswith(text)]
call["expected"] = bool(matched)
with open(state / "calls.jsonl", "a") as calls:
  calls.write(json.dumps(call) + "\\n")
if not matched:
  sys.stderr.write("fake kubectl: unexpected call: kubectl " + " ".join(args) + "\\n")
  sys.exit(97)
counter = state / f"rule-{{matched[0]}}"
used = int(counter.read_text()) if counter.exists() else 0
counter.write_text(str(used + 1))
replies = rules[matched[0]][1]
reply = replies[min(used, len(replies) - 1)]
sys.stdout.write(reply.get("out", ""))
sys.stderr.write(reply.get("err", ""))
sys.exit(reply.get("code", 0))
"""


class FakeKubectl:
  """An executable `kubectl`, first on PATH, that records every call (argv, and stdin for `-f -`) and answers
  from a scenario of rules: the first rule whose text starts the call's argv answers with its next reply (the
  last one repeats). A call no rule expects fails (exit 97, "unexpected call" on stderr) and fails the test, even
  where the code under test tolerates a failing kubectl."""

  def __init__(self, state: pathlib.Path):
    self.state = state
    self.scenario()

  def scenario(self, *rules: list) -> None:
    """Sets the rules, `[argv prefix, [reply, ...]]` with replies like {"out": ..., "err": ..., "code": 1}."""
    for counter in self.state.glob("rule-*"):
      counter.unlink()
    (self.state / "scenario.json").write_text(json.dumps(list(rules)))

  def calls(self) -> list[dict]:
    path = self.state / "calls.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

  def argvs(self) -> list[str]:
    return [" ".join(call["argv"]) for call in self.calls()]

  def unexpected(self) -> list[str]:
    return [" ".join(call["argv"]) for call in self.calls() if not call["expected"]]


@pytest.fixture
def fake_kubectl(tmp_path, monkeypatch):
  """Installs a `FakeKubectl` for the test (with no rules: every call is unexpected until a scenario is set)."""
  state = tmp_path / "kubectl-state"
  state.mkdir()
  (tmp_path / "bin").mkdir()
  executable = tmp_path / "bin" / "kubectl"
  executable.write_text(FAKE_KUBECTL)
  executable.chmod(0o755)
  monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
  monkeypatch.setenv("FAKE_KUBECTL_STATE", str(state))
  fake = FakeKubectl(state)
  yield fake
  if fake.unexpected():
    pytest.fail(f"kubectl was called in ways the test did not expect: {fake.unexpected()}")
