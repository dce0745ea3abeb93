"""What each role of a run does, whatever runs it: a thread, a local Ray process or a pod.

Roles receive the experiment, the replay server's address and a counter (the `Counter` itself in-process,
a handle with the same methods otherwise). They never start processes or know the launch mode.

* replay:    a Reverb server with the agent's tables (`make_replay_server`).
* actors:    step the environment with the exploring policy, write to replay, report to the counter.
* learner:   replicated updates from replay, weight publication, progress line, logs and checkpoints.
* evaluator: the deterministic policy every `eval_every_frames`: return, video, learning curve.
"""

from __future__ import annotations

import json
import logging
import math
import time
from typing import Callable

import numpy as np
import reverb
import tensorflow as tf

import rlrep
from environments import dmc, recording
from launch import metrics
from launch.checkpoints import CheckpointStore
from launch.experiment import Experiment, RunFailed
from rlrep import acting, core, replay

ACTOR_REPORT_STEPS = 50       # agent steps (all environments) between an actor's reports to the counter ...
ACTOR_REPORT_S = 2.0          # ... or seconds, whichever comes first: a rate-limited actor still reports
ACTOR_STALL_LOG_S = 60.0      # an insert blocked this long is logged with the replay state
ENV_SEED_STRIDE = 100_000     # seed distance between the environments of one actor
LEARNER_IDLE_POLL_S = 2.0     # a learner waiting for replay this long re-checks whether the run is over
LEARNER_STALL_LOG_S = 30.0    # a learner without a batch this long (and every such period after) logs the replay state
EVALUATOR_SEED_OFFSET = 10_000
EVALUATOR_ABANDON_CHECK_STEPS = 25


class NonFiniteLearnerError(RunFailed):
  """The learner's losses (so its weights or gradients) stopped being finite numbers."""


def check_agent_contract(builder: core.Builder, learner: core.Learner) -> None:
  """Refuses, at start-up, an agent whose learner publishes weights its policy cannot load."""
  try:
    core.check_params(builder.make_policy(evaluation=True).variable_specs(), learner.policy_params(),
                      "the learner's weights")
  except ValueError as error:
    raise RunFailed(f"the agent's builder breaks rlrep's interface contract: {error}. Its learner's "
                    "`policy_params()` and its policy's `variable_specs()` must name the same weights.") from None


def make_replay_server(builder: core.Builder, port: int = 0) -> reverb.Server:
  """The replay server. Reverb listens on every interface without authentication: see README, Security."""
  return reverb.Server(builder.make_tables(), port=port or None)


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


