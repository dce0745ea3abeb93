"""D4PG settings: the shared actor-critic settings (agents/actor_critic/config.py) and the categorical critic's.

Sources: the D4PG paper (Barth-Maron et al., 2018) and Acme's D4PG defaults. Every field is an `rlrep train`
option: `--field-name value`.

>>> D4PGConfig(num_atoms=1, vmin=5.0, vmax=1.0)
Traceback (most recent call last):
ValueError: invalid D4PG settings:
  - num_atoms must be >= 2, got 1
  - vmin (5.0) must be below vmax (1.0)
"""

from __future__ import annotations

import dataclasses

from agents.actor_critic.config import ActorCriticConfig, option_groups


@dataclasses.dataclass(frozen=True)
class D4PGConfig(ActorCriticConfig):
  """Everything the D4PG learner, actors and replay need.

  Attributes:
    num_atoms, vmin, vmax: the critic's categorical support. DMC rewards lie in [0, 1] per frame, so
      discounted returns lie in [0, action_repeat / (1 - discount)] = [0, 200] with the defaults.
    critic_initial_value: the critic's output starts as a narrow distribution around this return (clipped
      into [vmin, vmax]), as a regression critic starts near 0. With uniform initial logits it starts at
      the middle of the support, optimistic by hundreds, and that excess decays only about
      tau * (1 - discount ** n_step) per update.
  """
  num_atoms: int = 51
  vmin: float = 0.0
  vmax: float = 200.0
  critic_initial_value: float = 0.0

  OPTION_GROUPS = option_groups(critic=("num_atoms", "vmin", "vmax", "critic_initial_value"))

  def problems(self) -> list[str]:
    problems = super().problems()
    if self.num_atoms < 2:
      problems.append(f"num_atoms must be >= 2, got {self.num_atoms}")
    if not self.vmin < self.vmax:
      problems.append(f"vmin ({self.vmin}) must be below vmax ({self.vmax})")
    return problems
