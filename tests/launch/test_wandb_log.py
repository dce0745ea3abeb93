"""`--wandb PROJECT`: both logs of a run in one W&B run, against frames, with the experiment as its config; a
resume continues it without sending a row twice. W&B runs offline here, read back with wandb's own reader."""

import dataclasses
import json
import os
import subprocess
import sys
import time

import imageio.v2 as imageio
import numpy as np
import pytest

from launch import metrics, wandb_log
from launch.metrics_log import MetricsLog
from launch.experiment import Experiment, RunFailed, prepare_output_dir


@pytest.fixture
def offline(monkeypatch, tmp_path):
  monkeypatch.setenv("WANDB_MODE", "offline")
  monkeypatch.setenv("WANDB_DIR", str(tmp_path))
  monkeypatch.setenv("WANDB_SILENT", "true")


def _experiment(tmp_path, **settings) -> Experiment:
  return Experiment(**{"task": "cartpole-swingup", "seed": 3, "out": str(tmp_path / "run"), "wandb": "rlrep-tests",
                       "log_every_s": 3600, **settings})


def _run_id(out) -> str:
  return json.loads((out / "logs" / wandb_log.STATE_FILE).read_text())["run_id"]


def _offline_runs(wandb_dir, run_id) -> list:
  return sorted((wandb_dir / "wandb").glob(f"offline-run-*-{run_id}"))


def _records(run_dir) -> dict:
  """History rows (nested keys joined by "/", W&B's own _-keys left out), config, name and whether the run
  finished, from its .wandb file."""
  from wandb.proto import wandb_internal_pb2
  from wandb.sdk.internal import datastore
  [path] = run_dir.glob("run-*.wandb")
  store = datastore.DataStore()
  store.open_for_scan(str(path))
  found = {"history": [], "config": {}, "name": None, "finished": False}
  while (data := store.scan_data()) is not None:
    record = wandb_internal_pb2.Record()
    record.ParseFromString(data)
    kind = record.WhichOneof("record_type")
    if kind == "history":
      items = {item.key or "/".join(item.nested_key): json.loads(item.value_json) for item in record.history.item}
      found["history"].append({key: value for key, value in items.items() if not key.startswith("_")})
    elif kind == "run":
      found["name"] = record.run.display_name
      found["config"].update(_config(record.run.config))
    elif kind == "config":
      found["config"].update(_config(record.config))
    elif kind == "exit":
      found["finished"] = True
  return found


def _config(record) -> dict:
  return {item.key: json.loads(item.value_json) for item in record.update if item.key != "_wandb"}


def test_train_and_eval_rows_reach_one_wandb_run_against_frames_with_the_experiment_as_config(tmp_path, offline):
  experiment = _experiment(tmp_path)
  prepare_output_dir(experiment, resume=False, overwrite=False)
  out = experiment.out_dir
  train, evaluation = MetricsLog(out, "train"), MetricsLog(out, "eval")
  train.write({"frames": 100, "critic_loss": 0.5})
  evaluation.write({"frames": 0, "eval_return": 1.0})  # below the train row's frames: still kept
  train.write({"frames": 200, "critic_loss": 0.25, "replay_size": float("nan")})
  (out / "videos").mkdir()
  imageio.mimsave(out / "videos" / "eval-0000000300.gif", [np.full((32, 32, 3), grey, np.uint8) for grey in (0, 255)])
  evaluation.write({"frames": 300, "eval_return": 7.5})
  train.write({"frames": 400, "critic_loss": 0.125})  # after the last evaluation: sent when the log closes
  evaluation.close()

  [run_dir] = _offline_runs(tmp_path, _run_id(out))
  found = _records(run_dir)
  evaluated = found["history"][3]
  video = {key.split("/")[-1]: evaluated.pop(key) for key in list(evaluated) if key.startswith("eval/video/")}
  assert found["history"] == [{"frames": 100, "train/critic_loss": 0.5}, {"frames": 0, "eval/eval_return": 1.0},
                              {"frames": 200, "train/critic_loss": 0.25}, {"frames": 300, "eval/eval_return": 7.5},
                              {"frames": 400, "train/critic_loss": 0.125}]
  assert video["_type"] == "video-file" and video["caption"] == "300 frames"
  assert (run_dir / "files" / video["path"]).stat().st_size == video["size"]
  assert found["config"] == json.loads(json.dumps(experiment.to_json()))
  assert found["name"] == "cartpole-swingup__run__3" and found["finished"]


def test_rows_another_process_writes_are_sent_every_log_interval(tmp_path, offline):
  experiment = _experiment(tmp_path, log_every_s=0.1)
  prepare_output_dir(experiment, resume=False, overwrite=False)
  evaluation = MetricsLog(experiment.out_dir, "eval")
  MetricsLog(experiment.out_dir, "train").write({"frames": 100, "critic_loss": 0.5})  # as the learner would
  state = experiment.out_dir / "logs" / wandb_log.STATE_FILE
  deadline = time.monotonic() + 30
  while json.loads(state.read_text())["rows_sent"]["train"] < 1:
    assert time.monotonic() < deadline, "the train row was never sent"
    time.sleep(0.1)
  evaluation.close()


