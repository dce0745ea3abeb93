"""`rlrep train` end to end in-process: every output file, resume with counters intact, and bad input."""

import json
import pathlib
import threading

import imageio.v2 as imageio
import numpy as np
import pytest
import yaml

from environments import recording
from launch import cli, metrics
from launch.cli import commands
from launch.checkpoints import CheckpointStore

TINY_PIXELS = ["--task", "cartpole-swingup", "--mode", "inprocess", "--image-size", "32", "--render-quality", "fast",
               "--action-repeat", "2", "--random-frames", "200",
               "--batch-size", "16", "--hidden-sizes", "32", "--conv-channels", "8", "--feature-dim", "16",
               "--min-replay-size", "100", "--samples-per-insert", "8", "--eval-every-frames", "400",
               "--log-every-s", "1", "--publish-every-steps", "5", "--weights-update-period", "20",
               "--video-format", "gif", "--video-size", "64"]


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
  out = tmp_path_factory.mktemp("run") / "pixels"
  assert cli.main(["train", *TINY_PIXELS, "--envs-per-actor", "2", "--frames", "2000", "--checkpoint-replay",
                   "--out", str(out)]) == 0
  return out


def test_the_run_reaches_its_budget_and_summarises_it(finished_run):
  summary = json.loads((finished_run / "summary.json").read_text())
  assert summary["frames"] >= 2000 and summary["stop_reason"] == "frame budget reached"
  assert summary["learner_steps"] > 0 and summary["episodes"] == summary["frames"] // 1000
  saved = json.loads((finished_run / "experiment.json").read_text())
  assert saved["task"] == "cartpole-swingup" and saved["agent_config"]["image_size"] == 32
  assert saved["envs_per_actor"] == 2


def test_metrics_are_written_as_csv_and_tensorboard(finished_run):
  train_rows = metrics.read_log(finished_run, "train")
  assert len(train_rows) >= 2
  for key in ("frames_per_s", "learner_steps_per_s", "replay_size", "critic_loss", "actor_wait_share"):
    assert key in train_rows[-1]
  # replay's traffic: 16 items sampled per learner step (batch 16), give or take the batches prefetched
  assert any(r["replay_inserts_per_s"] > 0 for r in train_rows)
  sampled, stepped = (sum(r[key] for r in train_rows) for key in ("replay_samples_per_s", "learner_steps_per_s"))
  assert 10 < sampled / stepped < 24, train_rows
  assert [r["frames"] for r in train_rows] == sorted(r["frames"] for r in train_rows)
  eval_rows = metrics.read_log(finished_run, "eval")
  assert eval_rows[0]["frames"] == 0 and eval_rows[-1]["frames"] >= 2000 and len(eval_rows) >= 2
  for name in ("train", "eval"):
    events = list((finished_run / "tensorboard" / name).glob("events.out.tfevents.*"))
    assert events and events[0].stat().st_size > 100


def test_evaluation_videos_and_learning_curve_are_images(finished_run):
  videos = sorted((finished_run / "videos").glob("eval-*.gif"))
  assert len(videos) >= 2
  frames = imageio.mimread(videos[-1])
  assert len(frames) > 50 and frames[0].shape[:2] == (64 + recording.CAPTION_HEIGHT, 64)  # GIF merges repeats
  curve = imageio.imread(finished_run / "learning_curve.png")
  assert curve.shape[0] > 200 and curve.std() > 10


def test_the_video_shows_the_evaluated_episode_at_the_video_size(finished_run):
  """The first frame of the first evaluation is the evaluator's first state, rendered at --video-size."""
  from launch.experiment import load_experiment
  from launch.roles.evaluator import EVALUATOR_SEED_OFFSET
  experiment = load_experiment(finished_run)
  environment = experiment.make_builder().make_environment(experiment.seed + EVALUATOR_SEED_OFFSET, render_size=64)
  environment.reset()
  expected = environment.physics.render(64, 64, camera_id=0).astype(float)
  environment.close()
  first = imageio.mimread(finished_run / "videos" / "eval-0000000000.gif")[0][..., :3].astype(float)
  assert first[:recording.CAPTION_HEIGHT].mean() < first[recording.CAPTION_HEIGHT:].mean()  # the caption band
  assert np.abs(first[recording.CAPTION_HEIGHT:] - expected).mean() < 4  # GIF palettes are slightly lossy


