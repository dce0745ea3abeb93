"""Starting settings from pixels on any Control Suite task, by general rules (not tuned per task), for every
actor-critic agent here; an agent adds the rules of its own settings (D4PG: its value range).

`rlrep train --task T` starts from the agent's `for_task(T)`; every setting a user passes as a flag wins over it,
and the run's first lines list each effective setting with where it came from.

The rules:
* action repeat by domain: 4 for cheetah, reacher and ball_in_cup, as PlaNet's benchmark (which the pixel-RL
  literature follows); 2 for everything else (walker, finger, hopper, quadruped, ...) and for cartpole too, where
  PlaNet used 8.
* replay ratio: one learner update of 256 transitions per 8 environment frames (samples_per_insert =
  256 x action repeat / 8), on every machine and at every precision: the hardware changes how long a run
  takes, never what it learns. DrQ-v2 samples 256 transitions per 4 frames.
* optimisation: Adam 3e-4, Polyak target updates (tau 0.01).

Settings derived by a rule follow what the user chose: `for_task("walker-walk", {"batch_size": 128})` gives
samples_per_insert 32, not 64.

>>> for_task("cartpole-swingup")["action_repeat"], for_task("cheetah-run")["samples_per_insert"]
(2, 128.0)
>>> preset = for_task("walker-walk", {"batch_size": 128})
>>> "batch_size" in preset, preset["samples_per_insert"]
(False, 32.0)
"""

from __future__ import annotations

from typing import Any

from environments import dmc

ACTION_REPEAT_BY_DOMAIN = {"cheetah": 4, "reacher": 4, "ball_in_cup": 4}
BATCH_SIZE = 256
FRAMES_PER_UPDATE = 8


def for_task(task: str, given: dict[str, Any] | None = None) -> dict[str, Any]:
  """Shared actor-critic settings (pixels) for `task`, a 'domain-task' name, minus those in `given` (the user's own
  settings, which the derived rules follow); an unknown task raises ValueError."""
  given = given or {}
  domain, _ = dmc.parse_task(task)
  action_repeat = given.get("action_repeat", ACTION_REPEAT_BY_DOMAIN.get(domain, dmc.ACTION_REPEAT))
  batch_size = given.get("batch_size", BATCH_SIZE)
  preset = {"action_repeat": action_repeat,
            "batch_size": batch_size,
            "samples_per_insert": float(batch_size * action_repeat / FRAMES_PER_UPDATE),
            "learning_rate": 3e-4,
            "target_update_tau": 0.01}
  return {name: value for name, value in preset.items() if name not in given}


def describe(heading: str = "Per-task presets (pixels)", agent_rules: tuple[str, ...] = ()) -> str:
  """The rules in one paragraph under `heading`, with the agent's own rules after the action repeat's, for
  `rlrep train --help`."""
  repeats = ", ".join(f"{domain} {repeat}" for domain, repeat in ACTION_REPEAT_BY_DOMAIN.items())
  replay_ratio = (f"batch {BATCH_SIZE}, one update per {FRAMES_PER_UPDATE} frames (samples per insert = batch x "
                  f"action repeat / {FRAMES_PER_UPDATE}) at every precision")
  rules = [f"action repeat by domain ({repeats}, others {dmc.ACTION_REPEAT})", *agent_rules, replay_ratio,
           "learning rate 3e-4", "target tau 0.01"]
  return (f"{heading}: {'; '.join(rules)}. Any flag you give overrides its preset; the run prints every effective "
          "setting and its source first.")
