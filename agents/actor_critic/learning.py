"""What the learners of every actor-critic agent here share: the learner's state, augmentation, target updates and
the `Learner` loop that reads replay, runs the agent's update replicated by rlrep, and saves and restores exactly.

An agent brings its critic and its update (`update(state, batch, config)`, an ordinary single-device training step:
per-replica mean losses, `rlrep.wrap_optimizer` optimizers, which average gradients across replicas exactly once, and
metrics through `rlrep.all_mean`); `Learner` runs it with any `rlrep.Replicator`: 1 CPU, N logical CPUs, GPUs or TPU
cores, unchanged. Only the critic's loss trains the encoder. Targets (encoder, policy and critic) follow the online
networks by periodic copies, or by Polyak averaging when `target_update_tau > 0`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from typing import Any, Callable, Iterator

import numpy as np
import tensorflow as tf
from dm_env import specs

import rlrep
from agents.actor_critic.config import ActorCriticConfig
from agents.actor_critic.networks import Networks, make_networks
from rlrep import replay

SHIFT_PAD = 4


def random_shift(images: tf.Tensor, seed: tf.Tensor, pad: int = SHIFT_PAD) -> tf.Tensor:
  """Shifts every image by up to `pad` pixels each way, edge pixels repeated (DrQ's pad-and-crop).

  Gathers rows then columns at clipped indices, which is the crop of an edge-padded image without
  materialising the padding (faster than tf.pad's SYMMETRIC mode). Deterministic given `seed` (a stateless RNG
  seed of shape [2]), so a restored learner repeats it exactly.
  """
  batch, height, width = tf.shape(images)[0], images.shape[1], images.shape[2]
  offsets = tf.random.stateless_uniform([batch, 2], seed, minval=-pad, maxval=pad + 1, dtype=tf.int32)
  rows = tf.clip_by_value(offsets[:, :1] + tf.range(height)[None, :], 0, height - 1)
  cols = tf.clip_by_value(offsets[:, 1:] + tf.range(width)[None, :], 0, width - 1)
  shifted = tf.gather(images, rows, axis=1, batch_dims=1)
  return tf.gather(shifted, cols, axis=2, batch_dims=1)


class LearnerState(tf.Module):
  """Everything a learner checkpoint holds: networks, target networks, optimizers and the step counter; and the
  seed of the learner's randomness (network initialisation here, augmentation and an agent's own in updates)."""

  def __init__(self, observation_spec: dict[str, specs.Array], action_spec: specs.BoundedArray,
               config: ActorCriticConfig, critic: Callable[[Any], tf.Module], seed: int):
    """`critic(config)` makes the agent's critic; `seed` is the experiment's."""
    super().__init__(name="learner")
    self.seed = seed
    tf.keras.utils.set_random_seed(seed)  # network initialisation
    self.online = _as_module(make_networks(observation_spec, action_spec, config, critic))
    # Targets change only by copying: one replica's value is taken (all replicas hold the same).
    with tf.variable_creator_scope(_first_replica_aggregation):
      self.target = _as_module(make_networks(observation_spec, action_spec, config, critic))
      self.num_steps = tf.Variable(0, dtype=tf.int64, trainable=False, name="num_steps")
    for target, online in zip(self.target.variables, self.online.variables, strict=True):
      target.assign(online)

    def adam():
      clip = {"global_clipnorm": config.max_gradient_norm} if config.max_gradient_norm else {}
      return rlrep.wrap_optimizer(tf.keras.optimizers.Adam(config.learning_rate, **clip))

    self.critic_optimizer, self.policy_optimizer = adam(), adam()
    self.critic_variables = list(self.online.encoder.trainable_variables) + list(
        self.online.critic.trainable_variables)
    self.policy_variables = list(self.online.policy.trainable_variables)
    # Create optimizer slots now (outside any replicated step) so checkpoints always have the same shape.
    self.critic_optimizer.build(self.critic_variables)
    self.policy_optimizer.build(self.policy_variables)

  @property
  def networks(self) -> Networks:
    return self.online.networks

  @property
  def target_networks(self) -> Networks:
    return self.target.networks


def _as_module(networks: Networks) -> tf.Module:
  module = tf.Module()
  module.encoder, module.policy, module.critic = networks.encoder, networks.policy, networks.critic
  module.networks = networks
  return module


def _first_replica_aggregation(next_creator, **kwargs):
  kwargs["aggregation"] = tf.VariableAggregation.ONLY_FIRST_REPLICA
  return next_creator(**kwargs)


def augment(state: LearnerState, observation: dict, next_observation: dict,
            config: ActorCriticConfig) -> tuple[dict, dict]:
  """Both observations with their pixels randomly shifted (`config.augment`), else as they are."""
  if config.augment and "pixels" in observation:
    # A different shift per replica and step, reproducible from the step counter.
    stream = state.num_steps * rlrep.num_replicas() + tf.cast(rlrep.replica_id(), tf.int64)
    observation = {**observation, "pixels": random_shift(observation["pixels"], _shift_seed(state, stream, 0))}
    next_observation = {**next_observation,
                        "pixels": random_shift(next_observation["pixels"], _shift_seed(state, stream, 1))}
  return observation, next_observation


def update_targets(state: LearnerState, config: ActorCriticConfig) -> None:
  """Counts the step and moves the target networks toward the online ones: Polyak averaging with
  `target_update_tau > 0`, else a copy every `target_update_period` steps."""
  state.num_steps.assign_add(1)
  if config.target_update_tau > 0:
    mix = tf.constant(config.target_update_tau, tf.float32)
  else:  # 1 exactly on copy steps (1 * online + 0 * target == online), else 0
    mix = tf.cast(state.num_steps % config.target_update_period == 0, tf.float32)
  for target_variable, online_variable in zip(state.target.variables, state.online.variables):
    target_variable.assign(mix * online_variable + (1.0 - mix) * target_variable)


def apply_and_update_targets(state: LearnerState, tape: tf.GradientTape, critic_loss: tf.Tensor,
                             policy_loss: tf.Tensor, config: ActorCriticConfig) -> None:
  """Ends an update: steps the critic optimizer (critic and encoder) on `critic_loss`'s gradients, then the policy
  optimizer on `policy_loss`'s, both taken from the persistent `tape` that recorded the two losses, then counts
  the step and moves the targets (`update_targets`)."""
  state.critic_optimizer.apply_gradients(zip(tape.gradient(critic_loss, state.critic_variables),
                                             state.critic_variables))
  state.policy_optimizer.apply_gradients(zip(tape.gradient(policy_loss, state.policy_variables),
                                             state.policy_variables))
  update_targets(state, config)


def _shift_seed(state: LearnerState, stream: tf.Tensor, which: int) -> tf.Tensor:
  """A stateless seed >= 0 in its first half: 2 * seed for the observations, 2 * seed + 1 for the next ones."""
  return tf.stack([tf.constant(state.seed, tf.int64) * 2 + which, stream])


class Learner:
  """Runs an agent's update on a replicator, reading batches from `make_iterator()`, and saves/restores exactly;
  an `rlrep.core.Learner`. An agent's learner subclasses it, naming its state (`make_state`) and its update
  (`update_fn`).

  `step()` reads `config.steps_per_call` batches (timing how long it waited for replay: `input_wait_s`; a
  `watchdog` logs the replay state while that wait is long), runs that many replicated updates in one call
  compiled by `Replicator.function` and returns the last one's metrics. A batch read is never lost: when
  the input ends on its idle timeout (StopIteration) the batches read so far wait for the next call, and no
  update has run. `restart_input()` replaces the iterator after such an end.
  """
  # The learner's variables (made under the replicator's scope) and the single-device step every replica runs.
  make_state: Callable[[dict[str, specs.Array], specs.BoundedArray, Any, int], LearnerState]
  update_fn: Callable[[LearnerState, dict, Any], dict[str, tf.Tensor]]

  def __init__(self, replicator: rlrep.Replicator, observation_spec: dict[str, specs.Array],
               action_spec: specs.BoundedArray, config: ActorCriticConfig, seed: int,
               make_iterator: Callable[[], Iterator] | None = None, watchdog: replay.Watchdog | None = None):
    self.replicator = replicator
    # "auto" becomes bfloat16 or float32 by what the replicas run natively: speed only, the same recipe.
    self.precision = rlrep.precision.choose(config.precision, replicator.device_kind)
    self.config = config = dataclasses.replace(config, precision=self.precision.precision)
    with replicator.scope():
      self.state = self.make_state(observation_spec, action_spec, config, seed)
    self._make_iterator = make_iterator
    self._iterator = None if make_iterator is None else make_iterator()
    # Every tensor TensorFlow 2.15 hands to Python 3.11 leaves a small object behind for good
    # (tensorflow/tensorflow#62551), so this loop takes few out of TensorFlow: one vector per update (its
    # metrics and the step count), one flat buffer per weights read.
    self._metric_names: tuple[str, ...] = ()  # known once the update is traced
    self._update = replicator.function(self._update_as_vector, steps_per_call=config.steps_per_call)
    self._num_steps = int(self.state.num_steps.numpy())
    self._batches: list = []  # read, not yet trained on
    self._checkpoint = tf.train.Checkpoint(learner=self.state)
    self._read_policy = tf.function(self._policy_as_flat_buffers)
    self._waited_s = 0.0
    self._waiting_since: float | None = None
    self._watchdog = watchdog

  def _update_as_vector(self, batch: dict) -> tf.Tensor:
    """`update_fn`'s metrics, then the step count after it, in one float64 vector (exact to 2**53 steps)."""
    metrics = self.update_fn(self.state, replay.unwrap_batch(batch), self.config)
    self._metric_names = tuple(metrics)
    return tf.stack([tf.cast(value, tf.float64) for value in metrics.values()]
                    + [tf.cast(self.state.num_steps, tf.float64)])

  def _policy_as_flat_buffers(self) -> dict[str, tf.Tensor]:
    """Every policy weight flattened and joined, one buffer per dtype, in `policy_variables` order."""
    variables = self.state.networks.policy_variables.values()
    return {dtype: tf.concat([tf.reshape(v.read_value(), [-1]) for v in variables if v.dtype.name == dtype], 0)
            for dtype in {v.dtype.name for v in variables}}

  def read_input(self) -> bool:
    """Reads the batches the next `step()` trains on; False when the input ended on its idle timeout first (the
    batches read so far are kept). Hosts training in lockstep read first, then agree whether all can step."""
    try:
      self._read_batches()
    except (StopIteration, tf.errors.OutOfRangeError):
      return False
    return True

  def step(self) -> dict[str, float]:
    self._read_batches()
    batches, self._batches = tuple(self._batches), []
    values = self.replicator.local_results(self._update(batches))[0].numpy()  # averaged over replicas
    self._num_steps = int(values[-1])
    return dict(zip(self._metric_names, values[:-1].tolist()))

  def _read_batches(self) -> None:
    if self._iterator is None:
      raise RuntimeError("this Learner has no input: pass `make_iterator=` (the builder's make_learner does).")
    while len(self._batches) < self.config.steps_per_call:
      self._waiting_since = time.perf_counter()
      try:
        with self._watchdog.watch("learner sample") if self._watchdog else contextlib.nullcontext():
          self._batches.append(next(self._iterator))
      finally:  # a wait that ends in the dataset's idle timeout was a wait too
        self._waited_s += time.perf_counter() - self._waiting_since
        self._waiting_since = None

  @property
  def input_wait_s(self) -> float:
    """Seconds spent waiting for replay batches so far, including a wait still going on (read from
    another thread, e.g. for a progress line)."""
    since = self._waiting_since
    return self._waited_s + (time.perf_counter() - since if since is not None else 0.0)

  def restart_input(self) -> None:
    """A new input iterator; the time it takes to start counts as waiting for input."""
    start = time.perf_counter()
    self._iterator = self._make_iterator()
    self._waited_s += time.perf_counter() - start

  @property
  def num_steps(self) -> int:
    """Updates done (the step counter as of the last update or restore: reading it costs no tensor)."""
    return self._num_steps

  def policy_params(self) -> dict[str, np.ndarray]:
    """Encoder and policy weights for actors, named as `Networks.policy_variables` (views into one
    buffer per dtype)."""
    buffers = {dtype: value.numpy() for dtype, value in self._read_policy().items()}
    offsets = dict.fromkeys(buffers, 0)
    params = {}
    for name, variable in self.state.networks.policy_variables.items():
      dtype, size = variable.dtype.name, variable.shape.num_elements()
      params[name] = buffers[dtype][offsets[dtype]:offsets[dtype] + size].reshape(variable.shape)
      offsets[dtype] += size
    return params

  def save(self, path: str) -> str:
    """Writes a checkpoint with prefix `path`; returns the file prefix to pass to `restore`."""
    return self._checkpoint.write(path)

  def restore(self, path: str) -> None:
    self._checkpoint.read(path).assert_existing_objects_matched()
    self._num_steps = int(self.state.num_steps.numpy())