def test_a_checkpoint_records_the_counters(finished_run):
  state = CheckpointStore(finished_run / "checkpoints").latest()
  summary = json.loads((finished_run / "summary.json").read_text())
  assert state["learner_steps"] == summary["learner_steps"]
  assert state["frames"] == summary["frames"]
  assert pathlib.Path(state["prefix"] + ".index").exists()


def test_resume_continues_from_the_checkpoint_with_counters_intact(finished_run, capsys):
  before = json.loads((finished_run / "summary.json").read_text())
  replay_before = metrics.read_log(finished_run, "train")[-1]["replay_size"]
  assert len(list((finished_run / "checkpoints" / "replay").iterdir())) == 1  # --checkpoint-replay: the newest
  assert cli.main(["train", "--resume", str(finished_run), "--frames", "2800"]) == 0
  printed = capsys.readouterr().out
  assert f"resumed at learner step {before['learner_steps']:,d} ({before['frames']:,d} frames) with " in printed
  assert "replay items restored" in printed and "replay checkpoint: " in printed  # its final checkpoint
  after = json.loads((finished_run / "summary.json").read_text())
  assert after["frames"] >= 2800
  assert before["resumed_at_frames"] == 0 and after["resumed_at_frames"] == before["frames"]  # speed of this part
  assert after["learner_steps"] > before["learner_steps"]
  rows = metrics.read_log(finished_run, "train")
  assert any(r["frames"] <= before["frames"] for r in rows) and rows[-1]["frames"] >= 2800  # appended
  first_resumed = next(r for r in rows if r["frames"] > before["frames"])
  assert first_resumed["learner_steps"] >= before["learner_steps"]
  assert first_resumed["replay_size"] >= replay_before > 500  # replay restored, not refilled from empty


def _fails(capsys, *args):
  threads = threading.active_count()
  assert cli.main(["train", *args]) == 2
  assert threading.active_count() == threads  # nothing left running
  return capsys.readouterr().err


