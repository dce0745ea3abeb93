"""Starting settings for D4PG from pixels on any Control Suite task: the shared actor-critic rules
(agents/actor_critic/presets.py) and the value range's.

The value range follows the reward scale: Control Suite rewards lie in [0, 1] per frame, so with action repeat k
and discount 0.99 a return lies in [0, k / (1 - 0.99)] = [0, 100 k]: vmax = 100 k. It follows the action repeat
the user chose: `for_task("cartpole-swingup", {"action_repeat": 4})` gives vmax 400, not 200.

>>> for_task("cartpole-swingup")["action_repeat"], for_task("cheetah-run")["vmax"]
(2, 400.0)
>>> for_task("cartpole-swingup", {"action_repeat": 4})["vmax"]
400.0
>>> preset = for_task("walker-walk")
>>> preset["batch_size"], preset["samples_per_insert"]
(256, 64.0)
"""

from __future__ import annotations

from typing import Any

from agents.actor_critic import presets

RETURN_PER_FRAME_BOUND = 100.0  # 1 / (1 - discount): the discounted sum of rewards <= 1 per frame


def for_task(task: str, given: dict[str, Any] | None = None) -> dict[str, Any]:
  """D4PGConfig fields (pixels) for `task`, a 'domain-task' name, minus those in `given` (the user's own
  settings, which the derived rules follow); an unknown task raises ValueError."""
  given = given or {}
  preset = presets.for_task(task, given)
  value_range = {"vmax": RETURN_PER_FRAME_BOUND * {**preset, **given}["action_repeat"]}
  return {**preset, **{name: value for name, value in value_range.items() if name not in given}}


def describe() -> str:
  """The rules in one paragraph, for `rlrep train --help`."""
  return presets.describe(agent_rules=(f"vmax = {RETURN_PER_FRAME_BOUND:.0f} x action repeat",))
