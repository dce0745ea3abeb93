"""Everything a launcher needs to run an actor-critic agent on one task, without knowing how processes are wired.

The builder turns (task, config) into environments, replay tables, the learner, and actor and evaluator policies.
Launchers (in-process threads, Ray processes, cluster pods) call the same methods in each role. Every actor-critic
agent here uses it; an agent's builder names its learner (`learner_class`), the only piece that differs.

>>> builder = ActorCriticBuilder("cartpole-balance", ActorCriticConfig.for_state_features())
>>> sorted(builder.observation_spec), builder.action_spec.shape
(['features'], (1,))
"""

from __future__ import annotations

from typing import Callable

import dm_env
import reverb

import rlrep
from agents.actor_critic.acting import Exploration, PolicyNetwork
from agents.actor_critic.config import ActorCriticConfig
from agents.actor_critic.learning import Learner
from environments import dmc
from rlrep import replay


class ActorCriticBuilder:
  """An actor-critic agent on a Control Suite task; an `rlrep.core.Builder` once `learner_class` is set."""
  learner_class: type[Learner]

  def __init__(self, task: str, config: ActorCriticConfig):
    self.task = task
    self.config = config
    probe = self.make_environment(seed=0)  # also rejects an unknown task before anything starts
    self.observation_spec = probe.observation_spec()
    self.action_spec = probe.action_spec()
    probe.close()
    self.layout = replay.StepLayout.from_specs(self.observation_spec, self.action_spec, config.frame_stack,
                                               config.n_step)

  def make_environment(self, seed: int, render_size: int | None = None,
                       time_limit: float | None = None) -> dm_env.Environment:
    """The task as the agent sees it; `render_size` allows larger renders of it (evaluation videos),
    `time_limit` (seconds) longer or shorter episodes than the task's own (diagnostics)."""
    config = self.config
    return dmc.load(self.task, pixels=config.pixels, size=config.image_size, frame_stack=config.frame_stack,
                    action_repeat=config.action_repeat, render_quality=config.render_quality, seed=seed,
                    render_size=render_size, time_limit=time_limit)

  def make_policy(self, evaluation: bool = False) -> PolicyNetwork:
    """The exploring actor policy (tell it the run's frames with `set_frames`), or with `evaluation=True`
    the deterministic one."""
    return PolicyNetwork(self.observation_spec, self.action_spec, self.config,
                         exploration=None if evaluation else Exploration.from_config(self.config))

  def make_tables(self) -> list[reverb.Table]:
    """Replay, and the weights table whose signature is the policy's weights by name."""
    weight_specs = self.make_policy(evaluation=True).variable_specs()
    return [replay.replay_table(self.layout, self.config.replay), replay.weights_table(weight_specs)]

  def make_adder(self, client: reverb.Client, watchdog: replay.Watchdog | None = None,
                 should_stop: Callable[[], bool] | None = None) -> replay.NStepFrameAdder:
    return replay.NStepFrameAdder(client, self.layout, chunk_length=self.config.replay.chunk_length,
                                  watchdog=watchdog, should_stop=should_stop)

  def make_learner(self, replicator: rlrep.Replicator, server_address: str, *, seed: int,
                   end_after_idle_s: float | None = None, watchdog: replay.Watchdog | None = None) -> Learner:
    """A learner whose randomness (network initialisation, augmentation) comes from `seed`, the experiment's,
    reading its batches from the replay server (each replica its own share).

    With `end_after_idle_s`, `Learner.step` raises `StopIteration` when replay has allowed no sample for
    that long, so the caller can check whether to stop, then call `restart_input`. A `watchdog` logs the
    replay state while a sample is blocked.
    """
    # Batches cross into Python as one tensor each (replay.wrap_batches) where every replica is a CPU, where the
    # wrapper saves memory; a TPU cannot take it as input.
    on_cpus = all("CPU" in device.upper() for device in replicator.strategy.extended.worker_devices)
    input_fn = replay.make_input_fn(server_address, self.layout, self.config.discount, self.config.batch_size,
                                    end_after_idle_s=end_after_idle_s, wrap=on_cpus)

    return self.learner_class(replicator, self.observation_spec, self.action_spec, self.config, seed,
                              lambda: iter(replicator.distribute_dataset(input_fn, per_replica=True)),
                              watchdog=watchdog)
