"""dm_env wrappers that turn a dm_control task into the pixel environment rlrep's agents see.

Each wrapper does one thing and keeps the dm_env contract: `step()` on a fresh environment, or after a
LAST step, starts a new episode and returns FIRST (dm_control's environments behave this way and every
wrapper passes such a FIRST step straight through).
"""

from __future__ import annotations

import collections
from typing import Any

import dm_env
import numpy as np
from dm_control.mujoco import engine as mujoco_engine
from dm_env import specs


class Wrapper(dm_env.Environment):
  """Forwards everything to the wrapped environment; subclasses override what they change."""

  def __init__(self, environment: dm_env.Environment):
    self._environment = environment

  def reset(self) -> dm_env.TimeStep:
    return self._environment.reset()

  def step(self, action) -> dm_env.TimeStep:
    return self._environment.step(action)

  def observation_spec(self):
    return self._environment.observation_spec()

  def action_spec(self):
    return self._environment.action_spec()

  def reward_spec(self):
    return self._environment.reward_spec()

  def discount_spec(self):
    return self._environment.discount_spec()

  def close(self) -> None:
    self._environment.close()

  def __getattr__(self, name: str) -> Any:
    # Reached only for attributes this wrapper lacks, e.g. `physics` of the dm_control environment.
    if name.startswith("__"):
      raise AttributeError(name)
    return getattr(self._environment, name)


class ActionRepeat(Wrapper):
  """Repeats each action `repeat` times: rewards add up, discounts multiply, an episode end stops early."""

  def __init__(self, environment: dm_env.Environment, repeat: int):
    super().__init__(environment)
    if repeat < 1:
      raise ValueError(f"action_repeat must be >= 1, got {repeat}.")
    self.action_repeat = repeat

  def step(self, action) -> dm_env.TimeStep:
    reward, discount = 0.0, 1.0
    for _ in range(self.action_repeat):
      timestep = self._environment.step(action)
      if timestep.first():  # a new episode began: nothing to accumulate
        return timestep
      reward += timestep.reward
      discount *= timestep.discount
      if timestep.last():
        break
    return timestep._replace(reward=np.asarray(reward, dtype=np.float64),
                             discount=np.asarray(discount, dtype=np.float64))


class ClipAction(Wrapper):
  """Exposes a float32 action spec; clips finite out-of-range actions to it and rejects malformed ones.

  Exploration noise routinely pushes actions past the bounds, so finite values are clipped (what MuJoCo
  would do to a control-limited actuator anyway). A wrong shape or a NaN/inf is a bug upstream and raises.
  """

  def __init__(self, environment: dm_env.Environment):
    super().__init__(environment)
    inner = environment.action_spec()
    self._inner_dtype = inner.dtype
    self._spec = specs.BoundedArray(inner.shape, np.float32, inner.minimum.astype(np.float32),
                                    inner.maximum.astype(np.float32), name="action")

  def action_spec(self) -> specs.BoundedArray:
    return self._spec

  def step(self, action) -> dm_env.TimeStep:
    action = np.asarray(action)
    if action.shape != self._spec.shape:
      raise ValueError(f"action has shape {action.shape}; this task's action spec has shape {self._spec.shape}.")
    if not np.all(np.isfinite(action)):
      raise ValueError(f"action contains NaN or inf: {action}.")
    clipped = np.clip(action, self._spec.minimum, self._spec.maximum).astype(self._inner_dtype)
    return self._environment.step(clipped)


def flatten_features(observation: dict[str, Any]) -> np.ndarray:
  """Concatenates dm_control's state observations, in the task's own key order, into one float32 vector."""
  return np.concatenate([np.asarray(v, dtype=np.float32).reshape(-1) for v in observation.values()])


def features_spec(state_spec: dict[str, specs.Array], name: str) -> specs.Array:
  """The spec of `flatten_features` applied to observations of `state_spec`."""
  size = sum(int(np.prod(s.shape)) for s in state_spec.values())
  return specs.Array((size,), np.float32, name=name)


