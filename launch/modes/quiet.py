"""Keeps third-party chatter off the terminal of an in-process run, and in a log file instead.

Reverb's C++ server, absl's Python logging (dm_control's MuJoCo deprecation notices among them), gRPC and
TensorFlow's C++ runtime write informational lines to the process's stderr (file descriptor 2) before and during a
run; between them they hide rlrep's own lines. `third_party_output_to(log)` points descriptor 2 at a pipe whose
reader thread appends every line to `log` and passes on to the terminal only the lines that are not such chatter
(`is_chatter`): errors, tracebacks, rlrep's warnings and anything unrecognised still show. rlrep's progress lines
go to stdout and are never touched. `--verbose` passes everything through.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import re
import sys
import threading
from typing import Iterator

# Lines that inform but ask nothing of the user; warnings and errors of rlrep's own never match.
CHATTER = re.compile(r"""^(?:
    \[reverb/cc/[^\]]*\]                                  # Reverb's C++ log lines
  | (?:INFO|WARNING):absl:                                # absl's Python logging (dm_control, Reverb, MuJoCo)
  | [IW]\d{4}\ \d\d:\d\d:\d\d\.\d+\ +\d+\ \S+:\d+\]       # C++ absl / glog info and warnings (gRPC, Ray core)
  | \d{4}-\d\d-\d\d\ \d\d:\d\d:\d\d\.\d+:\ [IW]\ \S+:\d+\] # TensorFlow's C++ info and warnings
)""", re.VERBOSE)
# A Python warning is its header line, then the source line it points at, indented.
DEPRECATION_WARNING = re.compile(r"^\S.*:\d+: (?:Deprecation|PendingDeprecation|Future)Warning: ")
DRAIN_TIMEOUT_S = 5.0


def is_chatter(line: str) -> bool:
  """Whether `line` (one line of stderr, without its newline) is third-party information or deprecation notice.

  >>> is_chatter("[reverb/cc/client.cc:165] Sampler and server are owned by the same process (2826) so Table "
  ...            "weights is accessed directly without gRPC.")
  True
  >>> is_chatter("WARNING:absl:compiler attribute 'settotalmass' is deprecated and will be removed")
  True
  >>> is_chatter("WARNING:root:dm_control was imported before rlrep chose a GL backend; using MUJOCO_GL=egl.")
  False
  >>> is_chatter("rlrep train: error: invalid experiment")
  False
  """
  return bool(CHATTER.match(line) or DEPRECATION_WARNING.match(line))


class _Filter:
  """Splits what arrives on a pipe into lines, logs each, and forwards to `terminal` the ones worth showing."""

  def __init__(self, read_fd: int, terminal_fd: int, log: pathlib.Path, verbose: bool):
    self._read_fd, self._terminal_fd, self._verbose = read_fd, terminal_fd, verbose
    log.parent.mkdir(parents=True, exist_ok=True)
    self._log = log.open("ab")
    self._in_warning = False  # the last line was a dropped warning's header: its indented source line follows
    self.thread = threading.Thread(target=self._pump, name="third-party-output", daemon=True)

  def _pump(self) -> None:
    pending = b""
    try:
      while chunk := os.read(self._read_fd, 65536):
        *lines, pending = (pending + chunk).split(b"\n")
        for line in lines:
          self._handle(line + b"\n")
        self._log.flush()
      if pending:
        self._handle(pending)
    finally:  # the pipe has no writer left: the terminal descriptor is back in place, so this copy can go
      self._log.close()
      os.close(self._read_fd)
      os.close(self._terminal_fd)

  def _handle(self, line: bytes) -> None:
    self._log.write(line)
    text = line.decode(errors="replace").rstrip("\n")
    follows_warning, self._in_warning = self._in_warning, bool(DEPRECATION_WARNING.match(text))
    if self._verbose or not (is_chatter(text) or (follows_warning and text[:1].isspace())):
      os.write(self._terminal_fd, line)


@contextlib.contextmanager
def third_party_output_to(log: pathlib.Path, verbose: bool = False) -> Iterator[None]:
  """Within the block, every line this process (and any process it starts) writes to stderr is appended to
  `log`, and only those that are not chatter reach the terminal (all of them with `verbose`)."""
  sys.stderr.flush()
  terminal_fd = os.dup(2)
  read_fd, write_fd = os.pipe()
  flow = _Filter(read_fd, terminal_fd, log, verbose)
  os.dup2(write_fd, 2)
  os.close(write_fd)
  flow.thread.start()
  try:
    yield
  finally:
    sys.stderr.flush()
    os.dup2(terminal_fd, 2)  # the pipe's last writer here closes: the reader sees its end
    # A process started within the block may still hold the pipe: the thread then drains it in the background.
    flow.thread.join(DRAIN_TIMEOUT_S)
