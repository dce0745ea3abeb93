"""Fixtures shared by the launch tests."""

import signal

import pytest


@pytest.fixture(scope="session", autouse=True)
def ctrl_c_raises():
  """Python's own Ctrl-C handler for the launch tests, whatever pytest inherited. A suite started as a
  background job (`cmd &` in a script, `nohup`) starts with Ctrl-C ignored; `launch.interrupts` rightly
  leaves an ignored signal ignored, and every `rlrep train` a test starts would inherit it, so the tests
  that stop a run with Ctrl-C, in this process or in a child, would wait for a stop that never comes. A
  handler (unlike "ignored") is reset to the default when a child process starts."""
  previous = signal.signal(signal.SIGINT, signal.default_int_handler)
  yield
  signal.signal(signal.SIGINT, previous)
