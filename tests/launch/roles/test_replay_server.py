"""The replay role serves the agent's two tables: replay (sized and rate-limited by the agent's settings) and
the weights table whose signature names the policy's weights; given a checkpoint directory, it starts from the
replay saved there."""

import dataclasses
import threading
import time

from launch import roles
from launch.roles.counter import Counter
from rlrep import replay


def test_the_server_holds_the_agents_replay_and_weights_tables(replay_server):
  experiment, address = replay_server
  info = replay.connect(address).server_info(timeout=10)
  assert set(info) == {replay.REPLAY_TABLE, replay.WEIGHTS_TABLE}
  assert info[replay.REPLAY_TABLE].max_size == experiment.agent_config.max_replay_size
  assert info[replay.REPLAY_TABLE].rate_limiter_info.samples_per_insert == experiment.agent_config.samples_per_insert
  weight_names = set(info[replay.WEIGHTS_TABLE].signature["params"])
  assert weight_names == set(experiment.make_builder().make_policy(evaluation=True).variable_specs())


def test_a_server_given_a_checkpoint_directory_starts_from_the_replay_saved_there(tiny_experiment):
  experiment = dataclasses.replace(tiny_experiment, checkpoint_replay=True)
  builder, directory = experiment.make_builder(), experiment.replay_checkpoint_dir
  server = roles.make_replay_server(builder, checkpoint_dir=directory)
  address = f"localhost:{server.port}"
  replay.WeightPublisher(replay.connect(address)).publish(0, builder.make_policy().params())
  counter = Counter()
  actor = threading.Thread(target=roles.run_actor, args=(experiment, builder, address, counter, 0))
  actor.start()  # no learner: the rate limiter blocks the actor once its insert allowance is spent
  client = replay.connect(address)
  deadline = time.monotonic() + 120
  while client.server_info(timeout=10)[replay.REPLAY_TABLE].current_size < 20 and time.monotonic() < deadline:
    time.sleep(0.5)
  counter.request_stop("filled")
  actor.join(timeout=60.0)
  saved = client.server_info(timeout=10)[replay.REPLAY_TABLE]
  assert saved.current_size >= 20
  client.checkpoint()
  server.stop()

  restored_server = roles.make_replay_server(builder, checkpoint_dir=directory)
  restored = replay.connect(f"localhost:{restored_server.port}").server_info(timeout=10)[replay.REPLAY_TABLE]
  restored_server.stop()
  assert restored.current_size == saved.current_size
  # The rate limiter goes on from its counts, so a resumed learner keeps the run's samples per insert.
  assert restored.rate_limiter_info.insert_stats.completed == saved.rate_limiter_info.insert_stats.completed
