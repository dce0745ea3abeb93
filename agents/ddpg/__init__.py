"""DDPG as DrQ-v2 (Yarats et al., 2021): the shared encoder, policy, exploration and replay with a twin scalar
critic (clipped double Q), target policy smoothing and n-step returns.

The shared actor-critic pieces (agents/actor_critic) with DDPG's own, split by role: `config` (DrQ-v2's defaults
and the target noise), `networks` (the twin critic), `learning` (the replicated update), `builder` (what launchers
call) and `presets`.
"""

from agents.ddpg import presets
from agents.ddpg.builder import DDPGBuilder
from agents.ddpg.config import DDPGConfig
from agents.ddpg.learning import Learner

__all__ = ["DDPGBuilder", "DDPGConfig", "Learner", "presets"]
