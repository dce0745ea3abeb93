"""In-process mode's Ctrl-C or SIGTERM: the first sets the stop signal (no exception inside TensorFlow), a
second Ctrl-C aborts. The signal handling itself is tested in test_interrupts.py; the whole mode runs end to
end (signals included) in tests/launch/test_train.py.
"""

import os
import signal
import time

import pytest

from launch import inprocess, interrupts
from launch.counter import Counter


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
