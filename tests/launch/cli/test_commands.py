"""The `rlrep` command line: help, option groups, first lines and errors for bad input (each command's own
behaviour is tested beside its module: test_doctor.py, test_rollout.py, modes/test_train.py,
results/test_compare.py)."""

import subprocess
import sys

import pytest

from launch import cli
from launch.cli import commands
from launch.cluster.config import ClusterConfig
from launch.experiment import Experiment


def _rlrep(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
  return subprocess.run([sys.executable, "-m", "launch.cli", *args], capture_output=True, text=True,
                        timeout=timeout)


def test_help_lists_the_commands():
  result = _rlrep("--help")
  assert result.returncode == 0
  assert "doctor" in result.stdout and "rollout" in result.stdout


def test_an_option_whose_help_names_its_default_does_not_get_a_second_one():
  result = _rlrep("compare", "--help")
  assert result.returncode == 0
  assert "(default: the tasks compared)" in result.stdout and "(default: None)" not in result.stdout
  assert "(default: comparison.png)" in result.stdout  # the others still get theirs


def test_bad_task_is_a_clear_error_with_exit_code_2(capsys):
  assert cli.main(["rollout", "--task", "cheetah-rnu", "--out", "unused"]) == 2
  assert "Did you mean cheetah-run" in capsys.readouterr().err


def test_cluster_settings_have_their_own_help_group():
  help_text = commands.build_parser()._subparsers._group_actions[0].choices["train"].format_help()
  before, after = help_text.split("\nrun:\n")[1].split("\ncluster mode (--mode cluster only):\n")  # no usage
  group = after.split("\n\n")[0]
  for flag in ("--image", "--namespace", "--tpu-accelerator", "--tpu-topology", "--gpu-accelerator", "--volume-claim",
               "--volume-bucket", "--service-account", "--dry-run", "--detach"):
    assert f"{flag} " in group and f"{flag} " not in before
  assert "--actors " in before and "--actors " not in after


def test_the_first_lines_list_cluster_settings_only_in_cluster_mode():
  for mode in ("inprocess", "local", "cluster"):
    experiment = Experiment(mode=mode, cluster=ClusterConfig(volume_bucket="team-runs"))
    summary = commands.settings_summary(experiment, {"mode": "flag", "volume_bucket": "flag"})
    for setting in ("volume_bucket=team-runs", "image=rlrep:0.1.0", "namespace=default", "service_account=rlrep"):
      assert (setting in summary) == (mode == "cluster"), (mode, setting)
    assert "actors=1" in summary and "batch_size=" in summary
    assert summary.count(" seed=") == 1  # the run's one seed


@pytest.mark.parametrize("arguments, shown", [(["--help"], "rollout"), (["compare", "--help"], "--equal-updates"),
                                              (["report", "--help"], "--reference-dir"), (["doctor", "--help"], ""),
                                              (["sweep", "--help"], "--max-concurrent")])
def test_help_and_the_light_commands_load_no_tensorflow(arguments, shown):
  """Only the command given builds its options: `rlrep --help` and `rlrep compare --help` import no agent."""
  # Refuses TensorFlow outright: a loaded TensorFlow would take seconds to find.
  code = ("import sys\n"
          "class Refuse:\n"
          "  def find_spec(self, name, *_):\n"
          "    if name.split('.')[0] == 'tensorflow':\n"
          "      raise ImportError('tensorflow imported')\n"
          "sys.meta_path.insert(0, Refuse())\n"
          "from launch import cli\n"
          f"code = cli.main({arguments!r})\n"
          "sys.exit(code or 'tensorflow' in sys.modules)\n")
  result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
  assert result.returncode == 0, result.stderr[-2000:]
  assert shown in result.stdout
