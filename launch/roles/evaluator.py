"""The evaluator role: the deterministic policy every `eval_every_frames`, then once more at the end.

It writes eval.csv, an evaluation video per evaluation (rendered at the video size from the evaluated
episode itself), the learning-curve PNG and summary.json.
"""

from __future__ import annotations

import itertools
import json
import math
import time
from typing import Callable

import dm_env
import numpy as np

from environments import dmc, recording
from launch import metrics
from launch.metrics_log import MetricsLog
from launch.experiment import Experiment, RunFailed
from rlrep import acting, core, replay

EVALUATOR_SEED_OFFSET = 10_000
EVALUATOR_ABANDON_CHECK_STEPS = 25


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
    self._weights = replay.WeightClient(replay.connect(address))  # pulled once per evaluation
    self._log = MetricsLog(experiment.out_dir, "eval")
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
    """Plays `eval_episodes` episodes through the acting loop and logs their mean return; None if
    `abandon()` said to stop first (asked every `EVALUATOR_ABANDON_CHECK_STEPS` steps: in local mode it asks
    the counter over Ray)."""
    self._weights.update()
    if self._weights.params is None:
      raise RunFailed("the evaluator found no weights to evaluate: the learner never published any.")
    if not self.results and self._weights.version == 0:
      # The untrained weights, however many frames the actors stepped while this role started: the learning
      # curve's first point is the policy at 0 frames.
      snapshot = {**snapshot, "frames": 0}
    returns: list[float] = []
    video = VideoRecorder(self._environment, self._experiment.video_size, self._camera, snapshot["frames"])
    # A new Actor per evaluation: its episodes start fresh, with the weights pulled above throughout.
    actor = acting.Actor([self._environment], self._policy, [video],
                         acting.FixedWeights(self._weights.params, self._weights.version),
                         episode_callback=lambda stats: returns.append(stats.last_return))
    steps = itertools.count(1)
    actor.run(should_stop=lambda: len(returns) >= self._experiment.eval_episodes or (
        next(steps) % EVALUATOR_ABANDON_CHECK_STEPS == 0 and abandon()))
    if len(returns) < self._experiment.eval_episodes:
      return None
    out = self._experiment.out_dir
    path = recording.write_video(video.frames,
                                 out / "videos" / f"eval-{snapshot['frames']:010d}.{self._experiment.video_format}")
    row = {"frames": snapshot["frames"], "learner_steps": snapshot["learner_steps"],
           "weights_version": self._weights.version,
           "eval_return": float(np.mean(returns)), "eval_return_std": float(np.std(returns))}
    self._log.write(row)
    self.results.append({**row, "video": str(path.relative_to(out))})
    self._announce(f"evaluation at {row['frames']:,d} frames (learner step {row['learner_steps']:,d}): return "
                   f"{row['eval_return']:.1f} over {len(returns)} episode(s); video {path}")
    return row

  def close(self) -> None:
    """Frees the environment's rendering contexts and closes the evaluation log (which finishes a W&B run: in a
    Ray worker nothing runs after the role returns); call from the evaluating thread."""
    self._environment.close()
    self._environment.physics.free()  # state-feature environments render through physics.render
    self._log.close()

  def finish(self, snapshot: dict) -> dict:
    """Final evaluation, the learning-curve PNG and summary.json."""
    final = self.evaluate(snapshot)
    out = self._experiment.out_dir
    metrics.plot_learning_curve(out, out / "learning_curve.png", f"{self._experiment.agent} on {self._experiment.task}")
    eval_rows = [r for r in metrics.read_log(out, "eval") if math.isfinite(r["eval_return"])]
    best = max(eval_rows, key=lambda r: r["eval_return"])
    summary = {"task": self._experiment.task, "agent": self._experiment.agent, "mode": self._experiment.mode,
               "frames": snapshot["frames"], "resumed_at_frames": snapshot["resumed_at_frames"],
               "episodes": snapshot["episodes"],
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


class VideoRecorder:
  """A `core.Adder` that writes nothing to replay: it records the first episode it is shown, each state
  rendered at `size` (the policy saw its own, smaller, observation) under a caption with the frames
  evaluated and the running return."""

  def __init__(self, environment: dm_env.Environment, size: int, camera: int, frames_evaluated: int):
    self.frames: list[np.ndarray] = []
    self._environment, self._size, self._camera = environment, size, camera
    self._caption = f"{frames_evaluated:,d} frames   return {{:.1f}}"
    self._return, self._done = 0.0, False

  def observe_first(self, timestep: dm_env.TimeStep) -> None:
    if not self._done:
      self._record()

  def observe(self, action: np.ndarray, next_timestep: dm_env.TimeStep) -> None:
    if not self._done:
      self._return += float(next_timestep.reward)
      self._record()
      self._done = next_timestep.last()

  def close(self, finish_episode: bool = True) -> None:
    pass

  def _record(self) -> None:
    image = self._environment.physics.render(self._size, self._size, camera_id=self._camera)
    self.frames.append(recording.captioned(image, self._caption.format(self._return)))
