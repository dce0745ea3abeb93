"""Third-party chatter goes to the log, not the terminal: the filter itself, and a real in-process run."""

import os
import subprocess
import sys
import warnings

from launch.modes import quiet
from launch.modes.train import THIRD_PARTY_LOG

CHATTER = [b"[reverb/cc/client.cc:165] Sampler and server are owned by the same process (7) so Table replay is "
           b"accessed directly without gRPC.\n",
           b"WARNING:absl:compiler attribute 'settotalmass' is deprecated and will be removed in a future release\n",
           b"I1207 10:00:00.123456  4242 chttp2_transport.cc:1234] keepalive\n",
           b"2026-12-07 10:00:00.123456: I tensorflow/core/util/port.cc:113] oneDNN custom operations are on.\n"]
KEPT = [b"WARNING:root:dm_control was imported before rlrep chose a GL backend\n",
        b"Traceback (most recent call last):\n", b"ValueError: something the user must see\n"]


def _write_everything(log, verbose):
  with quiet.third_party_output_to(log, verbose=verbose):
    for line in CHATTER + KEPT:
      os.write(2, line)
    # as Python prints a warning to sys.stderr, which is descriptor 2 outside pytest's capture
    os.write(2, warnings.formatwarning("old API", DeprecationWarning, "lib.py", 3, "  old_call()").encode())
    os.write(2, warnings.formatwarning("look here", UserWarning, "lib.py", 4, "  other_call()").encode())
    subprocess.run(["sh", "-c", "echo '[reverb/cc/server.cc:71] Started replay server on port 1' >&2; "
                                "echo 'child error' >&2"], check=True)


def test_chatter_reaches_the_log_only_and_everything_else_the_terminal_too(tmp_path, capfd):
  log = tmp_path / "logs" / "third_party.log"
  _write_everything(log, verbose=False)
  terminal, logged = capfd.readouterr().err, log.read_text()
  for line in CHATTER:
    assert line.decode() in logged and line.decode() not in terminal
  for line in KEPT:
    assert line.decode() in logged and line.decode() in terminal
  assert "DeprecationWarning: old API\n  old_call()" in logged and "old_call" not in terminal
  assert "UserWarning: look here\n  other_call()" in terminal
  assert "Started replay server" in logged and "Started replay server" not in terminal  # from a child process
  assert "child error" in terminal
  os.write(2, b"after the block\n")  # the terminal is stderr again
  assert capfd.readouterr().err == "after the block\n" and "after the block" not in log.read_text()


def test_verbose_shows_everything_and_still_logs_it(tmp_path, capfd):
  log = tmp_path / "third_party.log"
  _write_everything(log, verbose=True)
  terminal = capfd.readouterr().err
  for line in CHATTER + KEPT:
    assert line.decode() in terminal
  assert "DeprecationWarning: old API" in terminal and "Started replay server" in log.read_text()


RUN = ["--task", "cheetah-run", "--image-size", "32", "--render-quality", "fast", "--random-frames", "200",
       "--batch-size", "16", "--hidden-sizes", "32", "--conv-channels", "8", "--feature-dim", "16",
       "--min-replay-size", "100", "--samples-per-insert", "8", "--eval-every-frames", "800", "--log-every-s", "1",
       "--video-format", "gif", "--video-size", "64", "--checkpoint-replay"]
NOISE = ("[reverb/cc/", "Sampler and server are owned", "Initializing TFRecordCheckpointer", "settotalmass")


def _train(*arguments):
  return subprocess.run([sys.executable, "-m", "launch.cli", "train", *arguments], capture_output=True, text=True,
                        timeout=600)


def test_an_inprocess_run_shows_rlrep_lines_only_and_verbose_shows_the_rest(tmp_path):
  """cheetah's model uses MuJoCo's deprecated settotalmass (a warning through absl), the in-process Reverb server
  logs its start and its direct table access, and --checkpoint-replay its checkpointer."""
  out = tmp_path / "run"
  quiet_run = _train(*RUN, "--frames", "800", "--out", str(out))
  terminal = quiet_run.stdout + quiet_run.stderr
  assert quiet_run.returncode == 0, terminal[-3000:]
  assert "evaluation at 0 frames" in terminal and "\ndone: " in terminal
  assert [noise for noise in NOISE if noise in terminal] == []
  logged = (out / "logs" / THIRD_PARTY_LOG).read_text()
  assert [noise for noise in NOISE if noise not in logged] == []
  verbose_run = _train("--resume", str(out), "--frames", "1600", "--verbose")
  terminal = verbose_run.stdout + verbose_run.stderr
  assert verbose_run.returncode == 0, terminal[-3000:]
  assert "Sampler and server are owned" in terminal and "[reverb/cc/" in terminal
  assert (out / "logs" / THIRD_PARTY_LOG).read_text().count("Started replay server") == 2  # appended on resume
