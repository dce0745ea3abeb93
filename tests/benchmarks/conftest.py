"""Running a benchmark script the way its docstring's usage line says, for the benchmarks' smoke tests."""

import pathlib
import re
import subprocess
import sys
from typing import Callable

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _run(script: str, *flags: str) -> str:
  """Runs the command of benchmarks/`script`'s usage line from the repository root with `flags` (a tiny budget)
  and returns what it printed; a non-zero exit fails the test with the end of its stderr."""
  usage = re.search(r"^Usage: (?:taskset -c 0 )?python (\S+)", (ROOT / "benchmarks" / script).read_text(), re.M)
  assert usage and usage[1] == f"benchmarks/{script}", "the usage line runs another path"
  result = subprocess.run([sys.executable, usage[1], *flags], cwd=ROOT, capture_output=True, text=True, timeout=300)
  assert result.returncode == 0, result.stderr[-3000:]
  return result.stdout


@pytest.fixture
def run_benchmark() -> Callable[..., str]:
  return _run
