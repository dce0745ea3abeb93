"""The learner role: replicated updates from replay, weight publication, progress line, logs and checkpoints.

It refuses at start-up an agent whose learner and policy disagree on the weights (`check_agent_contract`),
resumes from the newest intact checkpoint, publishes weights by name every `publish_every_steps`, and stops
the run with an error naming the step and the last finite checkpoint when its losses stop being numbers.

A learner on several hosts (`--learner-hosts`) is one such role per host, each sampling its own stream from
replay, its updates in lockstep with the others' (MultiWorkerMirroredStrategy). Before every update the hosts
agree (`Replicator.any_host`) whether to stop and whether each has its batches, so none waits in a collective
the others never join. Host 0, the chief, alone publishes weights, logs, checkpoints and reports to the counter;
every host restores the same checkpoint.
"""

from __future__ import annotations

import logging
import math
import pathlib
import time

import numpy as np

import rlrep
from launch import metrics
from launch.metrics_log import MetricsLog
from launch.checkpoints import CheckpointStore
from launch.experiment import Experiment, RunFailed
from rlrep import core, replay

LEARNER_IDLE_POLL_S = 2.0     # a learner waiting for replay this long re-checks whether the run is over
LEARNER_STALL_LOG_S = 30.0    # a learner without a batch this long (and every such period after) logs the replay state


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


