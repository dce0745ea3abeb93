"""Tables built from specs and config: the limiter, sampler and signature the server reports."""

import numpy as np
import reverb
import tensorflow as tf
from dm_env import specs

from rlrep import replay


def _layout():
  return replay.StepLayout.from_specs({"pixels": specs.BoundedArray((8, 8, 9), np.uint8, 0, 255)},
                                      specs.BoundedArray((2,), np.float32, -1, 1), frame_stack=3, n_step=4)


def test_replay_table_reports_the_configured_limits():
  config = replay.ReplayConfig(batch_size=16, samples_per_insert=8.0, min_replay_size=50, max_replay_size=500)
  server = reverb.Server([replay.replay_table(_layout(), config)])
  info = reverb.Client(f"localhost:{server.port}").server_info()[replay.REPLAY_TABLE]
  server.stop()
  assert info.max_size == 500
  assert info.rate_limiter_info.samples_per_insert == 8.0
  assert info.rate_limiter_info.min_size_to_sample == 50
  assert info.rate_limiter_info.max_diff - info.rate_limiter_info.min_diff == 2 * config.resolved_error_buffer
  signature = info.signature
  assert signature["observation"]["pixels"] == tf.TensorSpec((3, 8, 8, 3), tf.uint8)
  assert signature["reward"] == tf.TensorSpec((4,), tf.float32)


def test_an_unlimited_table_samples_uniformly_once_it_holds_the_minimum():
  config = replay.ReplayConfig(samples_per_insert=None, min_replay_size=5)
  server = reverb.Server([replay.replay_table(_layout(), config)])
  info = reverb.Client(f"localhost:{server.port}").server_info()[replay.REPLAY_TABLE]
  server.stop()
  assert info.sampler_options.HasField("uniform")
  assert info.rate_limiter_info.min_size_to_sample == 5
  assert info.rate_limiter_info.samples_per_insert == 1.0  # MinSize: no ratio is enforced


def test_weights_table_holds_one_item():
  server = reverb.Server([replay.weights_table({"w": tf.TensorSpec((3,), tf.float32)})])
  info = reverb.Client(f"localhost:{server.port}").server_info()[replay.WEIGHTS_TABLE]
  server.stop()
  assert info.max_size == 1
