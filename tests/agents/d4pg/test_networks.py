"""D4PG's categorical critic: logits over the atoms, values within the support, and no weights of it on actors."""

import numpy as np
import tensorflow as tf
from dm_env import specs

from agents.d4pg.config import D4PGConfig
from agents.d4pg.networks import make_networks

PIXELS = {"pixels": specs.BoundedArray((16, 16, 6), np.uint8, 0, 255)}
ACTION = specs.BoundedArray((3,), np.float32, [-1, 0, -2], [1, 4, 2])
CONFIG = D4PGConfig(frame_stack=2, hidden_sizes=(32, 32), conv_channels=4, feature_dim=8, num_atoms=11,
                    vmin=-5.0, vmax=5.0)


def _observations(count=6):
  return {"pixels": tf.constant(np.random.default_rng(0).integers(0, 256, (count, 16, 16, 6), dtype=np.uint8))}


def test_the_critic_returns_logits_over_the_atoms_and_values_within_the_support():
  networks = make_networks(PIXELS, ACTION, CONFIG)
  features = networks.encoder(_observations())
  logits = networks.critic(features, networks.policy(features))
  assert logits.shape == (6, 11)
  np.testing.assert_allclose(networks.critic.atoms.numpy(), np.linspace(-5, 5, 11), atol=1e-6)
  values = networks.critic.expected_value(logits).numpy()
  assert ((-5 <= values) & (values <= 5)).all()


def test_actors_get_no_weight_of_the_critic():
  networks = make_networks(PIXELS, ACTION, CONFIG)
  assert not {id(v) for v in networks.policy_variables.values()} & {id(v) for v in networks.critic.variables}
