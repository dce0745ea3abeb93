"""Everything a launcher needs to run DDPG on one task: D4PG's builder with the DDPG learner.

Environments, replay tables, adder and the actors' policy (encoder, tanh policy, Gaussian exploration on
D4PG's schedule) are D4PG's; only the learner differs.

>>> builder = DDPGBuilder("cartpole-balance", DDPGConfig.for_state_features())
>>> sorted(builder.observation_spec), builder.action_spec.shape, builder.learner_class.__module__
(['features'], (1,), 'agents.ddpg.learning')
"""

from __future__ import annotations

from agents.d4pg.builder import D4PGBuilder
from agents.ddpg.config import DDPGConfig
from agents.ddpg.learning import Learner


class DDPGBuilder(D4PGBuilder):
  """DDPG on a Control Suite task; an `rlrep.core.Builder`."""
  learner_class = Learner