class LearnerRole:
  """The learner loop with its outputs (progress line, train.csv, TensorBoard, checkpoints).

  Create the replicator before anything else touches TensorFlow in this process (logical CPU devices and
  TPU initialisation must come first), then pass it here.
  """

  def __init__(self, experiment: Experiment, builder: core.Builder, address: str, counter,
               replicator: rlrep.Replicator):
    self._experiment = experiment
    self._counter = counter
    self._client = replay.connect(address)
    # The replay dataset gives up after LEARNER_IDLE_POLL_S without a sample, so no single wait grows long
    # enough for a Watchdog: `_report_if_starved` watches the time since the last batch instead.
    self._learner = builder.make_learner(replicator, address, end_after_idle_s=LEARNER_IDLE_POLL_S)
    check_agent_contract(builder, self._learner)
    self._last_batch = time.perf_counter()
    self._starved_reports = 0
    self._publisher = replay.WeightPublisher(self._client)
    self._checkpoints = CheckpointStore(experiment.out_dir / "checkpoints")
    self._log = metrics.MetricsLog(experiment.out_dir, "train")
    restored = self._checkpoints.restore(self._learner)
    if restored:
      logging.info("resumed learner at step %d (%d frames)", self._learner.num_steps, restored["frames"])
    self._published_steps: int | None = None
    self._publish()

  def _publish(self) -> None:
    """Publishes the learner's weights unless this version already is (a starved learner does not step)."""
    if self._learner.num_steps != self._published_steps:
      self._publisher.publish(self._learner.num_steps, self._learner.policy_params())
      self._published_steps = self._learner.num_steps

  def run(self) -> dict:
    """Trains until the counter says stop; always publishes, logs and checkpoints on the way out."""
    experiment, learner = self._experiment, self._learner
    last = {"time": time.perf_counter(), **self._counter.snapshot(), "input_wait_s": 0.0}
    last_checkpoint = time.perf_counter()
    learner_metrics: dict[str, float] = {}
    finite = True
    try:
      while self._counter.stop_reason() is None:
        try:
          learner_metrics = learner.step()
          self._last_batch, self._starved_reports = time.perf_counter(), 0
        except (StopIteration, tf.errors.OutOfRangeError):  # replay allowed no sample for a while
          learner.restart_input()
          self._report_if_starved()
        steps = learner.num_steps
        finite = all(math.isfinite(value) for value in learner_metrics.values())
        if not finite:
          raise self._non_finite_error(steps, learner_metrics)
        self._counter.set_learner_steps(steps)
        if steps % experiment.publish_every_steps == 0:
          self._publish()
        if time.perf_counter() - last["time"] >= experiment.log_every_s:
          last = self._log_row(last, learner_metrics)
        if time.perf_counter() - last_checkpoint >= experiment.checkpoint_every_s:
          self._checkpoints.save(learner, self._counter.snapshot())
          last_checkpoint = time.perf_counter()
    finally:
      if finite:  # never hand actors, or a checkpoint, weights that are not numbers
        try:
          self._publish()
        except Exception as error:  # noqa: BLE001  (replay gone: the checkpoint below matters more)
          logging.warning("the final weights could not be published (%s); checkpointing them", error)
      self._counter.set_learner_steps(learner.num_steps)
      self._log_row(last, learner_metrics)
      if finite:
        self._checkpoints.save(learner, self._counter.snapshot())
      self._counter.mark_learner_done()
    return {"learner_steps": learner.num_steps}

  def _report_if_starved(self) -> None:
    starved_s = time.perf_counter() - self._last_batch
    if starved_s >= LEARNER_STALL_LOG_S * (self._starved_reports + 1):
      self._starved_reports += 1
      logging.warning("the learner has had no batch for %.0fs: %s", starved_s, replay.describe_tables(self._client))

  def _non_finite_error(self, steps: int, learner_metrics: dict[str, float]) -> NonFiniteLearnerError:
    bad = ", ".join(f"{name}={value}" for name, value in learner_metrics.items() if not math.isfinite(value))
    latest = self._checkpoints.latest()
    where = (f"The last finite checkpoint is {latest['prefix']} (learner step {latest['learner_steps']}): "
             f"`rlrep train --resume {self._experiment.out}` continues from it" if latest else
             "No checkpoint was written before it")
    return NonFiniteLearnerError(
        f"learner step {steps}: {bad}; training stopped rather than train on. {where}. A new run with a lower "
        "--learning-rate or --max-gradient-norm usually avoids it.")

  def _log_row(self, last: dict, learner_metrics: dict[str, float]) -> dict:
    now, snapshot = time.perf_counter(), self._counter.snapshot()
    elapsed = max(now - last["time"], 1e-9)
    actors = list(snapshot["actors"].values())
    staleness = [a["weights_staleness"] for a in actors if a["weights_version"] is not None]
    try:
      replay_size = self._client.server_info(timeout=5)[replay.REPLAY_TABLE].current_size
    except Exception:  # the progress line must not kill training when the server is slow to answer
      replay_size = float("nan")
    row = {"frames": snapshot["frames"],
           "frames_per_s": (snapshot["frames"] - last["frames"]) / elapsed,
           "learner_steps": snapshot["learner_steps"],
           "learner_steps_per_s": (snapshot["learner_steps"] - last["learner_steps"]) / elapsed,
           "episodes": snapshot["episodes"], "episode_return": snapshot["recent_return"],
           "replay_size": replay_size,
           "weights_staleness": max(staleness) if staleness else float("nan"),
           "actor_wait_share": float(np.mean([a["wait_share"] for a in actors])) if actors else float("nan"),
           "learner_wait_share": (self._learner.input_wait_s - last["input_wait_s"]) / elapsed,
           "actor_restarts": sum(snapshot["actor_starts"].values()) - len(snapshot["actor_starts"]),
           **learner_metrics}
    self._log.write(row)
    self._counter.announce(metrics.progress_line(row))
    return {"time": now, **snapshot, "input_wait_s": self._learner.input_wait_s}


def run_evaluator(experiment: Experiment, builder: core.Builder, address: str, counter,
                  final_wait_s: float = 600.0) -> dict:
  """Evaluates periodically until the run stops, then once more with the learner's final weights.

  Everything happens on the calling thread: a rendering context belongs to the thread that made it.
  Returns the run summary (also written to summary.json).
  """
  evaluator = Evaluator(experiment, builder, address, counter.announce)
  try:
    evaluator.run_periodically(counter)
    deadline = time.monotonic() + final_wait_s
    while not counter.snapshot()["learner_done"] and time.monotonic() < deadline:
      time.sleep(0.2)
    return evaluator.finish(counter.snapshot())
  finally:
    evaluator.close()


