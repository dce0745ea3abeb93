"""Fixtures shared by the launch tests."""

import signal

import pytest


@pytest.fixture
def ctrl_c_raises():
  """Python's own Ctrl-C handler during a test, whatever this process inherited (a background job starts
  with Ctrl-C ignored, which `launch.interrupts` rightly leaves alone)."""
  previous = signal.signal(signal.SIGINT, signal.default_int_handler)
  yield
  signal.signal(signal.SIGINT, previous)
