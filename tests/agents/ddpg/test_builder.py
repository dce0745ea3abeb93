"""The builder: environment, policy, tables, adder and learner for one task, working together on a real replay
server (the learner samples what the adder wrote, and the policy loads what the learner publishes)."""

import numpy as np
import reverb

import rlrep
from agents.ddpg import DDPGBuilder, DDPGConfig
from rlrep import core, replay, testing

CONFIG = DDPGConfig(image_size=16, render_quality="fast", frame_stack=2, hidden_sizes=(16,), conv_channels=4,
                    feature_dim=8, batch_size=4, min_replay_size=4, samples_per_insert=None, replay_chunk_length=4)


def test_the_learner_trains_on_what_the_adder_wrote_and_the_policy_acts_with_its_weights():
  builder = DDPGBuilder("cartpole-swingup", CONFIG)
  server = reverb.Server(builder.make_tables())
  address = f"localhost:{server.port}"
  client = reverb.Client(address)
  timestep = testing.write_steps(builder, client, steps=10, seed=1)
  assert client.server_info()[replay.REPLAY_TABLE].current_size == 10 - CONFIG.n_step

  learner = builder.make_learner(rlrep.make_replicator("cpu:1"), address, seed=0, end_after_idle_s=5.0)
  metrics = learner.step()
  assert learner.num_steps == 1 and all(np.isfinite(value) for value in metrics.values())
  core.check_params(builder.make_policy().variable_specs(), learner.policy_params(), "the learner's weights")
  replay.WeightPublisher(client).publish(learner.num_steps, learner.policy_params())
  weights = replay.WeightClient(client)
  assert weights.update() and weights.version == 1
  evaluation = builder.make_policy(evaluation=True)
  observation = {k: v[None] for k, v in timestep.observation.items()}
  actions = evaluation(weights.params, observation, np.random.default_rng(0))
  assert actions.shape == (1, 1) and np.array_equal(actions, evaluation(weights.params, observation,
                                                                        np.random.default_rng(1)))
  server.stop()
  assert builder.observation_spec["pixels"].shape == (16, 16, 6) and builder.action_spec.shape == (1,)