class LearnerRole:
  """The learner loop with its outputs (progress line, train.csv, TensorBoard, checkpoints).

  Create the replicator before anything else touches TensorFlow in this process (logical CPU devices and
  TPU initialisation must come first), then pass it here.
  """

  def __init__(self, experiment: Experiment, builder: core.Builder, address: str, counter,
               replicator: rlrep.Replicator):
    self._experiment = experiment
    self._counter = counter
    self._replicator = replicator
    self._chief = replicator.is_chief
    self._client = replay.connect(address)
    # The replay dataset gives up after LEARNER_IDLE_POLL_S without a sample, so no single wait grows long
    # enough for a Watchdog: `_report_if_starved` watches the time since the last batch instead.
    self._learner = builder.make_learner(replicator, address, seed=experiment.seed,
                                         end_after_idle_s=LEARNER_IDLE_POLL_S)
    check_agent_contract(builder, self._learner)
    choice = self._learner.precision
    if self._chief:
      counter.announce(f"learner: {replicator.description}, computing in {choice.precision} ({choice.reason})")
    self._last_batch = time.perf_counter()
    self._starved_reports = 0
    self._publisher = replay.WeightPublisher(self._client)
    self._checkpoints = CheckpointStore(experiment.out_dir / "checkpoints")
    self._log = MetricsLog(experiment.out_dir, "train") if self._chief else None
    restored = self._checkpoints.restore(self._learner)
    if restored and self._chief:  # actors wait for the first weights (published below): replay holds what was restored
      held = self._client.server_info(timeout=30)[replay.REPLAY_TABLE].current_size
      counter.announce(f"resumed at learner step {self._learner.num_steps:,d} ({restored['frames']:,d} frames) "
                       f"with {f'{held:,d} replay items restored' if held else 'an empty replay'}"
                       f"{'' if experiment.checkpoint_replay else ' (no --checkpoint-replay)'}")
    self._published_steps: int | None = None
    self._publish()

  def _publish(self) -> None:
    """Publishes the learner's weights unless this version already is (a starved learner does not step); the
    chief's alone, as every host holds the same."""
    if self._chief and self._learner.num_steps != self._published_steps:
      self._publisher.publish(self._learner.num_steps, self._learner.policy_params())
      self._published_steps = self._learner.num_steps

  def run(self) -> dict:
    """Trains until the counter says stop; always publishes, logs and checkpoints on the way out."""
    experiment, learner = self._experiment, self._learner
    _, inserted, sampled = self._replay_counts() if self._chief else (0.0, 0.0, 0.0)
    last = {"time": time.perf_counter(), **self._counter.snapshot(), "input_wait_s": 0.0, "replay_inserted": inserted,
            "replay_sampled": sampled}
    last_checkpoint = time.perf_counter()
    learner_metrics: dict[str, float] = {}
    finite = True
    try:
      while True:
        stop = self._counter.stop_reason() is not None
        ready = not stop and learner.read_input()
        missing_somewhere, stop = self._replicator.any_host(not ready, stop)  # the hosts' common decision
        if stop:
          break
        if not missing_somewhere:
          learner_metrics = learner.step()
          self._last_batch, self._starved_reports = time.perf_counter(), 0
        elif not ready:  # replay allowed this host no sample for a while (a ready host keeps its batches)
          learner.restart_input()
          self._report_if_starved()
        steps = learner.num_steps
        finite = all(math.isfinite(value) for value in learner_metrics.values())
        if not finite:
          raise self._non_finite_error(steps, learner_metrics)
        if not self._chief:
          continue
        self._counter.set_learner_steps(steps)
        if steps - self._published_steps >= experiment.publish_every_steps:  # steps move by steps_per_call
          self._publish()
        if time.perf_counter() - last["time"] >= experiment.log_every_s:
          last = self._log_row(last, learner_metrics)
        if time.perf_counter() - last_checkpoint >= experiment.checkpoint_every_s:
          self._save_checkpoint()
          last_checkpoint = time.perf_counter()
    finally:
      if self._chief:
        if finite:  # never hand actors, or a checkpoint, weights that are not numbers
          try:
            self._publish()
          except Exception as error:  # noqa: BLE001  (replay gone: the checkpoint below matters more)
            logging.warning("the final weights could not be published (%s); checkpointing them", error)
        self._counter.set_learner_steps(learner.num_steps)
        self._log_row(last, learner_metrics)
        if finite:
          self._save_checkpoint()
        self._counter.mark_learner_done()
    return {"learner_steps": learner.num_steps}

  def _save_checkpoint(self) -> None:
    """The replay server's tables (with --checkpoint-replay), then the learner's checkpoint with the counters.
    A replay checkpoint that fails is reported and training goes on, as for the learner's own."""
    if self._experiment.checkpoint_replay:
      started = time.perf_counter()
      try:
        path = self._client.checkpoint()
      except Exception as error:  # noqa: BLE001  (a full disk or a gone server must not end training here)
        self._counter.announce(f"the replay checkpoint failed ({error}); a resume would start from the one "
                               "before, if any")
      else:
        try:  # the server wrote it: in cluster mode on its own machine, seen here only through a shared volume
          size = f"{sum(file.stat().st_size for file in pathlib.Path(path).iterdir()) / 1e6:,.1f} MB"
        except OSError:
          size = "size unknown here"
        self._counter.announce(f"replay checkpoint: {size} in {time.perf_counter() - started:.1f}s ({path})")
    self._checkpoints.save(self._learner, self._counter.snapshot())

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
    replay_size, inserted, sampled = self._replay_counts()
    row = {"frames": snapshot["frames"],
           "frames_per_s": (snapshot["frames"] - last["frames"]) / elapsed,
           "learner_steps": snapshot["learner_steps"],
           "learner_steps_per_s": (snapshot["learner_steps"] - last["learner_steps"]) / elapsed,
           "episodes": snapshot["episodes"], "episode_return": snapshot["recent_return"],
           "replay_size": replay_size,
           "replay_inserts_per_s": (inserted - last["replay_inserted"]) / elapsed,
           "replay_samples_per_s": (sampled - last["replay_sampled"]) / elapsed,
           "weights_staleness": max(staleness) if staleness else float("nan"),
           "actor_wait_share": float(np.mean([a["wait_share"] for a in actors])) if actors else float("nan"),
           "learner_wait_share": (self._learner.input_wait_s - last["input_wait_s"]) / elapsed,
           "actor_restarts": sum(snapshot["actor_starts"].values()) - len(snapshot["actor_starts"]),
           **learner_metrics}
    self._log.write(row)
    self._counter.announce(metrics.progress_line(row))
    return {"time": now, **snapshot, "input_wait_s": self._learner.input_wait_s, "replay_inserted": inserted,
            "replay_sampled": sampled}

  def _replay_counts(self) -> tuple[float, float, float]:
    """The replay table's size and the items inserted into and sampled from it so far (NaN when the server does
    not answer in time: the progress line must not stop training)."""
    try:
      table = self._client.server_info(timeout=5)[replay.REPLAY_TABLE]
    except Exception:  # noqa: BLE001
      return float("nan"), float("nan"), float("nan")
    limiter = table.rate_limiter_info
    return table.current_size, limiter.insert_stats.completed, limiter.sample_stats.completed
