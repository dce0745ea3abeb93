"""Writing run outputs: CSV rows that survive a resume and a widening header, and TensorBoard events."""

import pytest

from launch import metrics
from launch.metrics_log import MetricsLog


def test_rows_are_appended_and_a_later_metric_widens_the_header(tmp_path):
  log = MetricsLog(tmp_path, "train")
  log.write({"frames": 0, "frames_per_s": 10.0})
  log.write({"frames": 100, "frames_per_s": 12.0, "critic_loss": 0.5})  # losses appear after the first row
  assert metrics.read_log(tmp_path, "train") == [{"frames": 0, "frames_per_s": 10.0},
                                                 {"frames": 100, "frames_per_s": 12.0, "critic_loss": 0.5}]
  assert list((tmp_path / "tensorboard" / "train").glob("events.out.tfevents.*"))


def test_a_resumed_log_keeps_its_rows_and_columns(tmp_path):
  MetricsLog(tmp_path, "eval").write({"frames": 0, "eval_return": 1.0})
  MetricsLog(tmp_path, "eval").write({"frames": 50, "eval_return": 2.0})  # a new process, same file
  assert [r["eval_return"] for r in metrics.read_log(tmp_path, "eval")] == [1.0, 2.0]


def test_a_row_without_frames_is_refused_and_no_log_reads_as_empty(tmp_path):
  with pytest.raises(ValueError, match="needs 'frames'"):
    MetricsLog(tmp_path, "train").write({"frames_per_s": 1.0})
  assert metrics.read_log(tmp_path / "elsewhere", "train") == []
