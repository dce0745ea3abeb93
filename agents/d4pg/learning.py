"""The D4PG update, written for one device and replicated by rlrep, run by the shared actor-critic `Learner` loop.

Critic: the n-step target distribution, r + discount * z under the target networks at the target policy's
action, projected onto the fixed atoms z (`categorical_projection`), and a cross-entropy loss. It trains the
encoder too. Policy: maximise the critic's expected value of its action, with the encoder's output held
fixed. Pixels are randomly shifted and targets updated as every actor-critic learner here does
(agents/actor_critic/learning.py).
"""

from __future__ import annotations

import tensorflow as tf
from dm_env import specs

import rlrep
from agents.actor_critic import learning
from agents.actor_critic.learning import LearnerState
from agents.d4pg.config import D4PGConfig
from agents.d4pg.networks import Critic


def categorical_projection(target_atoms: tf.Tensor, target_probs: tf.Tensor, atoms: tf.Tensor) -> tf.Tensor:
  """Projects a distribution on `target_atoms` [B, A'] (probabilities `target_probs`) onto the fixed,
  evenly spaced `atoms` [A], as in C51/D4PG: mass outside [atoms[0], atoms[-1]] moves to the edge atom,
  mass between two atoms is split between them in proportion to closeness.

  >>> atoms = tf.constant([0.0, 1.0, 2.0])
  >>> categorical_projection(tf.constant([[0.25, 5.0]]), tf.constant([[0.5, 0.5]]), atoms).numpy()
  array([[0.375, 0.125, 0.5  ]], dtype=float32)
  """
  spacing = atoms[1] - atoms[0]
  clipped = tf.clip_by_value(target_atoms, atoms[0], atoms[-1])
  # weight of target atom i on fixed atom j: 1 - |z'_i - z_j| / spacing, floored at 0
  closeness = 1.0 - tf.abs(clipped[:, :, None] - atoms[None, None, :]) / spacing
  return tf.reduce_sum(target_probs[:, :, None] * tf.clip_by_value(closeness, 0.0, 1.0), axis=1)


def make_state(observation_spec: dict[str, specs.Array], action_spec: specs.BoundedArray, config: D4PGConfig,
               seed: int) -> LearnerState:
  """Online and target networks with the categorical critic, initialised from `seed`, Adam optimizers (the encoder
  in the critic's) and the step counter; build it under the replicator's scope."""
  return LearnerState(observation_spec, action_spec, config, Critic, seed)


def update(state: LearnerState, batch: dict, config: D4PGConfig) -> dict[str, tf.Tensor]:
  """One D4PG learner step on this replica's part of the batch; returns metrics averaged over replicas."""
  online, target = state.networks, state.target_networks
  observation, next_observation = learning.augment(state, batch["observation"], batch["next_observation"], config)
  action = tf.cast(batch["action"], tf.float32)

  next_features = target.encoder(next_observation)
  next_logits = target.critic(next_features, target.policy(next_features))
  target_atoms = batch["reward"][:, None] + batch["discount"][:, None] * target.critic.atoms[None, :]
  target_probs = tf.stop_gradient(categorical_projection(target_atoms, tf.nn.softmax(next_logits),
                                                         online.critic.atoms))

  with tf.GradientTape(persistent=True) as tape:
    features = online.encoder(observation)
    logits = online.critic(features, action)
    critic_loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=target_probs, logits=logits))
    fixed_features = tf.stop_gradient(features)
    preactivation = online.policy.preactivation(fixed_features)
    policy_q = online.critic.expected_value(online.critic(fixed_features, online.policy.squash(preactivation)))
    # Pulls saturated outputs back to where tanh passes the critic's gradient (see config).
    policy_loss = -tf.reduce_mean(policy_q) + config.saturation_penalty * tf.reduce_mean(preactivation ** 2)
  learning.apply_and_update_targets(state, tape, critic_loss, policy_loss, config)

  return rlrep.all_mean({"critic_loss": critic_loss, "policy_loss": policy_loss,
                         "q_mean": tf.reduce_mean(online.critic.expected_value(logits)),
                         "reward_mean": tf.reduce_mean(batch["reward"])})


class Learner(learning.Learner):
  """The shared learner loop (input timing, exact save and restore, weights for actors) running the D4PG update on
  the categorical critic's state; an `rlrep.core.Learner`."""
  make_state = staticmethod(make_state)
  update_fn = staticmethod(update)
