"""DeepMind Control Suite tasks as pixel (or state-feature) `dm_env` environments.

>>> env = load("cartpole-balance", pixels=False, seed=0)
>>> env.observation_spec()["features"].shape
(5,)
>>> env.reset().first()
True
"""

from __future__ import annotations

import difflib

import dm_env
import numpy as np

from dm_control import suite

from environments import GL_BACKEND  # noqa: F401  (importing the package chose MUJOCO_GL before dm_control)
from environments import rendering
from environments import wrappers

MAX_SIZE = 1024
# What an agent sees by default, as in DrQ-v2: 84x84 images, the latest 3 frames stacked, each action held for 2
# frames. `load`'s defaults and the agents' environment settings are these.
IMAGE_SIZE = 84
FRAME_STACK = 3
ACTION_REPEAT = 2
# The pixel-RL literature (PlaNet, DrQ, DMC tech report) views quadrupeds from camera 2, all else from 0.
DEFAULT_CAMERA = {"quadruped": 2}
TASKS = tuple(f"{domain}-{task}" for domain, task in suite.ALL_TASKS)


def default_camera(domain: str) -> int:
  return DEFAULT_CAMERA.get(domain, 0)


def parse_task(name: str) -> tuple[str, str]:
  """Splits 'domain-task' into its parts, raising ValueError naming close matches for unknown tasks."""
  if name in TASKS:
    domain, task = name.split("-", 1)
    return domain, task
  guesses = difflib.get_close_matches(name.replace("_", "-"), TASKS, n=3, cutoff=0.5)
  hint = f" Did you mean {', '.join(guesses)}?" if guesses else ""
  domains = sorted({t.split("-", 1)[0] for t in TASKS})
  domain = name.split("-", 1)[0]
  if domain in domains:
    tasks = [t for t in TASKS if t.startswith(domain + "-")]
    raise ValueError(f"Unknown task {name!r}: domain {domain!r} has tasks {', '.join(tasks)}.{hint}")
  raise ValueError(f"Unknown task {name!r}: expected 'domain-task' with domain one of "
                   f"{', '.join(domains)}.{hint}")


def default_time_limit(name: str) -> tuple[float, int]:
  """The task's own episode length as (seconds of simulated time, control steps): what `load`'s
  `time_limit=None` keeps. Found by running the task's state version to its end with zero actions (no
  rendering; under a second).

  >>> default_time_limit("cartpole-swingup"), default_time_limit("walker-walk")
  ((10.0, 1000), (25.0, 1000))
  """
  environment = suite.load(*parse_task(name))
  timestep, steps = environment.reset(), 0
  zeros = np.zeros(environment.action_spec().shape)
  while not timestep.last():
    timestep, steps = environment.step(zeros), steps + 1
  seconds = round(steps * environment.control_timestep(), 9)  # 1000 * 0.01 is not exactly 10.0
  environment.close()
  return seconds, steps


def check_settings(size: int, frame_stack: int, action_repeat: int, render_quality: str) -> None:
  """Raises ValueError naming the first setting `load` cannot honour."""
  if not isinstance(size, int) or not 1 <= size <= MAX_SIZE:
    raise ValueError(f"size must be an int in [1, {MAX_SIZE}] pixels, got {size!r}.")
  if frame_stack < 1:
    raise ValueError(f"frame_stack must be >= 1, got {frame_stack}.")
  if action_repeat < 1:
    raise ValueError(f"action_repeat must be >= 1, got {action_repeat}.")
  if render_quality not in rendering.RENDER_QUALITIES:
    raise ValueError(f"render_quality={render_quality!r} is unknown; use one of {rendering.RENDER_QUALITIES} "
                     "('fast' drops shadows, reflections and multisampling for much faster software rendering).")


def _check_camera(physics, camera: int | str) -> None:
  model = physics.model
  names = [model.id2name(i, "camera") for i in range(model.ncam)]
  if isinstance(camera, str):
    if camera not in names:
      raise ValueError(f"camera {camera!r} is not in this model; its cameras are {names} (or ids -1..{model.ncam - 1}).")
  elif not -1 <= camera < model.ncam:
    raise ValueError(f"camera id {camera} is out of range: this model has cameras -1 (free) to {model.ncam - 1} {names}.")


def load(name: str, *, pixels: bool = True, size: int = IMAGE_SIZE, camera: int | str | None = None,
         frame_stack: int = FRAME_STACK, action_repeat: int = ACTION_REPEAT, render_quality: str = "standard",
         seed: int | None = None, proprio: bool = False, time_limit: float | None = None,
         render_size: int | None = None) -> dm_env.Environment:
  """Loads a Control Suite task as a dm_env environment.

  Args:
    name: "domain-task", e.g. "walker-walk", "cheetah-run", "cartpole-swingup".
    pixels: observations {'pixels': uint8 (size, size, 3*frame_stack)}, channels-last, oldest frame first;
      False gives {'features': float32 vector} of the suite's state observations.
    size: image height and width.
    camera: camera id or name; default 2 for quadruped, 0 otherwise.
    frame_stack: frames stacked along channels (pixels only); an episode's first frame is repeated.
    action_repeat: each action is applied this many times; rewards are summed and discounts multiplied.
    render_quality: "standard" (dm_control's visuals) or "fast" (no shadows, reflections or
      multisampling: much faster with software rendering). Never changed implicitly.
    seed: seeds the task's random initial states; None draws fresh randomness.
    proprio: with pixels, also return {'proprio': float32 state vector}.
    time_limit: episode length in seconds of simulated time; None keeps the task's own (usually 20 s,
      i.e. 1000 physics steps; a time limit ends an episode with discount 1, a failure with 0).
    render_size: also allow `env.physics.render` up to this size (e.g. evaluation videos larger than the
      observation): the offscreen buffer is sized for the larger of the two.

  Actions are float32; finite values outside the spec are clipped to it, NaN/inf or a wrong shape raise.
  """
  domain, task = parse_task(name)
  check_settings(size, frame_stack, action_repeat, render_quality)
  task_kwargs = {"random": seed}
  if time_limit is not None:
    if time_limit <= 0:
      raise ValueError(f"time_limit must be positive seconds, got {time_limit}.")
    task_kwargs["time_limit"] = time_limit
  base = suite.load(domain, task, task_kwargs=task_kwargs, environment_kwargs={"flat_observation": False})
  camera = default_camera(domain) if camera is None else camera
  if pixels:
    rendering.require_gl_backend()
    _check_camera(base.physics, camera)
    buffer = max(size, render_size or 0)
    rendering.apply_render_quality(base.physics, render_quality, buffer, buffer)
  env: dm_env.Environment = wrappers.ActionRepeat(base, action_repeat)
  if pixels:
    env = wrappers.PixelObservation(env, base.physics, size, camera, proprio)
    env = wrappers.FrameStack(env, frame_stack, key="pixels")
  else:
    env = wrappers.StateFeatures(env)
  return wrappers.ClipAction(env)
