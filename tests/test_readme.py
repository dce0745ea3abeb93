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
