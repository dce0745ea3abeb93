"""The DDPG update (DrQ-v2's), written for one device and replicated by rlrep, run by the shared actor-critic
`Learner` loop.

`update(state, batch, config)` is an ordinary single-device step: per-replica mean losses,
`rlrep.wrap_optimizer` optimizers and metrics through `rlrep.all_mean`, so it gives the same weights on one
device and on N replicas.

Critic: y = r_n + discount_n * min(Q1', Q2')(s', a'), a' = the target policy's action at s' plus Gaussian
noise (std `target_noise`, clipped to +-`target_noise_clip`), clipped to the action bounds; the loss is the
sum of both heads' mean squared errors (as DrQ-v2) and trains the encoder too. Policy: maximise min(Q1, Q2)
at its own action, with the encoder's output held fixed. Targets (encoder, policy, critic): Polyak
averaging, or periodic copies with `target_update_tau = 0`. Pixels are randomly shifted as every actor-critic
learner here does (agents/actor_critic/learning.py).

Where this differs from DrQ-v2, and why:
* targets hold the encoder and policy too (the shared learner state), so a' is the target policy's action on
  the target encoder's features (TD3's choice; DrQ-v2 uses the online actor and encoder), which also saves
  a second encoder pass over the next observations;
* the target noise has a fixed std (DrQ-v2 uses the exploration schedule's, which a learner cannot see);
* the policy loss is taken at the deterministic action (DrQ-v2 adds clipped noise there too), and both
  losses come from one forward pass before either optimizer steps (DrQ-v2 steps the critic first).
"""

from __future__ import annotations

import tensorflow as tf
from dm_env import specs

import rlrep
from agents.actor_critic import learning
from agents.actor_critic.learning import LearnerState
from agents.ddpg.config import DDPGConfig
from agents.ddpg.networks import TwinCritic


def make_state(observation_spec: dict[str, specs.Array], action_spec: specs.BoundedArray, config: DDPGConfig,
               seed: int) -> LearnerState:
  """Online and target networks with the twin critic, initialised from `seed`, Adam optimizers (the encoder in the
  critic's) and the step counter; build it under the replicator's scope."""
  return LearnerState(observation_spec, action_spec, config, TwinCritic, seed)


def target_noise(state: LearnerState, like: tf.Tensor, config: DDPGConfig) -> tf.Tensor:
  """Clipped Gaussian noise shaped like this replica's `like` ([batch, action]): this replica's rows of one
  draw for the global batch, so the noise does not depend on how many replicas share the batch."""
  rows = tf.shape(like)[0]
  # The augmentation's stateless seeds start with 2 * seed + 0 or 1 >= 0: a negative first half never meets them.
  seed = tf.stack([tf.constant(-1 - state.seed, tf.int64), state.num_steps])
  shape = tf.concat([[rows * rlrep.num_replicas()], tf.shape(like)[1:]], axis=0)
  noise = tf.random.stateless_normal(shape, seed, stddev=config.target_noise)
  start = rlrep.replica_id() * rows
  return tf.clip_by_value(noise[start:start + rows], -config.target_noise_clip, config.target_noise_clip)


def td_target(state: LearnerState, next_observation: dict, reward: tf.Tensor, discount: tf.Tensor,
              config: DDPGConfig) -> tf.Tensor:
  """r_n + discount_n * min(Q1', Q2')(s', a') with a' the target policy's smoothed action ([batch])."""
  target = state.target_networks
  next_features = target.encoder(next_observation)
  next_action = target.policy(next_features)
  next_action = tf.minimum(tf.maximum(next_action + target_noise(state, next_action, config), target.policy.low),
                           target.policy.high)
  next_value = tf.reduce_min(target.critic(next_features, next_action), axis=-1)
  return tf.stop_gradient(reward + discount * next_value)


def update(state: LearnerState, batch: dict, config: DDPGConfig) -> dict[str, tf.Tensor]:
  """One DDPG learner step on this replica's part of the batch; returns metrics averaged over replicas."""
  online = state.networks
  observation, next_observation = learning.augment(state, batch["observation"], batch["next_observation"], config)
  action = tf.cast(batch["action"], tf.float32)
  target = td_target(state, next_observation, batch["reward"], batch["discount"], config)

  with tf.GradientTape(persistent=True) as tape:
    features = online.encoder(observation)
    values = online.critic(features, action)
    critic_loss = tf.reduce_sum(tf.reduce_mean(tf.square(values - target[:, None]), axis=0))
    fixed_features = tf.stop_gradient(features)
    preactivation = online.policy.preactivation(fixed_features)
    policy_value = tf.reduce_min(online.critic(fixed_features, online.policy.squash(preactivation)), axis=-1)
    policy_loss = -tf.reduce_mean(policy_value)
    if config.saturation_penalty:
      policy_loss += config.saturation_penalty * tf.reduce_mean(preactivation ** 2)
  learning.apply_and_update_targets(state, tape, critic_loss, policy_loss, config)

  return rlrep.all_mean({"critic_loss": critic_loss, "policy_loss": policy_loss, "q_mean": tf.reduce_mean(values),
                         "target_mean": tf.reduce_mean(target), "reward_mean": tf.reduce_mean(batch["reward"])})


class Learner(learning.Learner):
  """The shared learner loop (input timing, exact save and restore, weights for actors) running the DDPG update on
  the twin-critic state; an `rlrep.core.Learner`."""
  make_state = staticmethod(make_state)
  update_fn = staticmethod(update)
