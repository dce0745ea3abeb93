"""Run outputs read: the progress line, the learning curve, and rows of a log that is being written (writing them:
test_metrics_log.py)."""

import imageio.v2 as imageio
import numpy as np

from launch import metrics
from launch.metrics_log import MetricsLog


def test_the_progress_line_shows_throughput_returns_and_waiting_and_marks_missing_values():
  line = metrics.progress_line({"frames": 12345, "frames_per_s": 40.0, "learner_steps": 7, "learner_steps_per_s": 2.5,
                                "episode_return": float("nan"), "replay_size": 1900, "weights_staleness": 3,
                                "replay_inserts_per_s": 20.2, "replay_samples_per_s": 1280.0,
                                "actor_wait_share": 0.25, "learner_wait_share": 0.01, "actor_restarts": 2})
  assert ("frames    12,345 | 40.0 frames/s | learner steps 7 (2.50/s) | return n/a | replay 1,900 (in 20/s, out "
          "1,280/s)") in line
  assert "waiting: actors 25%, learner 1% | actor restarts 2" in line


def test_the_learning_curve_is_a_picture_of_both_logs(tmp_path):
  train, evaluation = MetricsLog(tmp_path, "train"), MetricsLog(tmp_path, "eval")
  for frames in range(0, 1000, 100):
    train.write({"frames": frames, "episode_return": frames / 10})
    evaluation.write({"frames": frames, "eval_return": frames / 5})
  png = tmp_path / "curve.png"
  metrics.plot_learning_curve(tmp_path, png, "d4pg on cartpole-balance")
  image = imageio.imread(png)
  assert image.shape[:2] == (400, 600) and np.asarray(image).std() > 10


def test_reading_a_log_another_process_is_writing_leaves_out_its_unfinished_last_line(tmp_path):
  MetricsLog(tmp_path, "train").write({"frames": 0, "critic_loss": 0.5})
  with (tmp_path / "logs" / "train.csv").open("a") as f:
    f.write("100,0.2")  # a row whose line end is not written yet
  assert metrics.read_complete_rows(tmp_path, "train") == [{"frames": 0, "critic_loss": 0.5}]
  assert metrics.read_complete_rows(tmp_path / "elsewhere", "train") == []
