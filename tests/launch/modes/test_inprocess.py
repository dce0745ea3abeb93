"""In-process mode's Ctrl-C or SIGTERM: the first sets the stop signal (no exception inside TensorFlow), a
second Ctrl-C aborts; and its device setup. The signal handling itself is tested in test_interrupts.py; the whole
mode runs end to end (signals included) in tests/launch/modes/test_train.py.
"""

import os
import signal
import time

import pytest
from tensorflow.python.eager import context

import rlrep
from agents.d4pg import D4PGConfig
from launch import roles
from launch.modes import inprocess, interrupts
from launch.roles.counter import Counter
from launch.experiment import Experiment
from launch.roles import devices


def _signal_and_wait(number):
  os.kill(os.getpid(), number)
  time.sleep(0.2)  # the handler runs in the main thread at its next bytecode


@pytest.mark.parametrize("number, reason", [(signal.SIGINT, "interrupted (Ctrl-C)"),
                                            (signal.SIGTERM, "interrupted (SIGTERM)")])
def test_the_first_signal_asks_every_role_to_stop_and_a_second_ctrl_c_aborts(capsys, number, reason):
  counter = Counter()
  with pytest.raises(KeyboardInterrupt):
    with interrupts.stop_requests(inprocess._request_stop(counter)):
      _signal_and_wait(number)
      assert counter.stop_reason() == reason
      assert f"{reason}: stopping every role" in capsys.readouterr().out
      _signal_and_wait(signal.SIGINT)


def test_the_learner_grows_gpu_memory_before_its_devices_exist_and_actors_act_on_the_cpu(monkeypatch, tmp_path):
  """One process holds every role: GPU memory growth is set before the replicator creates the learner's devices
  (EGL rendering on the GPU needs what TensorFlow leaves), and the actors' and evaluator's TensorFlow runs under
  a CPU device scope. The roles here only record where they run; the run's real roles run in test_train.py."""
  calls, scopes = [], {}

  def record_scope(name):
    def role(*args, **kwargs):
      scopes[name] = context.context().device_name
      return {}
    return role

  class Learner:
    def __init__(self, experiment, builder, address, counter, replicator):
      self._counter = counter

    def run(self):
      deadline = time.monotonic() + 60
      while len(scopes) < 2 and time.monotonic() < deadline:  # the actor and the evaluator have run
        time.sleep(0.05)
      self._counter.request_stop("test over")

  make_replicator = rlrep.make_replicator
  monkeypatch.setattr(devices, "grow_gpu_memory", lambda: calls.append("grow_gpu_memory"))
  monkeypatch.setattr(rlrep, "make_replicator", lambda spec: calls.append("make_replicator") or make_replicator(spec))
  monkeypatch.setattr(roles, "LearnerRole", Learner)
  monkeypatch.setattr(roles, "run_actor", record_scope("actor-0"))
  monkeypatch.setattr(roles, "run_evaluator", record_scope("evaluator"))
  inprocess.run(Experiment(task="cartpole-swingup", out=str(tmp_path / "run"),
                           agent_config=D4PGConfig.for_state_features()))
  assert calls == ["grow_gpu_memory", "make_replicator"]
  assert scopes == {"actor-0": "/job:localhost/replica:0/task:0/device:CPU:0",
                    "evaluator": "/job:localhost/replica:0/task:0/device:CPU:0"}