BAD_INPUT = {  # option family -> (arguments, the message's words)
    "experiment": [
        (["--agent", "dqn"], "unknown agent 'dqn'; registered agents: d4pg"),
        (["--task", "walker-wlak"], "walker-walk"),
        (["--mode", "kubernetes"], "unknown mode 'kubernetes'"),
        (["--actors", "0"], "actors must be >= 1"),
        (["--envs-per-actor", "0"], "envs_per_actor must be >= 1"),
        (["--frames", "0"], "frames must be >= 1"),
        (["--frames", "2.5"], "expected a whole number, got '2.5'"),
        (["--seed", "-1"], "seed must be >= 0"),
        (["--eval-every-frames", "0"], "eval_every_frames and eval_episodes must be >= 1"),
        (["--eval-episodes", "-2"], "eval_every_frames and eval_episodes must be >= 1"),
        (["--video-size", "8"], "video_size must be between 32 and 1024 pixels, got 8"),
        (["--video-size", "big"], "expected a whole number, got 'big'"),
        (["--video-format", "avi"], "video_format must be mp4 or gif"),
        (["--log-every-s", "0"], "log_every_s and checkpoint_every_s must be > 0"),
        (["--log-every-s", "nan"], "expected a finite number, got 'nan'"),
        (["--checkpoint-every-s", "inf"], "expected a finite number, got 'inf'"),
        (["--publish-every-steps", "0"], "publish_every_steps must be >= 1"),
        (["--replay-port", "70000"], "replay_port must be in 0..65535"),
    ],
    "cluster": [
        (["--mode", "cluster", "--namespace", "Team_A"], "namespace 'Team_A' is not a Kubernetes namespace name"),
        (["--mode", "cluster", "--volume-bucket", "gs://runs"], "volume_bucket takes the bucket's name: 'runs'"),
        (["--mode", "cluster", "--volume-bucket", "Runs"], "'Runs' is not a Cloud Storage bucket name"),
        (["--mode", "cluster", "--service-account", "rl_rep"], "service_account 'rl_rep' is not a Kubernetes object"),
        (["--mode", "cluster", "--replicas", "tpu", "--tpu-accelerator", "tpu-v4-podslice", "--tpu-topology",
          "2x2x2"], "spans 2 hosts; rlrep's learner runs on one host"),
        (["--mode", "cluster", "--tpu-accelerator", "tpu-v6e-slice"], "came after libtpu 1.9.0"),
    ],
    "devices": [
        (["--replicas", "gpu:2"], "this machine has 0 GPU(s)"),
        (["--replicas", "tpu"], "this host has no TPU"),
        (["--replicas", "cpu:x"], "device count must be a positive integer"),
        (["--precision", "float16"], "precision must be one of auto, float32, bfloat16"),
    ],
    "environment": [
        (["--image-size", "8"], "image_size must be >= 16"),
        (["--frame-stack", "0"], "frame_stack must be >= 1"),
        (["--action-repeat", "0"], "action_repeat must be >= 1"),
        (["--render-quality", "ultra"], "render_quality='ultra' is unknown"),
        (["--no-pixels", "--frame-stack", "3"], "use frame_stack=1 with pixels=False"),
    ],
    "learning": [
        (["--learning-rate", "nan"], "expected a finite number, got 'nan'"),
        (["--learning-rate", "-1"], "learning_rate must be a finite number > 0"),
        (["--batch-size", "0"], "batch_size must be >= 1"),
        (["--discount", "1.5"], "discount must be in [0, 1]"),
        (["--n-step", "0"], "n_step must be >= 1"),
        (["--max-gradient-norm", "inf"], "expected a finite number, got 'inf'"),
        (["--target-update-tau", "2"], "target_update_tau must be in [0, 1]"),
        (["--num-atoms", "1"], "num_atoms must be >= 2"),
        (["--vmin", "10", "--vmax", "5"], "vmin (10.0) must be below vmax (5.0)"),
        (["--critic-initial-value=-inf"], "expected a finite number, got '-inf'"),
        (["--sigma", "-0.1"], "sigma and sigma_start must be >= 0"),
        (["--random-frames", "-5"], "sigma_decay_frames and random_frames must be >= 0"),
        (["--hidden-sizes", "0"], "hidden_sizes needs at least one positive width"),
        (["--hidden-sizes", "a,b"], "expected comma-separated whole numbers"),
        (["--conv-channels", "0"], "conv_channels and feature_dim must be >= 1"),
    ],
    "replay": [
        (["--batch-size", "16", "--min-replay-size", "50", "--max-replay-size", "10"], "exceeds max_replay_size"),
        (["--samples-per-insert", "-1"], "samples_per_insert must be > 0"),
        (["--weights-update-period", "0"], "weights_update_period must be >= 1"),
        (["--batch-size", "64", "--replay-error-buffer", "10"], "error_buffer (10.0) is smaller than one batch (64)"),
        (["--replay-error-buffer", "nan"], "expected a finite number, got 'nan'"),
        (["--frames", "100000000", "--max-replay-size", "100000000"], "lower --max-replay-size to at most"),
    ],
}


@pytest.mark.parametrize("args, message", [case for cases in BAD_INPUT.values() for case in cases],
                         ids=[f"{family}:{' '.join(args)}" for family, cases in BAD_INPUT.items() for args, _ in cases])
def test_bad_input_is_refused_before_anything_starts(tmp_path, capsys, args, message):
  out = tmp_path / "never"
  assert message in _fails(capsys, "--out", str(out), *args)
  assert not out.exists()


def test_an_output_path_that_is_a_file_or_cannot_be_created_is_refused(tmp_path, capsys):
  a_file = tmp_path / "a-file"
  a_file.write_text("not a run")
  assert "is a file, not a directory" in _fails(capsys, *TINY_PIXELS, "--frames", "10", "--out", str(a_file))
  assert a_file.read_text() == "not a run"
  assert "cannot be written" in _fails(capsys, *TINY_PIXELS, "--frames", "10", "--out", "/proc/rlrep-run")


def test_a_misspelt_gl_backend_is_a_message_not_a_traceback():
  import os
  import subprocess
  import sys
  result = subprocess.run([sys.executable, "-m", "launch.cli", "train", "--frames", "10"], capture_output=True,
                          text=True, env={**os.environ, "MUJOCO_GL": "eggl"}, timeout=120)
  assert result.returncode == 2 and "MUJOCO_GL='eggl' is not a MuJoCo rendering backend" in result.stderr
  assert "Traceback" not in result.stderr


def test_an_output_directory_with_another_experiment_is_refused(finished_run, capsys):
  error = _fails(capsys, *TINY_PIXELS, "--frames", "10", "--out", str(finished_run))
  assert "already holds files" in error and "--resume" in error and "--overwrite" in error


