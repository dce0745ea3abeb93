"""The learner benchmark's Acme side: Acme's own D4PG learner on a network the same size as rlrep's, training."""

import importlib.util
import pathlib
import sys

import numpy as np
import pytest
from dm_env import specs

from agents.d4pg import D4PGConfig
from agents.d4pg.networks import make_networks

_BENCHMARKS = pathlib.Path(__file__).resolve().parents[2] / "benchmarks"
_SPEC = importlib.util.spec_from_file_location("benchmarks_acme_d4pg", _BENCHMARKS / "acme_d4pg.py")
acme_d4pg = sys.modules[_SPEC.name] = importlib.util.module_from_spec(_SPEC)  # benchmarks/ holds scripts
_SPEC.loader.exec_module(acme_d4pg)

PIXELS = (84, 84, 9)
ACTIONS = specs.BoundedArray((6,), np.float32, -1.0, 1.0, name="action")


def test_acme_networks_have_as_many_parameters_as_rlreps_default_pixel_networks():
  rlrep_networks = make_networks({"pixels": specs.BoundedArray(PIXELS, np.uint8, 0, 255)}, ACTIONS, D4PGConfig())
  rlrep_count = sum(int(np.prod(v.shape)) for module in (rlrep_networks.encoder, rlrep_networks.policy,
                                                           rlrep_networks.critic) for v in module.variables)
  acme_networks = acme_d4pg.make_networks(ACTIONS, D4PGConfig())
  acme_d4pg.create_variables(acme_networks, PIXELS)
  assert acme_d4pg.parameter_count(acme_networks) == rlrep_count == 2_620_527


def test_acme_learner_steps_change_its_encoder_and_keep_it_finite():
  step, online = acme_d4pg.acme_learner(acme_d4pg.random_batch(8), ACTIONS, D4PGConfig(batch_size=8))
  before = [variable.numpy().copy() for variable in online["observation"].variables]
  for _ in range(3):
    step()
  after = [variable.numpy() for variable in online["observation"].variables]
  assert all(np.isfinite(value).all() for value in after)
  assert all(np.abs(new - old).max() > 0 for new, old in zip(after, before))


def test_a_missing_acme_is_an_error_with_the_install_command(monkeypatch):
  monkeypatch.setitem(sys.modules, "acme", None)  # None in sys.modules makes `import acme` fail
  with pytest.raises(ImportError, match="acme-requirements.txt"):
    acme_d4pg.load_acme()
