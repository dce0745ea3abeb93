"""Stop requests by signal: the first Ctrl-C or SIGTERM calls back, the next one aborts, ignored stays ignored."""

import os
import signal
import threading

import pytest

from launch.modes import interrupts


def test_the_first_signal_requests_a_stop_and_the_second_ctrl_c_raises():
  reasons = []
  with interrupts.stop_requests(reasons.append):
    os.kill(os.getpid(), signal.SIGINT)
    assert reasons == ["interrupted (Ctrl-C)"]
    with pytest.raises(KeyboardInterrupt):
      os.kill(os.getpid(), signal.SIGINT)


def test_after_the_first_signal_sigterm_terminates_as_usual():
  with interrupts.stop_requests(lambda reason: None):
    os.kill(os.getpid(), signal.SIGTERM)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_the_handlers_before_come_back_afterwards():
  before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
  with interrupts.stop_requests(lambda reason: None):
    assert signal.getsignal(signal.SIGINT) is not before[0]
  assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before


def test_a_second_ctrl_c_aborts_even_when_a_library_had_replaced_python_s_handler():
  quiet = lambda signum, frame: None  # noqa: E731  (as a library's handler that only logs; Ray's, for one)
  before = signal.signal(signal.SIGINT, quiet)
  try:
    with pytest.raises(KeyboardInterrupt):
      with interrupts.stop_requests(lambda reason: None):
        os.kill(os.getpid(), signal.SIGINT)
        os.kill(os.getpid(), signal.SIGINT)
    assert signal.getsignal(signal.SIGINT) is quiet  # restored on the way out
  finally:
    signal.signal(signal.SIGINT, before)


def test_a_signal_ignored_at_the_start_stays_ignored():
  previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # as in a shell's background job
  try:
    reasons = []
    with interrupts.stop_requests(reasons.append):
      os.kill(os.getpid(), signal.SIGINT)
      assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    assert reasons == []
  finally:
    signal.signal(signal.SIGINT, previous)


def test_outside_the_main_thread_nothing_is_installed():
  seen = []
  thread = threading.Thread(target=lambda: seen.append(
      interrupts.stop_requests(lambda reason: None).__enter__() or signal.getsignal(signal.SIGTERM)))
  before = signal.getsignal(signal.SIGTERM)
  thread.start()
  thread.join()
  assert seen == [before]
