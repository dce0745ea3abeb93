"""The settings every actor-critic agent here shares, each declared once with its default, doc and `--help` section.

Sources: Acme's D4PG defaults, the DMC tech report's pixel encoder (2 conv layers, FC-50, LayerNorm, tanh; encoder
trained by the critic only) and DrQ's random shift. An agent's config subclasses `ActorCriticConfig`: it adds its
critic's settings, re-declares a shared field to give it another default, documents in its own `Attributes:`
section only what it adds or says differently, and lists its problems after the shared ones (`problems`). Every
field is an `rlrep train` option: `--field-name value`.

>>> config = ActorCriticConfig.for_state_features()
>>> config.pixels, config.frame_stack, config.sigma_start == config.sigma, config.replay.n_step
(False, 1, True, 3)
>>> ActorCriticConfig(image_size=8, learning_rate=0.0)
Traceback (most recent call last):
ValueError: invalid ActorCritic settings:
  - image_size must be >= 16 for the encoder's convolutions, got 8
  - learning_rate must be a finite number > 0, got 0.0
"""

from __future__ import annotations

import dataclasses
import math
from typing import TypeVar

from environments import dmc
from rlrep.precision import PRECISIONS
from rlrep.replay import ReplayConfig

MIN_IMAGE_SIZE = 16
_Config = TypeVar("_Config", bound="ActorCriticConfig")


