"""The D4PG update: categorical projection, replication on 4 replicas and across hosts, bfloat16 beside float32."""

import dataclasses
import json
import pathlib

import numpy as np
import pytest
import tensorflow as tf
from dm_env import specs

import rlrep
from agents.d4pg import learning
from agents.d4pg.config import D4PGConfig
from rlrep import testing

ATOMS = tf.constant([0.0, 1.0, 2.0, 3.0, 4.0])


def _project(target_atoms, probs):
  return learning.categorical_projection(tf.constant([target_atoms], tf.float32), tf.constant([probs], tf.float32),
                                         ATOMS).numpy()[0]


def test_projection_of_atoms_on_the_grid_is_the_identity():
  np.testing.assert_allclose(_project([0, 1, 2, 3, 4], [0.1, 0.2, 0.3, 0.25, 0.15]), [0.1, 0.2, 0.3, 0.25, 0.15])


def test_projection_splits_mass_between_neighbours_by_closeness():
  # 0.5 at 1.25 -> 0.375 on atom 1, 0.125 on atom 2; 0.5 at 3.5 -> 0.25 on atoms 3 and 4
  np.testing.assert_allclose(_project([1.25, 3.5], [0.5, 0.5]), [0, 0.375, 0.125, 0.25, 0.25], atol=1e-6)


def test_projection_moves_mass_beyond_the_edges_to_the_edge_atoms():
  np.testing.assert_allclose(_project([-7.0, 4.0, 19.0], [0.2, 0.3, 0.5]), [0.2, 0, 0, 0, 0.8], atol=1e-6)


def test_terminal_step_puts_all_mass_at_the_reward():
  """discount 0: r + 0 * z = r for every atom, so the target is r's two neighbours."""
  reward, discount = 2.3, 0.0
  target_atoms = (reward + discount * ATOMS).numpy()
  np.testing.assert_allclose(_project(target_atoms, [0.2] * 5), [0, 0, 0.7, 0.3, 0], atol=1e-6)


def test_projection_keeps_total_probability():
  rng = np.random.default_rng(0)
  probs = rng.dirichlet(np.ones(5), size=8).astype(np.float32)
  targets = rng.uniform(-3, 8, size=(8, 5)).astype(np.float32)
  projected = learning.categorical_projection(tf.constant(targets), tf.constant(probs), ATOMS).numpy()
  np.testing.assert_allclose(projected.sum(axis=1), 1.0, atol=1e-5)
  assert (projected >= 0).all()


OBSERVATION_SPEC = {"pixels": specs.BoundedArray((12, 12, 6), np.uint8, 0, 255)}
ACTION_SPEC = specs.BoundedArray((2,), np.float32, -1, 1)
# float32 pinned: exact comparisons, whatever the machine would choose for "auto".
CONFIG = D4PGConfig(precision="float32",
                    frame_stack=2, batch_size=8, hidden_sizes=(16,), conv_channels=4, feature_dim=8, num_atoms=11,
                    target_update_period=2, augment=False)


def _batches(count):
  """`count` random transition batches that fit the specs and batch size above."""
  return testing.random_transitions(OBSERVATION_SPEC["pixels"].shape, ACTION_SPEC.shape[0], CONFIG.batch_size, count)


def test_update_on_four_replicas_matches_one_device():
  report = testing.assert_replicates(lambda: learning.make_state(OBSERVATION_SPEC, ACTION_SPEC, CONFIG, seed=0),
                                     lambda state, batch: learning.update(state, batch, CONFIG), _batches(3),
                                     num_replicas=4, atol=1e-5, rtol=1e-4)
  assert report.steps == 3


ACROSS_HOSTS = """
import json, sys
import rlrep
repl = rlrep.make_replicator("multi_worker")  # first: the hosts join before any other TensorFlow op
sys.path.insert(0, "tests/agents/d4pg")
import test_learning as here
from agents.d4pg import learning
from rlrep import testing
report = testing.assert_replicates(lambda: learning.make_state(here.OBSERVATION_SPEC, here.ACTION_SPEC, here.CONFIG, 0),
                                   lambda state, batch: learning.update(state, batch, here.CONFIG), here._batches(3),
                                   replicator=repl)
print(json.dumps({"replicas": report.num_replicas, "steps": report.steps}))
"""


def test_update_on_two_hosts_matches_one_device():
  """TF-Replicator's promise across hosts: two processes joined as two hosts (MultiWorkerMirroredStrategy), each
  applying the gradient one device computes for the global batch at every update."""
  outputs = testing.run_hosts(ACROSS_HOSTS, hosts=2, timeout_s=300, cwd=str(pathlib.Path(__file__).parents[3]))
  assert [json.loads(output.strip().splitlines()[-1]) for output in outputs] == [{"replicas": 2, "steps": 3}] * 2


def _dataset(repl, batches):
  return repl.distribute_dataset(lambda context: tf.data.Dataset.from_tensor_slices(
      tf.nest.map_structure(lambda *rows: np.stack(rows), *batches)), per_replica=True)


def _learner(config, batches, spec="cpu:1"):
  repl = rlrep.make_replicator(spec)
  dataset = _dataset(repl, batches)
  return learning.Learner(repl, OBSERVATION_SPEC, ACTION_SPEC, config, 0, lambda: iter(dataset))


def _values(learner):
  return [v.numpy() for v in learner.state.variables]


def test_a_bfloat16_update_stays_close_to_the_float32_one():
  batches = _batches(2)
  full, mixed = (_learner(dataclasses.replace(CONFIG, precision=precision), batches)
                 for precision in ("float32", "bfloat16"))
  start = _values(full)
  for a, b in zip(start, _values(mixed), strict=True):  # same float32 weights to start from
    np.testing.assert_array_equal(a, b)
  for _ in range(2):
    full_metrics, mixed_metrics = full.step(), mixed.step()
  for name in ("critic_loss", "policy_loss", "q_mean"):
    assert mixed_metrics[name] == pytest.approx(full_metrics[name], rel=0.02, abs=1e-3), name
  assert all(v.dtype == tf.float32 for v in mixed.state.variables if v.dtype.is_floating)
  assert [conv.compute_dtype for conv in mixed.state.networks.encoder.convs] == ["bfloat16"] * 2
  # Adam moves every weight by about the learning rate whatever the gradient's size, so compare typical
  # (median) changes: bfloat16 rounding flips only the directions of near-zero gradients.
  moved = np.median(np.concatenate([np.abs(b - a).ravel() for a, b in zip(start, _values(full))]))
  differ = np.median(np.concatenate([np.abs(b - a).ravel() for a, b in zip(_values(full), _values(mixed))]))
  assert differ < 0.1 * moved
