"""Server-down behaviour is bounded and explained; the watchdog says what a blocked call waits for."""

import logging
import socket
import time

import dm_env
import numpy as np
import pytest
import reverb
from dm_env import specs

from rlrep import replay


def _unused_port():
  with socket.socket() as s:
    s.bind(("localhost", 0))
    return s.getsockname()[1]


def test_connect_to_nothing_fails_within_the_timeout_with_advice():
  start = time.monotonic()
  with pytest.raises(replay.ServerUnavailableError, match=r"did not answer for 2s.*Is the replay process running"):
    replay.connect(f"localhost:{_unused_port()}", timeout_s=2)
  assert time.monotonic() - start < 10


def test_connect_returns_a_working_client():
  server = reverb.Server([reverb.Table.queue("q", 10)])
  client = replay.connect(f"localhost:{server.port}", timeout_s=5)
  assert "q" in client.server_info()
  server.stop()


def _layout():
  return replay.StepLayout.from_specs({"features": specs.Array((2,), np.float32)}, specs.Array((1,), np.float32),
                                      frame_stack=1, n_step=1)


def test_a_blocked_insert_is_reported_by_the_watchdog_with_the_rate_limiter_state(caplog):
  """A rate limiter nobody samples from blocks inserts: the watchdog logs the table state while it waits."""
  layout = _layout()
  limited = replay.ReplayConfig(batch_size=1, samples_per_insert=1.0, error_buffer=1.0, min_replay_size=1,
                                max_replay_size=100)
  server = reverb.Server([replay.replay_table(layout, limited)])
  client = reverb.Client(f"localhost:{server.port}")
  watchdog = replay.Watchdog(client, threshold_s=0.5)
  started = time.monotonic()
  adder = replay.NStepFrameAdder(client, layout, chunk_length=1, watchdog=watchdog,
                                 should_stop=lambda: time.monotonic() - started > 3.0)
  observation = {"features": np.zeros(2, np.float32)}

  adder.observe_first(dm_env.restart(observation))
  with caplog.at_level(logging.WARNING, logger="rlrep.replay"):
    with pytest.raises(replay.WritingStopped):
      for _ in range(10):
        adder.observe(np.zeros(1, np.float32), dm_env.transition(1.0, observation))
  watchdog.close()
  server.stop()
  assert watchdog.reports >= 1
  assert "replay insert has been blocked" in caplog.text
  assert "table replay:" in caplog.text and "samples_per_insert=1" in caplog.text


def test_describe_tables_on_a_dead_server_says_so():
  client = reverb.Client(f"localhost:{_unused_port()}")
  assert "did not answer" in replay.describe_tables(client, timeout_s=1)
