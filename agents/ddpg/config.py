"""DDPG settings with DrQ-v2's defaults (Yarats et al., 2021) where this machine allows.

The shared actor-critic settings (agents/actor_critic/config.py), four of them with DrQ-v2's defaults, and the
twin critic's target policy smoothing. Every field is an `rlrep train --agent ddpg` option.

>>> config = DDPGConfig()
>>> config.max_gradient_norm, config.target_update_tau, config.sigma, config.saturation_penalty
(0.0, 0.01, 0.1, 0.0)
>>> DDPGConfig(target_noise=-0.1, target_noise_clip=-1.0)
Traceback (most recent call last):
ValueError: invalid DDPG settings:
  - target_noise and target_noise_clip must be >= 0, got -0.1 and -1.0
"""

from __future__ import annotations

import dataclasses

from agents.actor_critic.config import ActorCriticConfig, option_groups


@dataclasses.dataclass(frozen=True)
class DDPGConfig(ActorCriticConfig):
  """Everything the DDPG learner, actors and replay need.

  Attributes:
    n_step, discount: n-step returns (DrQ-v2: 3 steps, 0.99).
    learning_rate: Adam, policy and critic (DrQ-v2: 1e-4).
    max_gradient_norm: global-norm clipping of the mean gradient (0 = off, as DrQ-v2).
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
    saturation_penalty: weight of mean(pre-tanh policy output ** 2) in the policy loss (0 = off, as DrQ-v2;
      D4PG uses it against a policy stuck at an action bound, see `rlrep train --agent d4pg --help`).
    hidden_sizes: policy and critic MLP widths (DrQ-v2: 1024, 1024; narrower here for CPU learners).
    precision: auto, float32 or bfloat16 for the encoder's convolutions and projection; speed only (see D4PG's).
    steps_per_call: learner updates per compiled call, each on its own batch (see D4PG's --steps-per-call).
    augment: random shift (pad 4, crop back) of learner observations, as DrQ-v2; pixels only.
    replay_error_buffer: the rate limiter's tolerance (see D4PG's --replay-error-buffer).
  """
  max_gradient_norm: float = 0.0
  target_update_tau: float = 0.01
  sigma: float = 0.1
  saturation_penalty: float = 0.0
  target_noise: float = 0.2
  target_noise_clip: float = 0.3

  OPTION_GROUPS = option_groups(critic=("target_noise", "target_noise_clip"))

  def problems(self) -> list[str]:
    problems = super().problems()
    if self.target_noise < 0 or self.target_noise_clip < 0:
      problems.append(f"target_noise and target_noise_clip must be >= 0, got {self.target_noise} and "
                      f"{self.target_noise_clip}")
    return problems
