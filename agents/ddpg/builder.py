"""Everything a launcher needs to run DDPG on one task: the shared actor-critic builder with DDPG's learner.

Environments, replay tables, adder and the actors' policy (encoder, tanh policy, Gaussian exploration) are the
shared ones (agents/actor_critic); only the learner differs.

>>> from agents.ddpg.config import DDPGConfig
>>> builder = DDPGBuilder("cartpole-balance", DDPGConfig.for_state_features())
>>> sorted(builder.observation_spec), builder.action_spec.shape, builder.learner_class.__module__
(['features'], (1,), 'agents.ddpg.learning')
"""

from __future__ import annotations

from agents.actor_critic.builder import ActorCriticBuilder
from agents.ddpg.learning import Learner


class DDPGBuilder(ActorCriticBuilder):
  """DDPG on a Control Suite task; an `rlrep.core.Builder`."""
  learner_class = Learner
