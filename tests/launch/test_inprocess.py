"""In-process mode's Ctrl-C: the first sets the stop signal (no exception inside TensorFlow), a second aborts.

The whole mode runs end to end in tests/launch/test_train.py.
"""

import os
import signal
import time

import pytest

from launch import inprocess
from launch.counter import Counter


def _interrupt_and_wait():
  os.kill(os.getpid(), signal.SIGINT)
  time.sleep(0.2)  # the handler runs in the main thread at its next bytecode


def test_the_first_ctrl_c_asks_to_stop_and_the_second_aborts(capsys):
  counter = Counter()
  with pytest.raises(KeyboardInterrupt):
    with inprocess._ctrl_c_requests_stop(counter):
      _interrupt_and_wait()
      assert counter.stop_reason() == "interrupted (Ctrl-C)"
      assert "Ctrl-C again to abort" in capsys.readouterr().out
      _interrupt_and_wait()


def test_python_s_handler_is_back_afterwards():
  before = signal.getsignal(signal.SIGINT)
  with inprocess._ctrl_c_requests_stop(Counter()):
    assert signal.getsignal(signal.SIGINT) is not before
  assert signal.getsignal(signal.SIGINT) is before


def test_the_second_ctrl_c_aborts_even_when_a_library_had_replaced_python_s_handler(capsys):
  quiet = lambda signum, frame: None  # noqa: E731  (as a library's handler that only logs)
  before = signal.signal(signal.SIGINT, quiet)
  try:
    with pytest.raises(KeyboardInterrupt):
      with inprocess._ctrl_c_requests_stop(Counter()):
        _interrupt_and_wait()
        _interrupt_and_wait()
    assert signal.getsignal(signal.SIGINT) is quiet  # restored on the way out
  finally:
    signal.signal(signal.SIGINT, before)
