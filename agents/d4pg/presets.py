"""Starting settings for D4PG from pixels on any Control Suite task, by general rules (not tuned per task).

`rlrep train --task T` starts from `for_task(T)`; every setting a user passes as a flag wins over it, and
the run's first lines list each effective setting with where it came from.

The rules:
* action repeat by domain: 4 for cheetah, reacher and ball_in_cup, as PlaNet's benchmark (which the pixel-RL
  literature follows); 2 for everything else (walker, finger, hopper, quadruped, ...) and for cartpole too, where
  PlaNet used 8 (2 learned more by 100k frames; 8 learns faster in the first ~20k, so a short smoke run may pass
  `--action-repeat 8`).
* value range by reward scale: Control Suite rewards lie in [0, 1] per frame, so with action repeat k and
  discount 0.99 a return lies in [0, k / (1 - 0.99)] = [0, 100 k]: vmax = 100 k.
* replay ratio: one learner update of 256 transitions per 8 environment frames (samples_per_insert =
  256 x action repeat / 8), on every machine and at every precision: the hardware changes how long a run
  takes, never what it learns. DrQ-v2 samples 256 transitions per 4 frames.
* optimisation as the runs that learned cartpole from pixels here: Adam 3e-4, Polyak targets (tau 0.01).

Settings derived by a rule follow what the user chose: `for_task("cartpole-swingup", {"action_repeat": 4})`
gives vmax 400, not 200.

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

from environments import dmc

ACTION_REPEAT_BY_DOMAIN = {"cheetah": 4, "reacher": 4, "ball_in_cup": 4}
DEFAULT_ACTION_REPEAT = 2
BATCH_SIZE = 256
FRAMES_PER_UPDATE = 8
RETURN_PER_FRAME_BOUND = 100.0  # 1 / (1 - discount): the discounted sum of rewards <= 1 per frame


def for_task(task: str, given: dict[str, Any] | None = None) -> dict[str, Any]:
  """D4PGConfig fields (pixels) for `task`, a 'domain-task' name, minus those in `given` (the user's own
  settings, which the derived rules follow); an unknown task raises ValueError."""
  given = given or {}
  domain, _ = dmc.parse_task(task)
  action_repeat = given.get("action_repeat", ACTION_REPEAT_BY_DOMAIN.get(domain, DEFAULT_ACTION_REPEAT))
  batch_size = given.get("batch_size", BATCH_SIZE)
  preset = {"action_repeat": action_repeat,
            "vmax": RETURN_PER_FRAME_BOUND * action_repeat,
            "batch_size": batch_size,
            "samples_per_insert": float(batch_size * action_repeat / FRAMES_PER_UPDATE),
            "learning_rate": 3e-4,
            "target_update_tau": 0.01}
  return {name: value for name, value in preset.items() if name not in given}


def replay_ratio() -> str:
  """The replay-ratio rule in words (D4PG's and DDPG's help)."""
  return (f"batch {BATCH_SIZE}, one update per {FRAMES_PER_UPDATE} frames (samples per insert = batch x action "
          f"repeat / {FRAMES_PER_UPDATE}) at every precision")


def describe() -> str:
  """The rules in one paragraph, for `rlrep train --help`."""
  repeats = ", ".join(f"{domain} {repeat}" for domain, repeat in ACTION_REPEAT_BY_DOMAIN.items())
  return (f"Per-task presets (pixels): action repeat by domain ({repeats}, others {DEFAULT_ACTION_REPEAT}); "
          f"vmax = {RETURN_PER_FRAME_BOUND:.0f} x action repeat; {replay_ratio()}; learning rate 3e-4; target "
          "tau 0.01. Any flag you give overrides its preset; the run prints every effective "
          "setting and its source first.")
