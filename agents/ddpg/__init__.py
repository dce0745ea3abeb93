"""DDPG as DrQ-v2 (Yarats et al., 2021): D4PG's encoder, policy, exploration and replay with a twin scalar
critic (clipped double Q), target policy smoothing and n-step returns.

Split by role as agents/d4pg, whose pieces it reuses: `config` (settings), `networks` (the twin critic),
`learning` (the replicated update), `builder` (what launchers call) and `presets`. Acting is D4PG's.
"""

from agents.ddpg import presets
from agents.ddpg.builder import DDPGBuilder
from agents.ddpg.config import DDPGConfig
from agents.ddpg.learning import Learner

__all__ = ["DDPGBuilder", "DDPGConfig", "Learner", "presets"]
