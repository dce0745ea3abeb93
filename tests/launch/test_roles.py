"""Roles never stall silently: a starved learner and a blocked actor say what replay is waiting for, and the
progress line keeps coming while they wait. Real roles, a real Reverb server, no learner or no actor."""

import logging
import re
import threading
import time

import pytest

import rlrep
from agents.d4pg import D4PGConfig
from launch import roles
from launch.counter import Counter
from launch.experiment import Experiment, RunFailed
from rlrep import replay

TINY = D4PGConfig(image_size=32, render_quality="fast", batch_size=16, hidden_sizes=(32,), conv_channels=8,
                  feature_dim=16, min_replay_size=20, samples_per_insert=8.0, random_frames=0)


@pytest.fixture
def replay_server(tmp_path):
  experiment = Experiment(task="cartpole-swingup", out=str(tmp_path), log_every_s=1.0, agent_config=TINY)
  server = roles.make_replay_server(experiment.make_builder())
  yield experiment, f"localhost:{server.port}"
  server.stop()


def test_a_starved_learner_logs_the_replay_state_and_progress_lines_go_on(replay_server, monkeypatch, caplog):
  monkeypatch.setattr(roles, "LEARNER_STALL_LOG_S", 3.0)
  experiment, address = replay_server
  counter = Counter()
  learner = roles.LearnerRole(experiment, experiment.make_builder(), address, counter, rlrep.make_replicator("cpu:1"))
  threading.Timer(10.0, counter.request_stop, ["test over"]).start()
  with caplog.at_level(logging.WARNING):
    learner.run()  # no actor: replay stays empty
  assert "the learner has had no batch for" in caplog.text
  assert "table replay: 0/1000000 items" in caplog.text and "min_size_to_sample=20" in caplog.text
  progress = [line for line in counter.messages()[0] if line.startswith("frames ")]
  assert len(progress) >= 3  # one per replay poll (2 s) while starved
  assert "learner steps 0 " in progress[-1] and re.search(r"learner ([7-9]\d|100)%", progress[-2]), progress


def test_an_actor_blocked_on_insert_logs_the_rate_limiter_state(replay_server, monkeypatch, caplog):
  monkeypatch.setattr(roles, "ACTOR_STALL_LOG_S", 2.0)
  experiment, address = replay_server
  counter = Counter()
  builder = experiment.make_builder()
  replay.WeightPublisher(replay.connect(address)).publish(0, builder.make_policy().params())  # the learner's part
  actor = threading.Thread(target=roles.run_actor, args=(experiment, builder, address, counter, 0))
  with caplog.at_level(logging.WARNING):
    actor.start()  # no learner: once the rate limiter's insert allowance is spent, inserts block
    deadline = time.monotonic() + 120
    while "replay insert has been blocked for" not in caplog.text and time.monotonic() < deadline:
      time.sleep(0.5)
    counter.request_stop("test over")
    actor.join(timeout=60.0)
  assert not actor.is_alive()
  assert "replay insert has been blocked for" in caplog.text
  assert "table replay: 24/1000000 items" in caplog.text and "samples_per_insert=8" in caplog.text
  assert counter.snapshot()["frames"] >= 40  # the steps before the block were reported


def test_an_actor_waits_for_the_learners_weights_and_stops_with_the_run(replay_server):
  experiment, address = replay_server
  counter = Counter()
  actor = threading.Thread(target=roles.run_actor, args=(experiment, experiment.make_builder(), address, counter, 0))
  actor.start()
  time.sleep(5.0)
  assert counter.snapshot()["frames"] == 0  # no weights published: no step taken
  counter.request_stop("test over")
  actor.join(timeout=30.0)
  assert not actor.is_alive()


def test_an_agent_whose_learner_and_policy_disagree_is_refused_at_start(replay_server):
  experiment, address = replay_server
  builder = experiment.make_builder()
  learner = builder.make_learner(rlrep.make_replicator("cpu:1"), address)
  renamed = dict(learner.policy_params())
  renamed["policy/99/kernel"] = renamed.pop("policy/00/kernel")
  learner.policy_params = lambda: renamed  # an agent bug: a weight published under another name
  with pytest.raises(RunFailed, match="breaks rlrep's interface contract: the learner's weights do not fit the "
                                      "policy: policy/00/kernel is missing; policy/99/kernel is not a weight"):
    roles.check_agent_contract(builder, learner)