def test_a_resume_continues_the_wandb_run_and_a_run_given_wandb_late_sends_its_earlier_rows(tmp_path, offline):
  without = _experiment(tmp_path, wandb=None)
  prepare_output_dir(without, resume=False, overwrite=False)
  out = without.out_dir
  MetricsLog(out, "train").write({"frames": 100, "critic_loss": 0.5})
  MetricsLog(out, "eval").write({"frames": 0, "eval_return": 1.0})
  assert not (out / "logs" / wandb_log.STATE_FILE).exists()

  sessions = []
  for frames in (500, 900):  # two resumes with --wandb
    prepare_output_dir(dataclasses.replace(without, wandb="rlrep-tests", frames=frames), resume=True, overwrite=False)
    evaluation = MetricsLog(out, "eval")
    evaluation.write({"frames": frames, "eval_return": frames / 100})
    evaluation.close()
    sessions.append(_run_id(out))
    time.sleep(1)  # W&B names an offline session's directory by the second it started
  assert sessions[0] == sessions[1]
  first, second = (_records(run_dir) for run_dir in _offline_runs(tmp_path, sessions[0]))
  assert first["history"] == [{"frames": 100, "train/critic_loss": 0.5}, {"frames": 0, "eval/eval_return": 1.0},
                              {"frames": 500, "eval/eval_return": 5.0}]
  assert second["history"] == [{"frames": 900, "eval/eval_return": 9.0}] and second["config"]["frames"] == 900
  assert first["finished"] and second["finished"]


def test_a_missing_wandb_package_says_how_to_install_it_and_only_the_evaluators_log_needs_it(tmp_path, monkeypatch):
  experiment = _experiment(tmp_path)
  prepare_output_dir(experiment, resume=False, overwrite=False)
  monkeypatch.setitem(sys.modules, "wandb", None)  # `import wandb` fails as if it were not installed
  MetricsLog(experiment.out_dir, "train").write({"frames": 0, "critic_loss": 1.0})
  with pytest.raises(RunFailed, match=r"wandb package is not installed.*pip install 'rlrep\[wandb\]'"):
    MetricsLog(experiment.out_dir, "eval")
  MetricsLog(tmp_path / "no-experiment", "eval").write({"frames": 0, "eval_return": 1.0})


def test_a_wandb_run_that_cannot_start_says_how_to_log_in_or_log_offline(tmp_path, monkeypatch):
  import wandb

  def refuse(**_):
    raise wandb.errors.UsageError("api_key not configured (no-tty)")

  monkeypatch.setattr(wandb, "init", refuse)
  experiment = _experiment(tmp_path)
  prepare_output_dir(experiment, resume=False, overwrite=False)
  with pytest.raises(RunFailed, match="api_key not configured.*wandb login.*WANDB_MODE=offline.*wandb sync"):
    MetricsLog(experiment.out_dir, "eval")


@pytest.mark.timeout(300)
def test_a_tiny_inprocess_run_with_wandb_logs_both_logs_and_finishes_at_exit(tmp_path):
  """The real command in its own process, so the W&B run is finished by that process's exit; W&B's files go to
  <out>/wandb."""
  out = tmp_path / "tiny"
  env = {key: value for key, value in os.environ.items() if not key.startswith("WANDB_")}
  result = subprocess.run(
      [sys.executable, "-m", "launch.cli", "train", "--no-pixels", "--task", "cartpole-balance", "--mode",
       "inprocess", "--frames", "1000", "--batch-size", "16", "--hidden-sizes", "32", "--min-replay-size", "100",
       "--eval-every-frames", "1000", "--log-every-s", "1", "--video-format", "gif", "--video-size", "32",
       "--wandb", "rlrep-tests", "--out", str(out)],
      capture_output=True, text=True, env={**env, "WANDB_MODE": "offline"}, timeout=280)
  assert result.returncode == 0, result.stderr[-3000:]
  [run_dir] = _offline_runs(out, _run_id(out))
  found = _records(run_dir)
  sent = [row for row in found["history"] if any(key.startswith("train/") for key in row)]
  evaluations = [row for row in found["history"] if "eval/eval_return" in row]
  assert [row["frames"] for row in sent] == [row["frames"] for row in metrics.read_log(out, "train")]
  assert [row["eval/eval_return"] for row in evaluations] == [r["eval_return"] for r in metrics.read_log(out, "eval")]
  assert all(row["eval/video/_type"] == "video-file" for row in evaluations) and found["finished"]
  assert found["config"]["wandb"] == "rlrep-tests" and found["config"]["agent_config"]["pixels"] is False
