"""DDPG networks: the twin critic's shapes, independent heads, and actor weights the shared actors' policy loads."""

import numpy as np
import pytest
import tensorflow as tf
from dm_env import specs

from agents.actor_critic.acting import PolicyNetwork
from agents.ddpg.config import DDPGConfig
from agents.ddpg.networks import TwinCritic, make_networks

PIXELS = {"pixels": specs.BoundedArray((16, 16, 6), np.uint8, 0, 255)}
ACTION = specs.BoundedArray((3,), np.float32, -1, 1)
CONFIG = DDPGConfig(frame_stack=2, hidden_sizes=(32, 32), conv_channels=4, feature_dim=8)


def _observations(count=6):
  return {"pixels": tf.constant(np.random.default_rng(0).integers(0, 256, (count, 16, 16, 6), dtype=np.uint8))}


def test_the_critic_gives_two_scalar_values_per_example_from_independent_heads():
  networks = make_networks(PIXELS, ACTION, CONFIG)
  assert isinstance(networks.critic, TwinCritic)
  features = networks.encoder(_observations())
  values = networks.critic(features, networks.policy(features)).numpy()
  assert features.shape == (6, 8) and values.shape == (6, 2)
  assert not np.allclose(values[:, 0], values[:, 1])  # initialised apart
  first, second = ({id(v) for v in head_variables} for head_variables in
                   ([v for layer in head for v in layer.variables] for head in networks.critic.heads))
  assert first and second and not first & second
  assert first | second == {id(v) for v in networks.critic.trainable_variables}


def test_actors_get_the_encoder_and_policy_weights_under_the_names_their_policy_expects():
  networks = make_networks(PIXELS, ACTION, CONFIG)
  actor = PolicyNetwork(PIXELS, ACTION, CONFIG)
  params = {name: variable.numpy() for name, variable in networks.policy_variables.items()}
  assert list(params) == list(actor.variable_specs())
  assert not {id(v) for v in networks.policy_variables.values()} & {id(v) for v in networks.critic.variables}
  observations = {"pixels": _observations()["pixels"].numpy()}
  expected = networks.policy(networks.encoder(_observations())).numpy()
  np.testing.assert_allclose(actor(params, observations, np.random.default_rng(0)), expected, atol=1e-6)


def test_an_unbounded_action_spec_is_refused():
  with pytest.raises(ValueError, match="bounded action spec"):
    make_networks(PIXELS, specs.Array((3,), np.float32), CONFIG)
