"""Learner checkpoints with the run's counters: newest kept, old ones removed, restore reads them back, and a
damaged or unwritable checkpoint never costs the previous one."""

import json
import logging

import pathlib

import numpy as np
import tensorflow as tf

from launch.checkpoints import CheckpointStore


class _TinyLearner:
  """A real tf.train.Checkpoint around one variable, with the save/restore/num_steps a Learner has."""

  def __init__(self):
    self.value = tf.Variable(np.zeros(3, np.float32))
    self.num_steps = 0
    self._checkpoint = tf.train.Checkpoint(value=self.value)

  def save(self, path: str) -> str:
    return self._checkpoint.write(path)

  def restore(self, path: str) -> None:
    self._checkpoint.read(path).assert_existing_objects_matched()


def _counts(steps):
  return {"frames": 10 * steps, "episodes": steps // 2, "learner_steps": steps, "ignored": "not saved"}


def test_restore_returns_the_newest_weights_and_counters(tmp_path):
  store, learner = CheckpointStore(tmp_path / "checkpoints"), _TinyLearner()
  for steps in (5, 9):
    learner.num_steps = steps
    learner.value.assign(np.full(3, steps, np.float32))
    store.save(learner, _counts(steps))
  fresh = _TinyLearner()
  state = CheckpointStore(tmp_path / "checkpoints").restore(fresh)
  assert {k: state[k] for k in ("frames", "episodes", "learner_steps")} == {"frames": 90, "episodes": 4,
                                                                             "learner_steps": 9}
  np.testing.assert_array_equal(fresh.value.numpy(), [9, 9, 9])


def _saved(directory, steps_list, keep=3):
  store, learner = CheckpointStore(directory, keep=keep), _TinyLearner()
  for steps in steps_list:
    learner.num_steps = steps
    learner.value.assign(np.full(3, steps, np.float32))
    store.save(learner, _counts(steps))
  return store


def test_only_the_newest_checkpoints_are_kept(tmp_path):
  store = _saved(tmp_path, (1, 2, 3, 4), keep=2)
  kept = sorted({path.name.split(".")[0] for path in tmp_path.glob("learner-*")})
  assert kept == ["learner-000000003", "learner-000000004"]
  listed = [entry["prefix"] for entry in json.loads((tmp_path / "state.json").read_text())["checkpoints"]]
  assert listed == kept and store.latest()["learner_steps"] == 4


def _data_file(directory, steps):
  return next(directory.glob(f"learner-{steps:09d}.data-*"))


def test_a_truncated_latest_checkpoint_falls_back_to_the_previous_one_and_says_so(tmp_path, caplog):
  store = _saved(tmp_path, (5, 9))
  data = _data_file(tmp_path, 9)
  data.write_bytes(data.read_bytes()[:-4])
  fresh = _TinyLearner()
  with caplog.at_level(logging.WARNING):
    state = store.restore(fresh)
  assert state["learner_steps"] == 5 and state["frames"] == 50
  np.testing.assert_array_equal(fresh.value.numpy(), [5, 5, 5])
  assert "learner-000000009 is damaged" in caplog.text and "using the previous one, learner-000000005" in caplog.text


def test_a_corrupted_file_of_the_same_size_is_found_too(tmp_path):
  store = _saved(tmp_path, (5, 9))
  data = _data_file(tmp_path, 9)
  corrupted = bytearray(data.read_bytes())
  corrupted[-1] ^= 0xFF
  data.write_bytes(bytes(corrupted))
  assert store.latest()["learner_steps"] == 5


def test_no_intact_checkpoint_is_none_with_the_reasons(tmp_path, caplog):
  store = _saved(tmp_path, (5,))
  (tmp_path / "learner-000000005.index").unlink()
  with caplog.at_level(logging.WARNING):
    assert store.latest() is None
  assert "learner-000000005.index is missing" in caplog.text


class _FullDiskLearner(_TinyLearner):
  """Writes part of a checkpoint, then fails as a full disk does."""

  def save(self, path: str) -> str:
    pathlib.Path(path + ".index").write_bytes(b"partial")
    raise OSError(28, "No space left on device")


def test_a_failed_save_is_an_error_message_and_the_previous_checkpoint_stays_usable(tmp_path, caplog):
  store = _saved(tmp_path, (5,))
  failing = _FullDiskLearner()
  failing.num_steps = 9
  with caplog.at_level(logging.ERROR):
    assert store.save(failing, _counts(9)) is None
  assert "learner-000000009 could not be written" in caplog.text and "No space left on device" in caplog.text
  assert "the latest usable one is" in caplog.text and "learner-000000005" in caplog.text
  assert not list(tmp_path.glob("learner-000000009*"))  # no partial files left behind
  assert store.latest()["learner_steps"] == 5


def test_nothing_to_restore_is_none(tmp_path):
  assert CheckpointStore(tmp_path).latest() is None and CheckpointStore(tmp_path).restore(_TinyLearner()) is None
