"""The `rlrep` command line: every command's parser and the glue to the module that does its work
(`commands.py`), options generated from config dataclasses (`options.py`), and the two commands that only check
this machine: `rlrep doctor` (`doctor.py`) and `rlrep rollout` (`rollout.py`).

`rlrep` (the console script) and `python -m launch.cli` both run `main`.
"""

from launch.cli.commands import main

__all__ = ["main"]
