"""The builder: everything a launcher needs for one task, consistent with the environment's specs."""

import numpy as np
import pytest
import reverb

from agents.d4pg import D4PGBuilder, D4PGConfig
from rlrep import replay

CONFIG = D4PGConfig(image_size=16, render_quality="fast", frame_stack=2, hidden_sizes=(16,), conv_channels=4,
                    feature_dim=8, batch_size=4, min_replay_size=4, samples_per_insert=None,
                    replay_chunk_length=4)


def test_tables_adder_and_policy_fit_the_environment():
  builder = D4PGBuilder("cartpole-swingup", CONFIG)
  environment = builder.make_environment(seed=1)
  server = reverb.Server(builder.make_tables())
  client = reverb.Client(f"localhost:{server.port}")
  adder, policy = builder.make_adder(client), builder.make_policy()
  timestep = environment.reset()
  adder.observe_first(timestep)
  for _ in range(10):
    action = policy(policy.params(), {k: v[None] for k, v in timestep.observation.items()},
                    np.random.default_rng(0))[0]
    timestep = environment.step(action)
    adder.observe(action, timestep)
  adder.close()  # flushes and waits for the server to confirm
  size = client.server_info()[replay.REPLAY_TABLE].current_size
  environment.close()
  server.stop()
  assert builder.observation_spec["pixels"].shape == (16, 16, 6) and builder.action_spec.shape == (1,)
  assert size == 10 - CONFIG.n_step  # an item per step whose n-step target is known; the episode is unfinished


def test_an_unknown_task_is_refused_with_close_matches():
  with pytest.raises(ValueError, match="cartpole-swingup"):
    D4PGBuilder("cartpole-swingpu", CONFIG)
