"""The replay role serves the agent's two tables: replay (sized and rate-limited by the agent's settings) and
the weights table whose signature names the policy's weights."""

from rlrep import replay


def test_the_server_holds_the_agents_replay_and_weights_tables(replay_server):
  experiment, address = replay_server
  info = replay.connect(address).server_info(timeout=10)
  assert set(info) == {replay.REPLAY_TABLE, replay.WEIGHTS_TABLE}
  assert info[replay.REPLAY_TABLE].max_size == experiment.agent_config.max_replay_size
  assert info[replay.REPLAY_TABLE].rate_limiter_info.samples_per_insert == experiment.agent_config.samples_per_insert
  weight_names = set(info[replay.WEIGHTS_TABLE].signature["params"])
  assert weight_names == set(experiment.make_builder().make_policy(evaluation=True).variable_specs())
