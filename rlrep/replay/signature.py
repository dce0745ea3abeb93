"""What one environment step and one replay item look like, derived from the environment's specs.

Pixel replay is memory-bound, so every environment step is written once, holding only its newest frame:

    record for step t = {observation: newest frame (and other keys) at t, action a_t,
                         reward r_{t+1}, discount d_{t+1}, valid 1}

Around the T real steps of an episode the writer adds padding records (valid 0, reward 0, discount 1):
k-1 copies of the first observation before it (k = frame stack), the final observation after it, then n-1
copies of that. An n-step item for time t then references, never copies, consecutive records only:

    observation/<key>:       the k records ending at t  (1 record for keys other than 'pixels')
    next_observation/<key>:  the k records ending at t+m, m = min(n, T-t)
    action:                  record t
    reward, discount, valid: the n records from t (past the end: padding that contributes nothing)

so every item has the same shape, frame stacks never cross an episode boundary and repeat the first
frame at the start (as the environment does), and padding costs k+n-1 frames per episode. (Reverb cannot
reference one record twice in a column, which is why padding is written rather than referenced twice.)
"""

from __future__ import annotations

import dataclasses

import numpy as np
import tensorflow as tf
from dm_env import specs

STACKED_KEY = "pixels"


@dataclasses.dataclass(frozen=True)
class StepLayout:
  """The stored step and item structure for one environment and replay setting."""
  observation_spec: dict[str, specs.Array]  # single-frame specs, as written per step
  action_spec: specs.Array
  frame_stack: int
  n_step: int

  @classmethod
  def from_specs(cls, observation_spec: dict[str, specs.Array], action_spec: specs.Array, frame_stack: int,
                 n_step: int) -> "StepLayout":
    """`observation_spec` is the environment's (stacked) spec; its `pixels` entry is split into frames."""
    single = dict(observation_spec)
    if STACKED_KEY in single:
      stacked = single[STACKED_KEY]
      channels, remainder = divmod(stacked.shape[-1], frame_stack)
      if remainder:
        raise ValueError(f"'{STACKED_KEY}' has {stacked.shape[-1]} channels, not a multiple of frame_stack="
                         f"{frame_stack}: the replay frame stack must match the environment's.")
      single[STACKED_KEY] = specs.Array(stacked.shape[:-1] + (channels,), stacked.dtype, name=STACKED_KEY)
    elif frame_stack != 1:
      raise ValueError(f"frame_stack={frame_stack} needs a '{STACKED_KEY}' observation; this environment has "
                       f"{sorted(single)}. Use frame_stack=1 for state features.")
    return cls(single, action_spec, frame_stack, n_step)

  @property
  def history_length(self) -> int:
    """Records the writer must keep addressable: items made at an episode's end reach back past n padding
    records, n steps and k frames."""
    return self.frame_stack + 2 * self.n_step

  def column_paths(self) -> list[tuple[str, ...]]:
    """The writer's column paths for one step (as in `step_signature`)."""
    step = self.step_signature()
    return [("observation", key) for key in step["observation"]] + [(name,) for name in step if name != "observation"]

  def stacked_shape(self, key: str) -> tuple[int, ...]:
    """Shape of one observation key in an item: (k, *frame) for the stacked key, the step's otherwise."""
    shape = tuple(self.observation_spec[key].shape)
    return (self.frame_stack, *shape) if key == STACKED_KEY else shape

  def newest_frames(self, observation: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The part of an (environment-stacked) observation that is new at this step."""
    frames = {}
    for key, spec in self.observation_spec.items():
      value = np.asarray(observation[key])
      frames[key] = value[..., -spec.shape[-1]:] if key == STACKED_KEY else value
    return frames

  def step_signature(self) -> dict:
    return {
        "observation": {k: tf.TensorSpec(s.shape, tf.as_dtype(s.dtype)) for k, s in self.observation_spec.items()},
        "action": tf.TensorSpec(self.action_spec.shape, tf.as_dtype(self.action_spec.dtype)),
        "reward": tf.TensorSpec((), tf.float32),
        "discount": tf.TensorSpec((), tf.float32),
        "valid": tf.TensorSpec((), tf.float32),
    }

  def item_signature(self) -> dict:
    step = self.step_signature()
    observation = {k: tf.TensorSpec(self.stacked_shape(k), s.dtype) for k, s in step["observation"].items()}
    return {
        "observation": observation,
        "next_observation": dict(observation),
        "action": step["action"],
        "reward": tf.TensorSpec((self.n_step,), tf.float32),
        "discount": tf.TensorSpec((self.n_step,), tf.float32),
        "valid": tf.TensorSpec((self.n_step,), tf.float32),
    }
