"""The actor role waits for the learner's first weights, stops with the run, and says what replay is waiting
for when its insert is blocked. Real roles, a real Reverb server, no learner."""

import logging
import threading
import time

from launch import roles
from launch.roles.counter import Counter
from launch.roles import actor as actor_role
from rlrep import replay


def test_an_actor_blocked_on_insert_logs_the_rate_limiter_state(replay_server, monkeypatch, caplog):
  monkeypatch.setattr(actor_role, "ACTOR_STALL_LOG_S", 2.0)
  monkeypatch.setattr(actor_role, "ACTOR_REPORT_STEPS", 5)  # reports come before the block, whatever its timing
  experiment, address = replay_server
  counter = Counter()
  builder = experiment.make_builder()
  replay.WeightPublisher(replay.connect(address)).publish(0, builder.make_policy().params())  # the learner's part
  actor = threading.Thread(target=roles.run_actor, args=(experiment, builder, address, counter, 0))
  with caplog.at_level(logging.WARNING):
    actor.start()  # no learner: once the rate limiter's insert allowance is spent, inserts block
    deadline = time.monotonic() + 120
    while "replay insert has been blocked for" not in caplog.text and time.monotonic() < deadline:
      time.sleep(0.5)
    counter.request_stop("test over")
    actor.join(timeout=60.0)
  assert not actor.is_alive()
  assert "replay insert has been blocked for" in caplog.text
  assert "table replay: 24/1000000 items" in caplog.text and "samples_per_insert=8" in caplog.text
  assert counter.snapshot()["frames"] >= 40  # the steps before the block were reported


def test_an_actor_waits_for_the_learners_weights_and_stops_with_the_run(replay_server):
  experiment, address = replay_server
  counter = Counter()
  actor = threading.Thread(target=roles.run_actor, args=(experiment, experiment.make_builder(), address, counter, 0))
  actor.start()
  time.sleep(5.0)
  assert counter.snapshot()["frames"] == 0  # no weights published: no step taken
  counter.request_stop("test over")
  actor.join(timeout=30.0)
  assert not actor.is_alive()


