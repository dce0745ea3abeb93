"""The learner role never stalls silently, and refuses an agent whose learner and policy disagree. Real roles, a
real Reverb server, no actor."""

import logging
import re
import threading
import time

import pytest

import rlrep
from launch.counter import Counter
from launch.experiment import RunFailed
from launch.roles import learner as learner_role


def test_a_starved_learner_logs_the_replay_state_and_progress_lines_go_on(replay_server, monkeypatch, caplog):
  monkeypatch.setattr(learner_role, "LEARNER_STALL_LOG_S", 3.0)
  experiment, address = replay_server
  counter = Counter()
  learner = learner_role.LearnerRole(experiment, experiment.make_builder(), address, counter, rlrep.make_replicator("cpu:1"))

  def progress():
    return [line for line in counter.messages()[0] if line.startswith("frames ")]

  def stop_after_some_progress_lines():  # the first call compiles the update, which takes a while
    deadline = time.monotonic() + 120
    while len(progress()) < 5 and time.monotonic() < deadline:
      time.sleep(0.5)
    counter.request_stop("test over")

  threading.Thread(target=stop_after_some_progress_lines, daemon=True).start()
  with caplog.at_level(logging.WARNING):
    learner.run()  # no actor: replay stays empty
  assert "the learner has had no batch for" in caplog.text
  assert "table replay: 0/1000000 items" in caplog.text and "min_size_to_sample=20" in caplog.text
  progress = progress()
  assert len(progress) >= 5  # one per replay poll (2 s) while starved
  shares = [int(re.search(r"learner (\d+)%", line).group(1)) for line in progress]
  assert all("learner steps 0 " in line for line in progress) and max(shares[1:]) >= 60, progress


def test_an_agent_whose_learner_and_policy_disagree_is_refused_at_start(replay_server):
  experiment, address = replay_server
  builder = experiment.make_builder()
  learner = builder.make_learner(rlrep.make_replicator("cpu:1"), address)
  renamed = dict(learner.policy_params())
  renamed["policy/99/kernel"] = renamed.pop("policy/00/kernel")
  learner.policy_params = lambda: renamed  # an agent bug: a weight published under another name
  with pytest.raises(RunFailed, match="breaks rlrep's interface contract: the learner's weights do not fit the "
                                      "policy: policy/00/kernel is missing; policy/99/kernel is not a weight"):
    learner_role.check_agent_contract(builder, learner)
