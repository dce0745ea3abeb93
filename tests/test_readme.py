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
  from launch.cli import commands
  arguments = _readme_commands()[0].split(".venv/bin/rlrep ", 1)[1].split()
  parsed = vars(commands.build_parser().parse_args(arguments))  # options not given are absent
  assert parsed["command"] == "train" and parsed.get("mode", "inprocess") in ("inprocess", "local")
  assert parsed.get("pixels", True) and parsed["frames"] <= 50_000 and parsed["overwrite"]  # re-runnable


MAX_LINES = 250
MAX_LINE_LENGTH = 120


def test_the_readme_is_short_with_short_lines_and_no_history_tags():
  text = (ROOT / "README.md").read_text()
  lines = text.splitlines()
  commands = set(_readme_commands())  # one line each, as the tests above read them: exempt from the length limit
  assert len(lines) <= MAX_LINES, f"README.md has {len(lines)} lines; keep it to {MAX_LINES}"
  long_lines = [number for number, line in enumerate(lines, 1)
                if len(line) > MAX_LINE_LENGTH and line not in commands]
  assert not long_lines, f"README.md lines over {MAX_LINE_LENGTH} characters: {long_lines}"
  tags = re.findall(r"(?i)\b(?:session|issue)s? \d+", text)
  assert not tags, f"README.md names history ({tags}): say what is true now, without session or issue numbers"