class StateFeatures(Wrapper):
  """Observation {'features': float32 vector} built from the task's state observations."""

  def __init__(self, environment: dm_env.Environment):
    super().__init__(environment)
    self._spec = {"features": features_spec(environment.observation_spec(), "features")}

  def observation_spec(self):
    return self._spec

  def _convert(self, timestep: dm_env.TimeStep) -> dm_env.TimeStep:
    return timestep._replace(observation={"features": flatten_features(timestep.observation)})

  def reset(self) -> dm_env.TimeStep:
    return self._convert(self._environment.reset())

  def step(self, action) -> dm_env.TimeStep:
    return self._convert(self._environment.step(action))


class PixelObservation(Wrapper):
  """Observation {'pixels': uint8 HxWx3 [, 'proprio': float32 state vector]} rendered from `physics`.

  Rendering happens once per agent step, after any action repeat inside this wrapper.
  """

  def __init__(self, environment: dm_env.Environment, physics, size: int, camera: int | str,
               proprio: bool):
    super().__init__(environment)
    self._physics = physics
    self._size = size
    self._camera = camera
    self._proprio = proprio
    self._renderer = None
    self._spec = {"pixels": specs.BoundedArray((size, size, 3), np.uint8, 0, 255, name="pixels")}
    if proprio:
      self._spec["proprio"] = features_spec(environment.observation_spec(), "proprio")

  def observation_spec(self):
    return self._spec

  def render(self) -> np.ndarray:
    # One Camera for the environment's life: `physics.render` builds (and frees) a new MuJoCo scene on
    # every call, a large share of a fast-quality step's time.
    if self._renderer is None:
      self._renderer = mujoco_engine.Camera(self._physics, self._size, self._size, self._camera)
    return self._renderer.render().copy()  # the camera returns a view of a buffer it reuses

  def close(self) -> None:
    # Frees the GL context now, on this thread: EGL contexts belong to the thread that made them, and one
    # left for interpreter exit is freed from the main thread, which fails with EGL_BAD_ACCESS.
    self._renderer = None
    self._physics.free()
    super().close()

  def _convert(self, timestep: dm_env.TimeStep) -> dm_env.TimeStep:
    observation = {"pixels": self.render()}
    if self._proprio:
      observation["proprio"] = flatten_features(timestep.observation)
    return timestep._replace(observation=observation)

  def reset(self) -> dm_env.TimeStep:
    return self._convert(self._environment.reset())

  def step(self, action) -> dm_env.TimeStep:
    return self._convert(self._environment.step(action))


class FrameStack(Wrapper):
  """Stacks the last `num_frames` frames of observation `key` along channels, oldest first.

  The first observation of an episode fills the stack by repetition, so a stack never mixes episodes.
  """

  def __init__(self, environment: dm_env.Environment, num_frames: int, key: str = "pixels"):
    super().__init__(environment)
    if num_frames < 1:
      raise ValueError(f"frame_stack must be >= 1, got {num_frames}.")
    self._num_frames = num_frames
    self._key = key
    self._frames: collections.deque = collections.deque(maxlen=num_frames)
    spec = dict(environment.observation_spec())
    single = spec[key]
    spec[key] = specs.BoundedArray(single.shape[:-1] + (single.shape[-1] * num_frames,), single.dtype,
                                   single.minimum, single.maximum, name=single.name)
    self._spec = spec

  @property
  def frame_stack(self) -> int:
    return self._num_frames

  def observation_spec(self):
    return self._spec

  def _stack(self, timestep: dm_env.TimeStep) -> dm_env.TimeStep:
    frame = timestep.observation[self._key]
    if timestep.first():
      self._frames.extend([frame] * self._num_frames)
    else:
      self._frames.append(frame)
    observation = dict(timestep.observation)
    observation[self._key] = np.concatenate(self._frames, axis=-1)
    return timestep._replace(observation=observation)

  def reset(self) -> dm_env.TimeStep:
    return self._stack(self._environment.reset())

  def step(self, action) -> dm_env.TimeStep:
    return self._stack(self._environment.step(action))
