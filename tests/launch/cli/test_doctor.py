"""`rlrep doctor`, in a fresh process as a user runs it: a pass on this machine, and on a machine that cannot
render, a failure that says what to install."""

import os
import subprocess
import sys

from rlrep import precision


def _doctor(environ=os.environ) -> subprocess.CompletedProcess:
  return subprocess.run([sys.executable, "-m", "launch.cli", "doctor"], capture_output=True, text=True,
                        timeout=300, env=environ)


def test_doctor_passes_on_this_machine_and_reports_versions_render_and_devices():
  result = _doctor()
  assert result.returncode == 0, result.stdout + result.stderr
  for expected in ("tensorflow  2.15", "dm-reverb   0.14.0", "render      ok", "tf devices  CPU:0",
                   "All checks passed"):
    assert expected in result.stdout
  flags = precision.read_cpu_flags()
  native = bool(flags & {"amx_bf16", "avx512_bf16"})
  line = next(line for line in result.stdout.splitlines() if line.startswith("  precision"))
  assert f"computes the learner in {'bfloat16' if native else 'float32'} on CPU" in line, line


def test_a_machine_that_cannot_render_is_told_what_to_install():
  # GLFW needs a display: without one, MuJoCo's context fails as it does where the GL libraries are missing.
  environ = {name: value for name, value in os.environ.items() if name not in ("DISPLAY", "WAYLAND_DISPLAY")}
  result = _doctor({**environ, "MUJOCO_GL": "glfw"})
  assert result.returncode == 1, result.stdout + result.stderr
  assert "render      FAILED" in result.stdout and "PROBLEM rendering: install the GL libraries" in result.stdout
  assert "All checks passed" not in result.stdout


def test_a_broken_stack_is_reported_with_the_fix_and_exit_1(tmp_path):
  """NumPy 2 made visible to package metadata (a dist-info first on the path) breaks the stack as installing it
  would: the doctor, which loads nothing of the stack to start, reports it instead of a traceback."""
  (tmp_path / "numpy-2.0.0.dist-info").mkdir()
  (tmp_path / "numpy-2.0.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: numpy\nVersion: 2.0.0\n")
  result = _doctor({**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path),
                                                                                os.environ.get("PYTHONPATH")]))})
  assert result.returncode == 1, result.stdout + result.stderr
  assert "  numpy       2.0.0" in result.stdout
  assert "PROBLEM rlrep cannot run on this Python environment:\n  - NumPy 2.0.0: TensorFlow 2.15 is built against" \
      in result.stdout
  assert "Traceback" not in result.stderr, result.stderr[-2000:]
