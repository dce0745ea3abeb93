"""D4PG (Barth-Maron et al., 2018): deterministic policy, categorical critic, n-step returns, many actors.

Split by role: `config` (settings), `networks`, `learning` (the replicated update and the Learner),
`acting` (the actor-side policy), `builder` (what launchers call) and `presets` (per-task starting
settings). No process wiring lives here.
"""

from agents.d4pg import presets
from agents.d4pg.builder import D4PGBuilder
from agents.d4pg.config import D4PGConfig
from agents.d4pg.learning import Learner

__all__ = ["D4PGBuilder", "D4PGConfig", "Learner", "presets"]
