"""Everything a launcher needs to run D4PG on one task: the shared actor-critic builder with D4PG's learner.

>>> from agents.d4pg.config import D4PGConfig
>>> builder = D4PGBuilder("cartpole-balance", D4PGConfig.for_state_features())
>>> sorted(builder.observation_spec), builder.action_spec.shape, builder.learner_class.__module__
(['features'], (1,), 'agents.d4pg.learning')
"""

from __future__ import annotations

from agents.actor_critic.builder import ActorCriticBuilder
from agents.d4pg.learning import Learner


class D4PGBuilder(ActorCriticBuilder):
  """D4PG on a Control Suite task; an `rlrep.core.Builder`."""
  learner_class = Learner
