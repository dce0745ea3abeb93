"""The shared builder: environments, tables, adder and policy for one task, consistent with the environment's specs."""

import numpy as np
import pytest
import reverb

from agents.actor_critic.builder import ActorCriticBuilder
from agents.actor_critic.config import ActorCriticConfig
from rlrep import replay, testing

CONFIG = ActorCriticConfig(image_size=16, render_quality="fast", frame_stack=2, hidden_sizes=(16,), conv_channels=4,
                           feature_dim=8, batch_size=4, min_replay_size=4, samples_per_insert=None,
                           replay_chunk_length=4)


def test_an_environment_with_a_longer_time_limit_plays_that_much_longer_with_the_same_observations():
  builder = ActorCriticBuilder("cartpole-swingup", CONFIG)  # action repeat 2: 500 agent steps in the task's 10 s

  def agent_steps_and_first_observation(**kwargs):
    environment = builder.make_environment(seed=1, **kwargs)
    timestep = first = environment.reset()
    count = 0
    while not timestep.last():
      timestep, count = environment.step(np.zeros(1, np.float32)), count + 1
    return count, first.observation["pixels"]

  standard, longer = agent_steps_and_first_observation(), agent_steps_and_first_observation(time_limit=20.0)
  assert (standard[0], longer[0]) == (500, 1000)
  np.testing.assert_array_equal(standard[1], longer[1])


def test_tables_adder_and_policy_fit_the_environment():
  builder = ActorCriticBuilder("cartpole-swingup", CONFIG)
  server = reverb.Server(builder.make_tables())
  testing.write_steps(builder, reverb.Client(f"localhost:{server.port}"), steps=10, seed=1)
  size = reverb.Client(f"localhost:{server.port}").server_info()[replay.REPLAY_TABLE].current_size
  server.stop()
  assert builder.observation_spec["pixels"].shape == (16, 16, 6) and builder.action_spec.shape == (1,)
  assert size == 10 - CONFIG.n_step  # an item per step whose n-step target is known; the episode is unfinished


def test_an_unknown_task_is_refused_with_close_matches():
  with pytest.raises(ValueError, match="cartpole-swingup"):
    ActorCriticBuilder("cartpole-swingpu", CONFIG)