def option_groups(critic: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
  """`rlrep train --help`'s sections: every shared field, and the agent's own `critic` settings in theirs."""
  return {
      "environment": ("pixels", "image_size", "frame_stack", "action_repeat", "render_quality"),
      "learning": ("batch_size", "learning_rate", "n_step", "discount", "max_gradient_norm", "target_update_period",
                   "target_update_tau", "augment", "precision", "steps_per_call"),
      "critic": critic,
      "policy and exploration": ("sigma", "sigma_start", "sigma_decay_frames", "random_frames", "saturation_penalty"),
      "networks": ("conv_channels", "feature_dim", "hidden_sizes"),
      "replay and weights": ("samples_per_insert", "min_replay_size", "max_replay_size", "replay_chunk_length",
                             "replay_error_buffer", "weights_update_period"),
  }


@dataclasses.dataclass(frozen=True)
class ActorCriticConfig:
  """What an actor-critic agent's learner, actors and replay need, but its critic.

  Attributes:
    pixels: learn from 84x84 pixels (True) or from the suite's state features (False).
    image_size: height and width of the pixel observation (at least 16 for the encoder's convolutions).
    frame_stack: the observation stacks this many latest frames, so the policy can see motion.
    action_repeat: each agent step repeats its action for this many environment frames.
    render_quality: standard (dm_control's visuals) or fast (no shadows, reflections or multisampling:
      faster in software rendering; the images look flatter, so compare runs at one quality).
    batch_size: global learner batch, split across replicas.
    n_step, discount: n-step returns; with action repeat 2, 3 agent steps span 6 frames.
    learning_rate: Adam, policy and critic.
    max_gradient_norm: global-norm clipping of the mean gradient (0 turns it off).
    target_update_period: copy online to target networks every this many learner steps (used when tau = 0).
    target_update_tau: Polyak averaging rate per step instead of periodic copies (0 = periodic copies).
    sigma: Gaussian exploration noise (actions lie in [-1, 1]) once `sigma_decay_frames` have passed.
    sigma_start: exploration noise at frame 0; it falls linearly to `sigma` over `sigma_decay_frames`
      (DrQ-v2's schedule). Wide early noise keeps replay diverse while the critic cannot yet tell states
      apart.
    sigma_decay_frames: frames (summed over actors) over which the noise falls; 0 = `sigma` throughout.
    random_frames: uniformly random actions for the first this many frames (summed over actors).
    saturation_penalty: weight of mean(pre-tanh policy output ** 2) in the policy loss. Without it the
      policy can run to an action bound, where tanh is flat and the critic's gradient no longer moves it.
    conv_channels, feature_dim: pixel encoder: two 3x3 conv layers (first stride 2), then FC + LN + tanh.
    hidden_sizes: policy and critic MLP widths.
    precision: auto, float32 or bfloat16: the numbers the learner's pixel encoder computes in (its
      convolutions and projection; weights, LayerNorm, heads, targets, losses and the categorical projection
      stay float32). It changes speed only, never the other settings. auto picks bfloat16 where the learner's
      devices run it natively (TPUs, GPUs with compute capability >= 8.0, CPUs with AMX or AVX512-BF16) and
      float32 elsewhere; the run's first lines and `rlrep doctor` say which and why. bfloat16 is refused where
      TensorFlow would emulate it (slower than float32).
    steps_per_call: learner updates per compiled call, each on its own batch (`Replicator.function`): TPUs
      need several to stay busy between host round trips; on CPUs 1 is as fast. Weights are published and
      the progress line counted between calls.
    augment: random shift (pad 4, crop back) of learner observations, as DrQ; pixels only.
    samples_per_insert, min_replay_size, max_replay_size: replay ratio and size (items = agent steps).
    replay_chunk_length: agent steps per stored replay chunk (see `rlrep.replay.ReplayConfig.chunk_length`).
    replay_error_buffer: how far the sample/insert ratio may drift before the learner or the actors block;
      none derives it (see `rlrep.replay.ReplayConfig.error_buffer`). Below one batch or samples_per_insert
      it would deadlock and is refused.
    weights_update_period: actors pull new weights every this many agent steps.
  """
  pixels: bool = True
  image_size: int = dmc.IMAGE_SIZE
  frame_stack: int = dmc.FRAME_STACK
  action_repeat: int = dmc.ACTION_REPEAT
  render_quality: str = "standard"
  batch_size: int = 256
  n_step: int = 3
  discount: float = 0.99
  learning_rate: float = 1e-4
  max_gradient_norm: float = 40.0
  target_update_period: int = 100
  target_update_tau: float = 0.0
  sigma: float = 0.2
  sigma_start: float = 1.0
  sigma_decay_frames: int = 100_000
  random_frames: int = 4_000
  saturation_penalty: float = 0.01
  conv_channels: int = 32
  feature_dim: int = 50
  hidden_sizes: tuple[int, ...] = (256, 256)
  precision: str = "auto"
  steps_per_call: int = 1
  augment: bool = True
  samples_per_insert: float | None = 32.0
  min_replay_size: int = 1000
  max_replay_size: int = 1_000_000
  replay_chunk_length: int = ReplayConfig.chunk_length
  replay_error_buffer: float | None = None
  weights_update_period: int = 100

  OPTION_GROUPS = option_groups(critic=())
  # How fast the learner computes (its precision, updates per compiled call) and how replay stores its items
  # (chunks of steps), not which are sampled or what is learned from them.
  EFFICIENCY_SETTINGS = ("precision", "steps_per_call", "replay_chunk_length")

  def __post_init__(self):
    problems = self.problems()
    if problems:
      agent = type(self).__name__.removesuffix("Config")
      raise ValueError(f"invalid {agent} settings:\n  - " + "\n  - ".join(problems))
    _ = self.replay  # building the replay settings validates them too

  def problems(self) -> list[str]:
    """Every problem with these settings, one sentence each (the replay settings are checked after them); an
    agent's config adds its own after these."""
    problems = []
    try:
      dmc.check_settings(self.image_size, self.frame_stack, self.action_repeat, self.render_quality)
    except ValueError as error:
      problems.append(str(error).rstrip("."))
    if self.pixels and self.image_size < MIN_IMAGE_SIZE:
      problems.append(f"image_size must be >= {MIN_IMAGE_SIZE} for the encoder's convolutions, got {self.image_size}")
    if self.conv_channels < 1 or self.feature_dim < 1:
      problems.append(f"conv_channels and feature_dim must be >= 1, got {self.conv_channels} and {self.feature_dim}")
    if not 0 < self.learning_rate < math.inf:
      problems.append(f"learning_rate must be a finite number > 0, got {self.learning_rate}")
    if self.max_gradient_norm < 0:
      problems.append(f"max_gradient_norm must be >= 0 (0 = no clipping), got {self.max_gradient_norm}")
    if self.target_update_period < 1:
      problems.append(f"target_update_period must be >= 1, got {self.target_update_period}")
    if not 0.0 <= self.target_update_tau <= 1.0:
      problems.append(f"target_update_tau must be in [0, 1], got {self.target_update_tau}")
    if self.saturation_penalty < 0:
      problems.append(f"saturation_penalty must be >= 0 (0 = off), got {self.saturation_penalty}")
    if self.sigma < 0 or self.sigma_start < 0:
      problems.append(f"sigma and sigma_start must be >= 0, got {self.sigma} and {self.sigma_start}")
    if self.sigma_decay_frames < 0 or self.random_frames < 0:
      problems.append(f"sigma_decay_frames and random_frames must be >= 0, got {self.sigma_decay_frames} and "
                      f"{self.random_frames}")
    if self.precision not in PRECISIONS:
      problems.append(f"precision must be one of {', '.join(PRECISIONS)}, got {self.precision!r}")
    if self.steps_per_call < 1:
      problems.append(f"steps_per_call must be >= 1, got {self.steps_per_call}")
    if not self.hidden_sizes or min(self.hidden_sizes) < 1:
      problems.append(f"hidden_sizes needs at least one positive width, got {self.hidden_sizes}")
    if self.weights_update_period < 1:
      problems.append(f"weights_update_period must be >= 1, got {self.weights_update_period}")
    if not self.pixels and self.frame_stack != 1:
      problems.append(f"state features are not stacked: use frame_stack=1 with pixels=False "
                      f"(got frame_stack={self.frame_stack})")
    return problems

  @property
  def replay_bytes_per_step(self) -> int:
    """Replay memory per stored agent step, uncompressed: one RGB frame (stacks are rebuilt when sampled) or
    a state vector, plus action, reward, discount and Reverb's per-item bookkeeping (~1 kB)."""
    return (self.image_size * self.image_size * 3 if self.pixels else 1024) + 1024

  @property
  def replay(self) -> ReplayConfig:
    return ReplayConfig(batch_size=self.batch_size, n_step=self.n_step, discount=self.discount,
                        frame_stack=self.frame_stack, samples_per_insert=self.samples_per_insert,
                        min_replay_size=self.min_replay_size, max_replay_size=self.max_replay_size,
                        chunk_length=self.replay_chunk_length, error_buffer=self.replay_error_buffer)

  @classmethod
  def for_state_features(cls: type[_Config], **overrides) -> _Config:
    """Defaults for learning from state features: no frames to stack or augment, and constant exploration
    noise (the falling schedule is for pixels)."""
    return cls(**{"pixels": False, "frame_stack": 1, "augment": False, "sigma_start": cls.sigma, **overrides})
