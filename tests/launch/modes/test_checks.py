"""The checks `rlrep train` makes before anything starts (each bad input's message end to end: test_train.py)."""

import dataclasses

import pytest

from agents.d4pg import D4PGConfig
from launch.experiment import Experiment
from launch.modes import checks


def test_the_precision_is_chosen_for_this_machines_learner_devices_before_the_run_starts():
  from rlrep import precision
  native = bool(precision.read_cpu_flags() & set(precision.CPU_BFLOAT16_FLAGS))
  auto = checks.choose_precision(Experiment())  # replicas cpu:1, precision auto
  assert auto.precision == ("bfloat16" if native else "float32") and auto.reason.startswith("auto: this CPU has")
  float32 = dataclasses.replace(Experiment().agent_config, precision="float32")
  assert checks.choose_precision(Experiment(agent_config=float32)).precision == "float32"
  assert checks.choose_precision(Experiment(mode="cluster")) is None  # decided on the learner's own devices


def test_a_replay_too_large_names_the_memory_it_was_checked_against_and_moves_only_off_this_machine():
  huge = Experiment(frames=100_000_000, agent_config=D4PGConfig(max_replay_size=100_000_000))  # 2.2 TB
  with pytest.raises(ValueError, match=r"of the [\d.]+ GB of memory on this machine: .*\(--mode cluster\)\.$"):
    checks.check_replay_fits(huge)
  big = Experiment(frames=4_000_000, agent_config=D4PGConfig(max_replay_size=2_000_000))
  with pytest.raises(ValueError, match=r"of the 17\.2 GB of memory of the replay's pod: lower --max-replay-size to "
                                       r"at most 619,317 \(or --image-size\)\.$"):
    checks.check_replay_fits(big, memory_bytes=16 * 2**30, where="of the replay's pod")
