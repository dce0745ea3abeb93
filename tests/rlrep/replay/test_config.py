"""ReplayConfig refuses settings that would deadlock or never sample, and says why."""

import pytest

from rlrep.replay import ReplayConfig


def test_defaults_are_valid_and_choose_an_error_buffer_of_at_least_two_batches():
  config = ReplayConfig()
  assert config.resolved_error_buffer == 2 * config.batch_size


def test_a_minimum_above_the_maximum_is_refused():
  with pytest.raises(ValueError, match=r"min_replay_size \(2000\) exceeds max_replay_size \(1000\).*wait forever"):
    ReplayConfig(min_replay_size=2000, max_replay_size=1000)


def test_an_error_buffer_smaller_than_a_batch_is_refused_as_a_deadlock():
  with pytest.raises(ValueError, match=r"error_buffer \(100\) is smaller than one batch \(256\).*deadlock"):
    ReplayConfig(batch_size=256, error_buffer=100)


def test_an_error_buffer_smaller_than_samples_per_insert_is_refused():
  with pytest.raises(ValueError, match="use at least 512"):
    ReplayConfig(batch_size=32, samples_per_insert=512, error_buffer=64)


def test_every_problem_is_reported_at_once():
  with pytest.raises(ValueError) as error:
    ReplayConfig(batch_size=0, n_step=0, discount=1.5, frame_stack=0, samples_per_insert=-1, chunk_length=0)
  for field in ("batch_size", "n_step", "discount", "frame_stack", "samples_per_insert", "chunk_length"):
    assert field in str(error.value)


def test_no_rate_limit_is_allowed_for_debugging():
  assert ReplayConfig(samples_per_insert=None, error_buffer=1).resolved_error_buffer == 1
