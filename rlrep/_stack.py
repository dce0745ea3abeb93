"""Checks that the installed stack is one rlrep can run on, before anything heavy is imported.

A wrong stack otherwise fails far from its cause: Reverb 0.14 with any TensorFlow but 2.15 dies with an
undefined-symbol linker error, TF 2.15 with NumPy 2 fails inside TF's C++ converters, and mujoco 4 breaks
dm-control 1.0.50 on its first model load. Reading package metadata costs milliseconds and imports nothing,
so `import rlrep` runs these checks first and refuses with an explanation and a fix.
"""

from __future__ import annotations

import dataclasses
import sys
from importlib import metadata

SUPPORTED_PYTHON = ((3, 10), (3, 11))
TENSORFLOW_DISTRIBUTIONS = ("tensorflow-cpu", "tensorflow", "tensorflow-tpu", "tf-nightly")
REQUIRED_TF_SERIES = "2.15"
REQUIRED_REVERB = "0.14.0"
SETUP_HINT = "Run `bash scripts/setup.sh` from the rlrep checkout to install the tested set (constraints.txt)."


@dataclasses.dataclass(frozen=True)
class StackProblem:
  component: str
  found: str
  explanation: str


class StackError(ImportError):
  """The Python environment cannot run rlrep; the message lists each problem and how to fix it."""

  def __init__(self, problems: list[StackProblem], versions: dict[str, str]):
    self.problems = problems
    self.versions = versions
    lines = ["rlrep cannot run on this Python environment:"]
    lines += [f"  - {p.component} {p.found}: {p.explanation}" for p in problems]
    lines.append(SETUP_HINT)
    super().__init__("\n".join(lines))


def _version(distribution: str) -> str | None:
  try:
    return metadata.version(distribution)
  except metadata.PackageNotFoundError:
    return None


def installed_tensorflow() -> tuple[str, str] | None:
  """(distribution name, version) of the installed TensorFlow, or None."""
  for name in TENSORFLOW_DISTRIBUTIONS:
    version = _version(name)
    if version is not None:
      return name, version
  return None


def installed_versions() -> dict[str, str]:
  """Versions of the components rlrep depends on, 'missing' where absent."""
  tensorflow = installed_tensorflow()
  versions = {
      "python": ".".join(map(str, sys.version_info[:3])),
      "tensorflow": f"{tensorflow[1]} ({tensorflow[0]})" if tensorflow else "missing",
  }
  for name in ("dm-reverb", "mujoco", "dm-control", "numpy", "dm-env", "ray"):
    versions[name] = _version(name) or "missing"
  return versions


def _major_minor(version: str) -> tuple[int, int]:
  parts = version.split(".")
  return int(parts[0]), int("".join(c for c in parts[1] if c.isdigit()) or 0)


def find_problems(versions: dict[str, str] | None = None) -> list[StackProblem]:
  """Every reason the given (default: installed) versions cannot run rlrep; empty when all is well."""
  versions = versions or installed_versions()
  problems = []
  python = _major_minor(versions["python"])
  if python not in SUPPORTED_PYTHON:
    problems.append(StackProblem(
        "Python", versions["python"],
        "rlrep needs Python 3.10 or 3.11: dm-reverb 0.14.0 and TensorFlow 2.15 publish no wheels for other versions."))
  numpy = versions["numpy"]
  if numpy == "missing" or _major_minor(numpy)[0] >= 2:
    problems.append(StackProblem(
        "NumPy", numpy, "TensorFlow 2.15 is built against NumPy 1.x; install `numpy<2`."))
  tensorflow = versions["tensorflow"]
  if tensorflow == "missing" or not tensorflow.startswith(REQUIRED_TF_SERIES + "."):
    problems.append(StackProblem(
        "TensorFlow", tensorflow,
        f"dm-reverb {REQUIRED_REVERB} links against TensorFlow {REQUIRED_TF_SERIES}; any other version fails "
        f"with a linker error. Install `tensorflow-cpu~={REQUIRED_TF_SERIES}.0`."))
  if versions["dm-reverb"] != REQUIRED_REVERB:
    problems.append(StackProblem(
        "dm-reverb", versions["dm-reverb"], f"rlrep is tested with dm-reverb=={REQUIRED_REVERB} only."))
  mujoco = versions["mujoco"]
  if mujoco == "missing" or _major_minor(mujoco)[0] >= 4:
    problems.append(StackProblem(
        "mujoco", mujoco,
        "dm-control 1.0.50 needs mujoco 3.x (mujoco 4 removed MjModel.flex_vertedge); install `mujoco==3.17.0`."))
  if versions["dm-control"] == "missing":
    problems.append(StackProblem("dm-control", "missing", "install `dm-control==1.0.50`."))
  return problems


def require_compatible_stack() -> None:
  """Raises StackError when the installed stack cannot run rlrep."""
  versions = installed_versions()
  problems = find_problems(versions)
  if problems:
    raise StackError(problems, versions)
