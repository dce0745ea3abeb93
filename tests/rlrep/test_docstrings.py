"""The runnable examples in every module's docstrings run and print what they claim."""

import doctest
import importlib
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODULES = sorted(".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
                 for package in ("rlrep", "agents", "environments", "launch")
                 for path in (ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("module", MODULES)
def test_docstring_examples(module):
  results = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
  assert results.failed == 0


def test_the_library_modules_carry_examples():
  examples = {module for module in MODULES
              if doctest.DocTestFinder().find(importlib.import_module(module)) and any(
                  test.examples for test in doctest.DocTestFinder().find(importlib.import_module(module)))}
  assert {"rlrep", "rlrep.replicator", "rlrep.primitives", "rlrep.optim", "rlrep.testing", "environments.dmc",
          "agents.d4pg.presets", "agents.actor_critic.acting", "launch.cli.commands"} <= examples