def test_resume_of_a_directory_without_an_experiment_is_refused(tmp_path, capsys):
  assert "nothing to resume" in _fails(capsys, "--resume", str(tmp_path))


def test_resume_refuses_agent_settings(finished_run, capsys):
  assert "only budget, scale and logging options" in _fails(capsys, "--resume", str(finished_run), "--sigma", "0.5")


def test_the_first_lines_list_each_effective_setting_by_source_and_a_flag_beats_its_preset(tmp_path, capsys):
  out = tmp_path / "dry"
  assert cli.main(["train", "--task", "cartpole-swingup", "--action-repeat", "4", "--mode", "cluster", "--dry-run",
                   "--out", str(out)]) == 0
  lines = capsys.readouterr().out.splitlines()
  assert lines[0].startswith("rlrep train: d4pg on cartpole-swingup, cluster mode")
  by_source = {line.split(":", 1)[0].strip(): line.split(":", 1)[1].split() for line in lines[1:4]}
  assert "action_repeat=4" in by_source["flag"] and "mode=cluster" in by_source["flag"]
  assert "vmax=400.0" in by_source["preset"] and "samples_per_insert=128.0" in by_source["preset"]
  assert "n_step=3" in by_source["default"] and "precision=auto" in by_source["default"]
  assert any(line.startswith("  precision: auto, decided on the learner's devices when it starts") for line in lines)
  configmap = yaml.safe_load((out / "manifests" / "00-configmap.yaml").read_text())
  saved = json.loads(configmap["data"]["experiment.json"])["agent_config"]
  assert (saved["action_repeat"], saved["vmax"], saved["batch_size"]) == (4, 400.0, 256)


def test_a_learner_whose_losses_stop_being_numbers_stops_the_run_naming_the_step(tmp_path, capsys):
  out = tmp_path / "diverged"
  code = cli.main(["train", *TINY_PIXELS, "--frames", "100000", "--out", str(out), "--learning-rate", "1e38",
                   "--max-gradient-norm", "0"])
  error = capsys.readouterr().err
  assert code == 1 and "run failed: learner step" in error and "training stopped rather than train on" in error
  assert "nan" in error or "inf" in error
  state = out / "checkpoints" / "state.json"
  assert not state.exists() or str(out) in error  # a checkpoint, if any, is named, and none holds NaN weights


def test_help_documents_every_agent_setting():
  help_text = " ".join(commands.build_parser()._subparsers._group_actions[0].choices["train"].format_help().split())
  for option in ("--frames", "--replicas", "--resume", "--overwrite", "--samples-per-insert", "--no-pixels",
                 "--target-update-tau", "--hidden-sizes", "(default: 256)"):
    assert option in help_text


@pytest.mark.parametrize("signal_name, reason", [("SIGINT", "Ctrl-C"), ("SIGTERM", "SIGTERM")])
def test_ctrl_c_or_sigterm_ends_an_inprocess_run_promptly_with_a_checkpoint(tmp_path, signal_name, reason):
  import os
  import signal
  import subprocess
  import sys
  import time
  out = tmp_path / "interrupted"
  process = subprocess.Popen([sys.executable, "-m", "launch.cli", "train", *TINY_PIXELS, "--frames", "1000000",
                              "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
  try:
    deadline = time.monotonic() + 300
    while not any(r["learner_steps"] > 5 for r in metrics.read_log(out, "train")):
      assert process.poll() is None and time.monotonic() < deadline, "the run never got going"
      time.sleep(1)
    process.send_signal(getattr(signal, signal_name))
    interrupted = time.monotonic()
    output, _ = process.communicate(timeout=120)
    stopping_s = time.monotonic() - interrupted
  finally:
    if process.poll() is None:
      os.kill(process.pid, signal.SIGKILL)
  assert process.returncode == 0, output[-3000:]
  summary = json.loads((out / "summary.json").read_text())
  assert summary["stop_reason"] == f"interrupted ({reason})" and "Ctrl-C again to abort" in output
  assert CheckpointStore(out / "checkpoints").latest()["learner_steps"] == summary["learner_steps"]
  assert stopping_s < 60, f"stopping took {stopping_s:.0f}s: a role waited out a timeout instead of stopping"

