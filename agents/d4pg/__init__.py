"""D4PG (Barth-Maron et al., 2018): deterministic policy, categorical critic, n-step returns, many actors.

The shared actor-critic pieces (agents/actor_critic) with D4PG's own, split by role: `config` (the critic's
settings), `networks` (the categorical critic), `learning` (the replicated update), `builder` (what launchers
call) and `presets` (the value range's rule). No process wiring lives here.
"""

from agents.d4pg import presets
from agents.d4pg.builder import D4PGBuilder
from agents.d4pg.config import D4PGConfig
from agents.d4pg.learning import Learner

__all__ = ["D4PGBuilder", "D4PGConfig", "Learner", "presets"]
