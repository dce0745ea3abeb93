"""rlrep.core: weights are matched to a policy by name, a mismatch refused with every problem named; an agent's
config is recognised by the settings launchers read."""

import dataclasses

import numpy as np
import pytest
import tensorflow as tf

from rlrep import core

SPECS = {"encoder/00/kernel": tf.TensorSpec((3, 3, 9, 8), tf.float32),
         "policy/00/bias": tf.TensorSpec((2,), tf.float32)}


def _params(**changed):
  params = {name: np.zeros(spec.shape, spec.dtype.as_numpy_dtype) for name, spec in SPECS.items()}
  return {**params, **changed}


def test_weights_that_fit_pass_whatever_their_order():
  core.check_params(SPECS, dict(reversed(list(_params().items()))), "the learner's weights")


def test_every_mismatch_is_named_in_one_error():
  params = _params(**{"policy/00/bias": np.zeros(2, np.float64), "policy/01/bias": np.zeros(2, np.float32)})
  del params["encoder/00/kernel"]
  with pytest.raises(ValueError) as error:
    core.check_params(SPECS, params, "the published weights")
  message = str(error.value)
  assert message.startswith("the published weights do not fit the policy: ")
  assert "encoder/00/kernel is missing" in message
  assert "policy/01/bias is not a weight of the policy" in message
  assert "policy/00/bias has shape (2,) and dtype float64, the policy expects (2,) and float32" in message


def test_an_agent_config_is_what_has_every_setting_launchers_read():
  @dataclasses.dataclass(frozen=True)
  class Settings:
    pixels: bool = True
    action_repeat: int = 2
    precision: str = "auto"
    max_replay_size: int = 100
    replay_bytes_per_step: int = 1024
    weights_update_period: int = 10
    OPTION_GROUPS = {"all": ("pixels", "action_repeat", "precision", "max_replay_size", "replay_bytes_per_step",
                             "weights_update_period")}
    EFFICIENCY_SETTINGS = ("precision",)

  assert isinstance(Settings(), core.AgentConfig)
  assert not isinstance(dataclasses.make_dataclass("Lacking", [("pixels", bool, True)])(), core.AgentConfig)
