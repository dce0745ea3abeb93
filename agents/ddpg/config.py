"""DDPG settings with DrQ-v2's defaults (Yarats et al., 2021) where this machine allows.

DrQ-v2's DDPG on D4PG's pieces: the same pixel encoder, policy head, exploration schedule and replay; a twin
scalar critic (clipped double Q) instead of the categorical one. The shared fields are checked by
`agents.d4pg.config.ActorCriticConfig`; every field is an `rlrep train --agent ddpg` option.

>>> config = DDPGConfig.for_state_features()
>>> config.pixels, config.frame_stack, config.sigma_start == config.sigma, config.replay.n_step
(False, 1, True, 3)
>>> DDPGConfig(target_noise=-0.1, target_noise_clip=-1.0)
Traceback (most recent call last):
ValueError: invalid DDPG settings:
  - target_noise and target_noise_clip must be >= 0, got -0.1 and -1.0
"""

from __future__ import annotations

import dataclasses

from agents.d4pg.config import ActorCriticConfig
from rlrep.replay import ReplayConfig


@dataclasses.dataclass(frozen=True)
class DDPGConfig(ActorCriticConfig):
  """Everything the DDPG learner, actors and replay need.

  Attributes:
    pixels: learn from 84x84 pixels (True) or from the suite's state features (False).
    image_size: height and width of the pixel observation (at least 16 for the encoder's convolutions).
    frame_stack: the observation stacks this many latest frames, so the policy can see motion.
    action_repeat: each agent step repeats its action for this many environment frames.
    render_quality: standard (dm_control's visuals) or fast (no shadows, reflections or multisampling:
      about 10x faster in software rendering; the images look flatter, so compare runs at one quality).
    batch_size: global learner batch, split across replicas.
    n_step, discount: n-step returns (DrQ-v2: 3 steps, 0.99).
    learning_rate: Adam, policy and critic (DrQ-v2: 1e-4).
    max_gradient_norm: global-norm clipping of the mean gradient (0 = off, as DrQ-v2).
    target_update_period: copy online to target networks every this many learner steps (used when tau = 0).
    target_update_tau: Polyak averaging rate per step of the target encoder, policy and critic (DrQ-v2: 0.01).
    target_noise: std of the Gaussian noise on the target policy's action (target policy smoothing). DrQ-v2
      uses the actors' current exploration sigma (1.0 falling to 0.1); a learner does not see the run's
      frames, so a fixed value stands in for it (TD3's 0.2).
    target_noise_clip: the target noise is clipped to +-this before the action is clipped to its bounds
      (DrQ-v2: 0.3).
    sigma: Gaussian exploration noise (actions lie in [-1, 1]) once `sigma_decay_frames` have passed
      (DrQ-v2: 0.1).
    sigma_start: exploration noise at frame 0; it falls linearly to `sigma` over `sigma_decay_frames`.
    sigma_decay_frames: frames (summed over actors) over which the noise falls; 0 = `sigma` throughout.
      DrQ-v2 takes 100k agent steps (200k frames) on its easy tasks; runs here are shorter.
    random_frames: uniformly random actions for the first this many frames (summed over actors).
    saturation_penalty: weight of mean(pre-tanh policy output ** 2) in the policy loss (0 = off, as DrQ-v2;
      D4PG uses it against a policy stuck at an action bound, see `rlrep train --agent d4pg --help`).
    conv_channels, feature_dim: pixel encoder: two 3x3 conv layers (first stride 2), then FC + LN + tanh.
    hidden_sizes: policy and critic MLP widths (DrQ-v2: 1024, 1024; narrower here for CPU learners).
    precision: auto, float32 or bfloat16 for the encoder's convolutions and projection; speed only (see D4PG's).
    steps_per_call: learner updates per compiled call, each on its own batch (see D4PG's --steps-per-call).
    augment: random shift (pad 4, crop back) of learner observations, as DrQ-v2; pixels only.
    samples_per_insert, min_replay_size, max_replay_size: replay ratio and size (items = agent steps).
    replay_chunk_length: agent steps per stored replay chunk (see `rlrep.replay.ReplayConfig.chunk_length`).
    replay_error_buffer: the rate limiter's tolerance (see D4PG's --replay-error-buffer).
    weights_update_period: actors pull new weights every this many agent steps.
    seed: network initialisation, augmentation and target-noise randomness.
  """
  pixels: bool = True
  image_size: int = 84
  frame_stack: int = 3
  action_repeat: int = 2
  render_quality: str = "standard"
  batch_size: int = 256
  n_step: int = 3
  discount: float = 0.99
  learning_rate: float = 1e-4
  max_gradient_norm: float = 0.0
  target_update_period: int = 100
  target_update_tau: float = 0.01
  target_noise: float = 0.2
  target_noise_clip: float = 0.3
  sigma: float = 0.1
  sigma_start: float = 1.0
  sigma_decay_frames: int = 100_000
  random_frames: int = 4_000
  saturation_penalty: float = 0.0
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
  seed: int = 0

  OPTION_GROUPS = {  # `rlrep train --help` sections (the experiment's --seed sets `seed`)
      "environment": ("pixels", "image_size", "frame_stack", "action_repeat", "render_quality"),
      "learning": ("batch_size", "learning_rate", "n_step", "discount", "max_gradient_norm", "target_update_period",
                   "target_update_tau", "augment", "precision", "steps_per_call"),
      "critic": ("target_noise", "target_noise_clip"),
      "policy and exploration": ("sigma", "sigma_start", "sigma_decay_frames", "random_frames",
                                 "saturation_penalty"),
      "networks": ("conv_channels", "feature_dim", "hidden_sizes"),
      "replay and weights": ("samples_per_insert", "min_replay_size", "max_replay_size", "replay_chunk_length",
                             "replay_error_buffer", "weights_update_period"),
  }

  def __post_init__(self):
    problems = self.shared_problems()
    if self.target_noise < 0 or self.target_noise_clip < 0:
      problems.append(f"target_noise and target_noise_clip must be >= 0, got {self.target_noise} and "
                      f"{self.target_noise_clip}")
    self.refuse("DDPG", problems)
