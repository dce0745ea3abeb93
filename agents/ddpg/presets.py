"""Starting settings for DDPG from pixels on any Control Suite task: D4PG's rules, less what DDPG lacks.

The rules are `agents.d4pg.presets`' (action repeat by domain, batch 256 and one update per 8 frames, Adam
3e-4 and target tau 0.01); D4PG's value range (vmax) has no DDPG setting and is left out.

>>> preset = for_task("cartpole-swingup")
>>> preset["action_repeat"], preset["samples_per_insert"], "vmax" in preset
(2, 64.0, False)
>>> for_task("walker-walk", {"batch_size": 64})["samples_per_insert"]
16.0
"""

from __future__ import annotations

import dataclasses
from typing import Any

from agents.d4pg import presets as d4pg_presets
from agents.ddpg.config import DDPGConfig

FIELDS = frozenset(field.name for field in dataclasses.fields(DDPGConfig))


def for_task(task: str, given: dict[str, Any] | None = None) -> dict[str, Any]:
  """DDPGConfig fields (pixels) for `task`, a 'domain-task' name, minus those in `given` (the user's own
  settings, which the derived rules follow); an unknown task raises ValueError."""
  return {name: value for name, value in d4pg_presets.for_task(task, given).items() if name in FIELDS}


def describe() -> str:
  """The rules in one paragraph, for `rlrep train --agent ddpg --help`."""
  repeats = ", ".join(f"{domain} {repeat}" for domain, repeat in d4pg_presets.ACTION_REPEAT_BY_DOMAIN.items())
  return (f"Per-task presets (pixels), D4PG's without vmax: action repeat by domain ({repeats}, others "
          f"{d4pg_presets.DEFAULT_ACTION_REPEAT}); {d4pg_presets.replay_ratio()}; learning rate 3e-4; target tau "
          "0.01. Any flag you give overrides its preset; the run prints "
          "every effective setting and its source first.")