class Evaluator:
  """Runs the deterministic policy with the newest weights; writes eval.csv, videos and the curve."""

  def __init__(self, experiment: Experiment, builder: core.Builder, address: str,
               announce: Callable[[str], None] = print):
    self._experiment = experiment
    self._announce = announce
    self._environment = builder.make_environment(experiment.seed + EVALUATOR_SEED_OFFSET,
                                                  render_size=experiment.video_size)
    self._policy = builder.make_policy(evaluation=True)
    self._weights = replay.WeightClient(replay.connect(address), update_period=1)
    self._log = metrics.MetricsLog(experiment.out_dir, "eval")
    self._camera = dmc.default_camera(dmc.parse_task(experiment.task)[0])
    self.results: list[dict] = []

  def run_periodically(self, counter, poll_s: float = 0.5) -> None:
    """Evaluates at 0 frames and then every `eval_every_frames` until the counter says stop."""
    every = self._experiment.eval_every_frames
    next_frames = (counter.snapshot()["frames"] // every) * every
    self._weights.wait(lambda: counter.stop_reason() is not None)
    while counter.stop_reason() is None:
      snapshot = counter.snapshot()
      if snapshot["frames"] >= next_frames:
        # A stop abandons this evaluation: the final one follows at once, with the final weights.
        self.evaluate(snapshot, abandon=lambda: counter.stop_reason() is not None)
        next_frames = (snapshot["frames"] // every + 1) * every
      time.sleep(poll_s)

  def evaluate(self, snapshot: dict, abandon: Callable[[], bool] = lambda: False) -> dict | None:
    """Plays `eval_episodes` episodes and logs their mean return; None if `abandon()` said to stop first
    (checked every `EVALUATOR_ABANDON_CHECK_STEPS` steps: in local mode it asks the counter over Ray)."""
    self._weights.update()
    if self._weights.params is None:
      raise RunFailed("the evaluator found no weights to evaluate: the learner never published any.")
    if not self.results and self._weights.version == 0:
      # The untrained weights, however many frames the actors stepped while this role started: the learning
      # curve's first point is the policy at 0 frames.
      snapshot = {**snapshot, "frames": 0}
    rng = np.random.default_rng(0)  # unused by the deterministic policy; part of the policy protocol
    returns, frames = [], []
    for episode in range(self._experiment.eval_episodes):
      timestep, total, step = self._environment.reset(), 0.0, 0
      record = episode == 0
      while True:
        if record:
          frames.append(self._frame(snapshot["frames"], total))
        action = self._policy(self._weights.params, acting.batch([timestep.observation]), rng)[0]
        timestep = self._environment.step(action)
        total += float(timestep.reward)
        if timestep.last():
          break
        step += 1
        if step % EVALUATOR_ABANDON_CHECK_STEPS == 0 and abandon():
          return None
      if record:
        frames.append(self._frame(snapshot["frames"], total))
      returns.append(total)
    out = self._experiment.out_dir
    video = recording.write_video(frames, out / "videos" / f"eval-{snapshot['frames']:010d}.{self._experiment.video_format}")
    row = {"frames": snapshot["frames"], "learner_steps": snapshot["learner_steps"],
           "weights_version": self._weights.version,
           "eval_return": float(np.mean(returns)), "eval_return_std": float(np.std(returns))}
    self._log.write(row)
    self.results.append({**row, "video": str(video.relative_to(out))})
    self._announce(f"evaluation at {row['frames']:,d} frames (learner step {row['learner_steps']:,d}): return "
                   f"{row['eval_return']:.1f} over {len(returns)} episode(s); video {video}")
    return row

  def _frame(self, frames: int, episode_return: float) -> np.ndarray:
    """The evaluated state rendered at the video size (the policy saw its own, smaller, observation)."""
    size = self._experiment.video_size
    image = self._environment.physics.render(size, size, camera_id=self._camera)
    return recording.captioned(image, f"{frames:,d} frames   return {episode_return:.1f}")

  def close(self) -> None:
    """Frees the environment's rendering contexts; call from the evaluating thread."""
    self._environment.close()
    self._environment.physics.free()  # state-feature environments render through physics.render

  def finish(self, snapshot: dict) -> dict:
    """Final evaluation, the learning-curve PNG and summary.json."""
    final = self.evaluate(snapshot)
    out = self._experiment.out_dir
    metrics.plot_learning_curve(out, out / "learning_curve.png", f"{self._experiment.agent} on {self._experiment.task}")
    eval_rows = [r for r in metrics.read_log(out, "eval") if math.isfinite(r["eval_return"])]
    best = max(eval_rows, key=lambda r: r["eval_return"])
    summary = {"task": self._experiment.task, "agent": self._experiment.agent, "mode": self._experiment.mode,
               "frames": snapshot["frames"], "episodes": snapshot["episodes"],
               "learner_steps": snapshot["learner_steps"], "wall_s": round(snapshot["elapsed_s"], 1),
               "first_eval_return": eval_rows[0]["eval_return"], "first_eval_frames": int(eval_rows[0]["frames"]),
               "final_eval_return": final["eval_return"],
               "best_eval_return": best["eval_return"], "best_eval_frames": int(best["frames"]),
               "stop_reason": snapshot["stop_reason"], "actor_starts": snapshot["actor_starts"],
               "outputs": {"train_csv": "logs/train.csv", "eval_csv": "logs/eval.csv", "tensorboard": "tensorboard",
                           "checkpoints": "checkpoints", "learning_curve": "learning_curve.png",
                           "final_video": self.results[-1]["video"]}}
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str) + "\n")
    return summary
