"""The learner profile's reading of oneDNN's verbose lines: kernel times by kind, other lines ignored."""

import doctest
import importlib.util
import pathlib
import subprocess
import sys

import pytest

_PATH = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "learner_profile.py"
_SPEC = importlib.util.spec_from_file_location("benchmarks_learner_profile", _PATH)  # benchmarks/ holds scripts
learner_profile = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(learner_profile)


def test_docstring_examples():
  assert doctest.testmod(learner_profile).failed == 0


def test_every_convolution_direction_and_product_kernel_has_its_kind():
  lines = [f"onednn_verbose,exec,cpu,{primitive},impl,{propagation},src,,shape,{ms}" for primitive, propagation, ms in [
      ("convolution", "forward_training", 1.0), ("convolution", "forward_inference", 2.0),
      ("convolution", "backward_data", 4.0), ("convolution", "backward_weights", 8.0),
      ("inner_product", "forward_training", 16.0), ("matmul", "undef", 32.0), ("reorder", "undef", 64.0),
      ("eltwise", "forward_training", 128.0)]]
  assert learner_profile.kernel_times(lines) == {
      "convolution forward": 3.0, "convolution data gradient": 4.0, "convolution weight gradient": 8.0,
      "matmul": 48.0, "reorder": 64.0, "eltwise": 128.0}
  assert set(learner_profile.KERNEL_KINDS) < set(learner_profile.kernel_times(lines))


def test_a_line_without_a_time_is_refused_rather_than_counted_as_zero():
  with pytest.raises(ValueError):
    learner_profile.kernel_times(["onednn_verbose,exec,cpu,matmul,brg,undef,src,,shape,"])


def test_quiet_stdout_drops_what_native_code_prints_and_keeps_the_report():
  script = ("import os, importlib.util\n"
            f"spec = importlib.util.spec_from_file_location('profile', {str(_PATH)!r})\n"
            "module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)\n"
            "report = module.quiet_stdout()\n"
            "os.write(1, b'onednn_verbose,exec,cpu,matmul,brg,undef,src,,shape,1.0\\n')\n"
            "print('swallowed too')\n"
            "print('the table', file=report)\n")
  result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
  assert result.stdout == "the table\n"
