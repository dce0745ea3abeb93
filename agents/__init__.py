"""The agent registry: `rlrep train --agent NAME` runs `AGENTS[NAME]`.

Each agent is a package split by role (config, networks, learning, builder, presets) with no launch code, built
on the pieces its siblings share (agents/actor_critic: the shared settings, encoder and policy, acting, the learner
loop, builder and preset rules); agents never import one another. Launchers reach an agent only through its
`Agent` entry here. Adding an agent is its package plus one line in `AGENTS`.

>>> get("d4pg").config.__name__
'D4PGConfig'
>>> get("dqn")
Traceback (most recent call last):
ValueError: unknown agent 'dqn'; registered agents: d4pg, ddpg
"""

from __future__ import annotations

import dataclasses
from typing import Callable

from agents import d4pg, ddpg
from rlrep import core


@dataclasses.dataclass(frozen=True)
class Agent:
  """What launchers need of an agent.

  Attributes:
    config: the settings dataclass, an `rlrep.core.AgentConfig`: every field is an `rlrep train` option documented
      by the `Attributes:` docstrings of the class and its bases and laid out in `--help` by its `OPTION_GROUPS`.
    builder: `builder(task, config)` makes the agent's environments, policy, adder, replay tables and learner.
    preset: `preset(task, given)`: starting settings for a task from pixels; `given` are the user's flags
      (which always win, and which settings derived by a rule follow).
    state_features: `state_features()`: the config for learning from state features (`--no-pixels`).
    about: where the defaults come from, for `--help`.
  """
  config: type[core.AgentConfig]
  builder: Callable[[str, core.AgentConfig], core.Builder]
  preset: Callable[[str, dict], dict]
  state_features: Callable[[], core.AgentConfig]
  about: str


DEFAULT_AGENT = "d4pg"
AGENTS = {
    "d4pg": Agent(d4pg.D4PGConfig, d4pg.D4PGBuilder, d4pg.presets.for_task, d4pg.D4PGConfig.for_state_features,
                  "Defaults are agents/d4pg/config.py's, then the task's preset (pixels); --no-pixels switches to "
                  "state-feature defaults (frame stack 1, no augmentation, no preset). " + d4pg.presets.describe()),
    "ddpg": Agent(ddpg.DDPGConfig, ddpg.DDPGBuilder, ddpg.presets.for_task, ddpg.DDPGConfig.for_state_features,
                  "DrQ-v2's DDPG (twin Q critic). Defaults are agents/ddpg/config.py's, then the task's preset "
                  "(pixels); --no-pixels switches to state-feature defaults (frame stack 1, no augmentation, "
                  "constant exploration noise, no preset). " + ddpg.presets.describe()),
}


def get(name: str) -> Agent:
  if name not in AGENTS:
    raise ValueError(f"unknown agent {name!r}; registered agents: {', '.join(sorted(AGENTS))}")
  return AGENTS[name]
