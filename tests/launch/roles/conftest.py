"""Real roles on a real Reverb server holding a tiny pixel agent's tables."""

import pytest

from agents.d4pg import D4PGConfig
from launch import roles
from launch.experiment import Experiment

TINY = D4PGConfig(image_size=32, render_quality="fast", batch_size=16, hidden_sizes=(32,), conv_channels=8,
                  feature_dim=16, min_replay_size=20, samples_per_insert=8.0, random_frames=0)


@pytest.fixture
def tiny_experiment(tmp_path):
  """A tiny cartpole-swingup experiment writing to tmp_path."""
  return Experiment(task="cartpole-swingup", out=str(tmp_path), log_every_s=1.0, eval_episodes=1,
                    video_format="gif", video_size=32, agent_config=TINY)


@pytest.fixture
def replay_server(tiny_experiment):
  """(experiment, address): the tiny experiment and its replay server."""
  experiment = tiny_experiment
  server = roles.make_replay_server(experiment.make_builder())
  yield experiment, f"localhost:{server.port}"
  server.stop()
