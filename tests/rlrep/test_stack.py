"""rlrep._stack: a wrong stack is refused with an explanation, not a linker error."""

import subprocess
import sys

import pytest

from rlrep import _stack

GOOD = {"python": "3.11.7", "tensorflow": "2.15.1 (tensorflow-cpu)", "dm-reverb": "0.14.0", "mujoco": "3.17.0",
        "dm-control": "1.0.50", "numpy": "1.26.4", "dm-env": "1.6", "ray": "2.60.0"}


def test_installed_stack_has_no_problems():
  assert _stack.find_problems() == []


@pytest.mark.parametrize("component, version, message", [
    ("python", "3.12.1", "needs Python 3.10 or 3.11"),
    ("numpy", "2.0.2", "numpy<2"),
    ("tensorflow", "2.16.1 (tensorflow)", "links against TensorFlow 2.15"),
    ("tensorflow", "missing", "links against TensorFlow 2.15"),
    ("mujoco", "4.0.0", "mujoco==3.17.0"),
    ("dm-reverb", "0.13.0", "dm-reverb==0.14.0"),
])
def test_each_incompatible_component_is_explained(component, version, message):
  problems = _stack.find_problems({**GOOD, component: version})
  assert len(problems) == 1 and message in problems[0].explanation


def test_python_310_is_supported():
  assert _stack.find_problems({**GOOD, "python": "3.10.13"}) == []


def test_import_refuses_a_wrong_stack_before_loading_tensorflow():
  # A real `import rlrep` in a fresh interpreter whose package metadata reports NumPy 2.
  program = (
      "import importlib.metadata as m, sys\n"
      "real = m.version\n"
      "m.version = lambda name: '2.1.0' if name == 'numpy' else real(name)\n"
      "try:\n"
      "  import rlrep\n"
      "except ImportError as error:\n"
      "  print(type(error).__name__, error)\n"
      "print('tensorflow loaded:', 'tensorflow' in sys.modules)\n")
  result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
  assert "StackError rlrep cannot run on this Python environment" in result.stdout
  assert "NumPy 2.1.0: TensorFlow 2.15 is built against NumPy 1.x" in result.stdout
  assert "scripts/setup.sh" in result.stdout
  assert "tensorflow loaded: False" in result.stdout
