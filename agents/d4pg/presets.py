"""Starting settings for D4PG from pixels on any Control Suite task, by general rules (not tuned per task).

`rlrep train --task T` starts from `for_task(T)`; every setting a user passes as a flag wins over it, and
the run's first lines list each effective setting with where it came from.

The rules:
* action repeat by domain: 4 for cheetah, reacher and ball_in_cup, as PlaNet's benchmark (which the pixel-RL
  literature follows); 2 for everything else (walker, finger, hopper, quadruped, ...) and for cartpole too, where
  PlaNet used 8. Measured here (bfloat16, same seed, 100k frames, action repeat 8 -> 2): cartpole-balance
  912 -> 988, cartpole-swingup 482 -> 770 (DrQ-v2, at 2: 987 and 626); a second swingup seed at 2 reached 853 at
  200k (DrQ-v2 807). With float32's half the updates of half the batch it changed little (swingup seed 1:
  292 -> 279 at 100k). Repeat 8 learns more from the first ~20k frames (swingup at 10k frames, seeds 1 and 2:
  163 and 134 at 8, 71 and 88 at 2), so a short smoke run may pass `--action-repeat 8`.
* value range by reward scale: Control Suite rewards lie in [0, 1] per frame, so with action repeat k and
  discount 0.99 a return lies in [0, k / (1 - 0.99)] = [0, 100 k]: vmax = 100 k.
* replay ratio by compute: in float32, one learner update of 128 transitions per 16 environment frames
  (samples_per_insert = 128 k / 16): what a 2-core CPU learner sustains at ~2-3 updates/s while actors
  produce ~40 frames/s. With `precision="bfloat16"` (native bfloat16: a CPU with AVX512-BF16/AMX, a TPU or a
  recent GPU; 1.7x faster updates on the 2-core CPU) one update of 256 per 8 frames, 4x the samples per frame
  at ~31-33 frames/s. Same seeds, 100k / 200k frames, float32 preset -> bfloat16 rule (both at action repeat 8
  for cartpole): cartpole-swingup 292 / 493 -> 482 / 799, walker-walk 229 / 310 -> 367 / 505 (DrQ-v2: 626 / 807
  and 170 / 428); at 100k cartpole-balance 581 -> 912 (DrQ-v2 987), finger-spin 292 -> 554 (325);
  benchmarks/results/. DrQ-v2 samples 256 transitions per 4 frames. The samples, not the precision, make the
  gain: swingup seed 1 in float32 with the bfloat16 rule's batch and rate given as flags scored 694 at 100k
  (bfloat16 770, float32 preset 279) in 82 minutes on a CPU without native bfloat16.
* optimisation as the runs that learned cartpole from pixels here: Adam 3e-4, Polyak targets (tau 0.01).

Settings derived by a rule follow what the user chose: `for_task("cartpole-swingup", {"action_repeat": 4})`
gives vmax 400, not 200.

>>> for_task("cartpole-swingup")["action_repeat"], for_task("cheetah-run")["vmax"]
(2, 400.0)
>>> for_task("cartpole-swingup", {"action_repeat": 4})["vmax"]
400.0
>>> preset = for_task("walker-walk", {"precision": "bfloat16"})
>>> preset["batch_size"], preset["samples_per_insert"]
(256, 64.0)
"""

from __future__ import annotations

from typing import Any

from environments import dmc

ACTION_REPEAT_BY_DOMAIN = {"cheetah": 4, "reacher": 4, "ball_in_cup": 4}
DEFAULT_ACTION_REPEAT = 2
BATCH_SIZE = 128
FRAMES_PER_UPDATE = 16
BFLOAT16_BATCH_SIZE = 256
BFLOAT16_FRAMES_PER_UPDATE = 8
RETURN_PER_FRAME_BOUND = 100.0  # 1 / (1 - discount): the discounted sum of rewards <= 1 per frame


def for_task(task: str, given: dict[str, Any] | None = None) -> dict[str, Any]:
  """D4PGConfig fields (pixels) for `task`, a 'domain-task' name, minus those in `given` (the user's own
  settings, which the derived rules follow); an unknown task raises ValueError."""
  given = given or {}
  domain, _ = dmc.parse_task(task)
  action_repeat = given.get("action_repeat", ACTION_REPEAT_BY_DOMAIN.get(domain, DEFAULT_ACTION_REPEAT))
  bfloat16 = given.get("precision") == "bfloat16"
  batch_size = given.get("batch_size", BFLOAT16_BATCH_SIZE if bfloat16 else BATCH_SIZE)
  frames_per_update = BFLOAT16_FRAMES_PER_UPDATE if bfloat16 else FRAMES_PER_UPDATE
  preset = {"action_repeat": action_repeat,
            "vmax": RETURN_PER_FRAME_BOUND * action_repeat,
            "batch_size": batch_size,
            "samples_per_insert": float(batch_size * action_repeat / frames_per_update),
            "learning_rate": 3e-4,
            "target_update_tau": 0.01}
  return {name: value for name, value in preset.items() if name not in given}


def replay_ratio() -> str:
  """The replay-ratio rule in words (D4PG's and DDPG's help)."""
  return (f"batch {BATCH_SIZE}, one update per {FRAMES_PER_UPDATE} frames (samples per insert = batch x action "
          f"repeat / {FRAMES_PER_UPDATE}); with --precision bfloat16 batch {BFLOAT16_BATCH_SIZE}, one update per "
          f"{BFLOAT16_FRAMES_PER_UPDATE} frames")


def describe() -> str:
  """The rules in one paragraph, for `rlrep train --help`."""
  repeats = ", ".join(f"{domain} {repeat}" for domain, repeat in ACTION_REPEAT_BY_DOMAIN.items())
  return (f"Per-task presets (pixels): action repeat by domain ({repeats}, others {DEFAULT_ACTION_REPEAT}); "
          f"vmax = {RETURN_PER_FRAME_BOUND:.0f} x action repeat; {replay_ratio()}; learning rate 3e-4; target "
          "tau 0.01. Any flag you give overrides its preset; the run prints every effective "
          "setting and its source first.")
