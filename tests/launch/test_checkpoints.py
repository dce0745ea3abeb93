"""Learner checkpoints with the run's counters: newest kept, old ones removed, restore reads them back."""

import json

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


def test_only_the_newest_checkpoints_are_kept(tmp_path):
  store, learner = CheckpointStore(tmp_path, keep=2), _TinyLearner()
  for steps in (1, 2, 3, 4):
    learner.num_steps = steps
    store.save(learner, _counts(steps))
  kept = sorted({path.name.split(".")[0] for path in tmp_path.glob("learner-*")})
  assert kept == ["learner-000000003", "learner-000000004"]
  assert json.loads((tmp_path / "state.json").read_text())["prefix"].startswith("learner-000000004")


def test_nothing_to_restore_is_none(tmp_path):
  assert CheckpointStore(tmp_path).latest() is None and CheckpointStore(tmp_path).restore(_TinyLearner()) is None
