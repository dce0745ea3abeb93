"""The actor role: steps environments with the exploring policy, writes to replay, reports to the counter.

An actor acts with the learner's weights from its first step (it waits for the first publication), seeds its
environments from the experiment's seed and its restart count (a restarted actor does not replay its past),
and stops when the counter says so or the frame budget is spent.
"""

from __future__ import annotations

import time

from launch.experiment import Experiment
from rlrep import acting, core, replay

ACTOR_REPORT_STEPS = 50       # agent steps (all environments) between an actor's reports to the counter ...
ACTOR_REPORT_S = 2.0          # ... or seconds, whichever comes first: a rate-limited actor still reports
ACTOR_STALL_LOG_S = 60.0      # an insert blocked this long is logged with the replay state
ENV_SEED_STRIDE = 100_000     # seed distance between the environments of one actor


def run_actor(experiment: Experiment, builder: core.Builder, address: str, counter, actor_id: int) -> None:
  """Acts until the counter says stop or the frame budget is spent."""
  starts = counter.actor_started(actor_id)
  client = replay.connect(address)
  watchdog = replay.Watchdog(client, threshold_s=ACTOR_STALL_LOG_S)
  policy = builder.make_policy()
  should_stop = lambda: counter.stop_reason() is not None  # noqa: E731
  seed = experiment.seed + 1 + actor_id + 1000 * (starts - 1)  # a restarted actor does not replay its past
  environments = [builder.make_environment(seed + ENV_SEED_STRIDE * j) for j in range(experiment.envs_per_actor)]
  adders = [builder.make_adder(client, watchdog, should_stop) for _ in environments]
  weights = replay.WeightClient(client, builder.config.weights_update_period)
  finished: list[float] = []
  reported_frames, started = 0, time.perf_counter()
  policy.set_frames(counter.snapshot()["frames"])  # a resumed run does not start exploring from scratch
  try:
    if not weights.wait(should_stop):  # actors act with the learner's weights, from the first step on
      return
    actor = acting.Actor(environments, policy, adders, weights, seed=seed,
                         episode_callback=lambda stats: finished.append(stats.last_return))
    while not should_stop():
      report_due = time.perf_counter() + ACTOR_REPORT_S
      stats = actor.run(rounds=max(1, ACTOR_REPORT_STEPS // len(environments)),
                        should_stop=lambda: time.perf_counter() >= report_due)
      elapsed = time.perf_counter() - started
      report = {"frames_per_s": stats.frames_per_second, "weights_version": stats.weights_version,
                "weights_staleness": stats.weights_staleness,
                "wait_share": sum(adder.wait_s for adder in adders) / elapsed}
      total = counter.add_actor_progress(actor_id, stats.frames - reported_frames, finished, report)
      policy.set_frames(total)
      reported_frames = stats.frames
      finished.clear()
      if total >= experiment.frames:
        counter.request_stop("frame budget reached")
  except replay.WritingStopped:
    pass  # the run ended while this actor waited for the rate limiter
  except Exception:
    if counter.stop_reason() is None:
      raise
    # The run is over and replay went away in the middle of a write: nothing left to keep.
  finally:
    for adder in adders:
      adder.close(finish_episode=False)  # the run is over: the open episodes' last items are not needed
    watchdog.close()
    for environment in environments:
      environment.close()
