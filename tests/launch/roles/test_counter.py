"""The counter: run-wide counts, recent returns, actor reports and a stop signal whose first reason wins."""

import math
import threading

from launch.roles.counter import Counter


def test_actor_progress_adds_frames_episodes_and_recent_returns():
  counter = Counter(frames=100, recent_returns=2)
  assert counter.add_actor_progress(0, 50, [1.0], {"frames_per_s": 5.0}) == 150
  assert counter.add_actor_progress(1, 30, [2.0, 4.0], {"frames_per_s": 3.0}) == 180
  snapshot = counter.snapshot()
  assert snapshot["frames"] == 180 and snapshot["episodes"] == 3
  assert snapshot["resumed_at_frames"] == 100  # where a resumed run's own speed starts counting
  assert snapshot["recent_return"] == 3.0  # the last 2 returns only
  assert snapshot["actors"] == {0: {"frames_per_s": 5.0}, 1: {"frames_per_s": 3.0}}


def test_restarts_are_counted_per_actor_and_no_return_yet_is_nan():
  counter = Counter()
  assert [counter.actor_started(0), counter.actor_started(0), counter.actor_started(1)] == [1, 2, 1]
  assert counter.snapshot()["actor_starts"] == {0: 2, 1: 1}
  assert math.isnan(counter.snapshot()["recent_return"])


def test_the_first_stop_reason_wins_and_learner_done_is_separate():
  counter = Counter()
  assert counter.stop_reason() is None
  counter.request_stop("interrupted (Ctrl-C)")
  counter.request_stop("learner finished")
  assert counter.stop_reason() == "interrupted (Ctrl-C)" and not counter.snapshot()["learner_done"]
  counter.mark_learner_done()
  assert counter.snapshot()["learner_done"]


def test_concurrent_reports_are_all_counted():
  counter = Counter()
  threads = [threading.Thread(target=lambda i=i: [counter.add_actor_progress(i, 1, [], {}) for _ in range(1000)])
             for i in range(4)]
  for thread in threads:
    thread.start()
  for thread in threads:
    thread.join()
  assert counter.snapshot()["frames"] == 4000
