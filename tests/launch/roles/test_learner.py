"""The learner role never stalls silently (a starved learner says what replay is waiting for while the progress
line keeps coming) and refuses, at start, an agent whose learner and policy disagree on the weights."""

import logging
import re
import threading

import pytest

import rlrep
from launch import roles
from launch.roles.counter import Counter
from launch.experiment import RunFailed
from launch.roles import learner as learner_role


def test_a_starved_learner_logs_the_replay_state_and_progress_lines_go_on(replay_server, monkeypatch, caplog):
  monkeypatch.setattr(learner_role, "LEARNER_STALL_LOG_S", 3.0)
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
  # A learner that is fed waits ~0-1% of the time. Starved, it waits nearly all of each 2 s window, but on a
  # loaded 2-core machine (CI beside a training run) a window measured 67%: the time between waits stretches.
  waiting = [int(share) for line in progress[:-1] for share in re.findall(r"learner (\d+)%", line)]
  assert "learner steps 0 " in progress[-1] and max(waiting, default=0) >= 50, progress


def test_an_agent_whose_learner_and_policy_disagree_is_refused_at_start(replay_server):
  experiment, address = replay_server
  builder = experiment.make_builder()
  learner = builder.make_learner(rlrep.make_replicator("cpu:1"), address, seed=experiment.seed)
  renamed = dict(learner.policy_params())
  renamed["policy/99/kernel"] = renamed.pop("policy/00/kernel")
  learner.policy_params = lambda: renamed  # an agent bug: a weight published under another name
  with pytest.raises(RunFailed, match="breaks rlrep's interface contract: the learner's weights do not fit the "
                                      "policy: policy/00/kernel is missing; policy/99/kernel is not a weight"):
    roles.check_agent_contract(builder, learner)
