"""Stopping a run from outside: Ctrl-C, or SIGTERM from `kill`, a batch scheduler or Kubernetes deleting a pod.

Either signal asks the run to stop the way its frame budget would: every role stops, the learner writes a
final checkpoint, the evaluator a final evaluation and the summary. A second signal of either kind aborts
at once (Ctrl-C raises KeyboardInterrupt, SIGTERM terminates), for a run that does not stop fast enough.
A signal the process was started ignoring (a shell's background job ignores Ctrl-C) stays ignored.

>>> import os, signal
>>> reasons = []
>>> with stop_requests(reasons.append):
...   os.kill(os.getpid(), signal.SIGTERM)
>>> reasons
['interrupted (SIGTERM)']
"""

from __future__ import annotations

import contextlib
import signal
import threading
from typing import Callable, Iterator

SIGNAL_NAMES = {signal.SIGINT: "Ctrl-C", signal.SIGTERM: "SIGTERM"}
SECOND_SIGNAL = {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: signal.SIG_DFL}


@contextlib.contextmanager
def stop_requests(on_stop: Callable[[str], None]) -> Iterator[None]:
  """While inside, the first Ctrl-C or SIGTERM calls `on_stop(reason)` (e.g. "interrupted (Ctrl-C)"), which
  may request a stop or raise; later ones abort (Python's own handlers: not the ones before, which a library
  such as Ray may have replaced with handlers that do not raise). Outside the main thread it does nothing:
  signal handlers belong to the main thread."""
  if threading.current_thread() is not threading.main_thread():
    yield
    return
  handled = [number for number in SIGNAL_NAMES if signal.getsignal(number) is not signal.SIG_IGN]

  def first_signal(number, frame):
    for each in handled:
      signal.signal(each, SECOND_SIGNAL[each])
    on_stop(f"interrupted ({SIGNAL_NAMES[number]})")

  previous = {number: signal.signal(number, first_signal) for number in handled}
  try:
    yield
  finally:
    for number, handler in previous.items():
      signal.signal(number, handler)
