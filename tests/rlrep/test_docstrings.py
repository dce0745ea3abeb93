"""The runnable examples in rlrep's docstrings run and print what they claim."""

import doctest
import importlib

import pytest


@pytest.mark.parametrize("module", ["rlrep", "rlrep.replicator", "rlrep.primitives", "rlrep.optim",
                                    "rlrep.testing", "environments.dmc", "environments.rendering"])
def test_docstring_examples(module):
  results = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
  assert results.attempted > 0 and results.failed == 0
