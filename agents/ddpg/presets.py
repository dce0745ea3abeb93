"""Starting settings for DDPG from pixels on any Control Suite task: the shared actor-critic rules
(agents/actor_critic/presets.py: action repeat by domain, batch 256 and one update per 8 frames, Adam 3e-4 and
target tau 0.01); DDPG's own settings keep their defaults.

>>> preset = for_task("cartpole-swingup")
>>> preset["action_repeat"], preset["samples_per_insert"], "vmax" in preset
(2, 64.0, False)
>>> for_task("walker-walk", {"batch_size": 64})["samples_per_insert"]
16.0
"""

from __future__ import annotations

from agents.actor_critic import presets

for_task = presets.for_task


def describe() -> str:
  """The rules in one paragraph, for `rlrep train --agent ddpg --help`."""
  return presets.describe(heading="Per-task presets (pixels), D4PG's without vmax")
