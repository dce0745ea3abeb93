"""The README's two commands are the ones CI and users run."""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _readme_commands() -> list[str]:
  return re.findall(r"```bash\n(.+?)\n```", (ROOT / "README.md").read_text())


def test_ci_runs_the_readme_test_command_verbatim():
  test_command = next(c for c in _readme_commands() if "pytest" in c)
  ci_lines = (ROOT / ".ci" / "run").read_text().splitlines()
  assert test_command in ci_lines


def test_readme_has_one_setup_and_run_command_for_the_main_job():
  main_command = _readme_commands()[0]
  assert main_command.startswith("bash scripts/setup.sh && .venv/bin/rlrep ")


def test_the_main_job_is_a_short_inprocess_pixel_training_run():
  from launch import cli
  arguments = _readme_commands()[0].split(".venv/bin/rlrep ", 1)[1].split()
  parsed = vars(cli.build_parser().parse_args(arguments))  # options not given are absent
  assert parsed["command"] == "train" and parsed.get("mode", "inprocess") in ("inprocess", "local")
  assert parsed.get("pixels", True) and parsed["frames"] <= 50_000 and parsed["overwrite"]  # re-runnable
