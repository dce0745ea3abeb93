"""D4PG learner updates/s from pixels, through rlrep vs a plain single-device tf.function, in one run.

Both run the same `agents.d4pg.learning.update` on the same in-memory batch (global batch 256 of 84x84x9
uint8 observations, walker-sized 6-d actions, augmentation on), fed through `tf.data` so neither waits on
replay: (a) `Learner` with a 1-replica `rlrep` replicator, exactly as training runs it, and (b) the update
in a bare `tf.function` under `tf.distribute.OneDeviceStrategy`, the thinnest strategy there is (rlrep's
primitives need some strategy). The ratio a/b is the cost of rlrep's replication layer.
The two are measured in alternating rounds so machine noise hits both alike.

Usage: python benchmarks/learner.py [--seconds 30] [--batch 256]
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from dm_env import specs  # noqa: E402

import rlrep  # noqa: E402
from render import calls_per_second  # noqa: E402  (benchmarks/render.py)
from agents.d4pg import D4PGConfig  # noqa: E402
from agents.d4pg.learning import Learner, LearnerState, update  # noqa: E402

OBSERVATION_SPEC = {"pixels": specs.BoundedArray((84, 84, 9), np.uint8, 0, 255, name="pixels")}
ACTION_SPEC = specs.BoundedArray((6,), np.float32, -1.0, 1.0, name="action")


def random_batch(batch_size: int, seed: int = 0) -> dict:
  rng = np.random.default_rng(seed)
  pixels = lambda: rng.integers(0, 256, (batch_size, 84, 84, 9), dtype=np.uint8)  # noqa: E731
  return {"observation": {"pixels": pixels()}, "next_observation": {"pixels": pixels()},
          "action": rng.uniform(-1, 1, (batch_size, 6)).astype(np.float32),
          "reward": rng.uniform(0, 6, batch_size).astype(np.float32),
          "discount": np.full(batch_size, 0.99 ** 3, np.float32)}


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--seconds", type=float, default=30.0, help="measuring time per variant (split in rounds)")
  parser.add_argument("--batch", type=int, default=256)
  args = parser.parse_args()
  config = D4PGConfig(batch_size=args.batch)
  batch = random_batch(args.batch)
  dataset = lambda: tf.data.Dataset.from_tensors(batch).repeat().prefetch(2)  # noqa: E731

  replicator = rlrep.make_replicator("cpu:1")
  learner = Learner(replicator, OBSERVATION_SPEC, ACTION_SPEC, config,
                    lambda: iter(replicator.distribute_dataset(lambda context: dataset(), per_replica=True)))
  one_device = tf.distribute.OneDeviceStrategy("/cpu:0")
  with one_device.scope():
    plain_state = LearnerState(OBSERVATION_SPEC, ACTION_SPEC, config)
  plain_update = tf.function(lambda b: one_device.run(update, args=(plain_state, b, config)))
  plain_batches = iter(dataset())

  def plain_step():
    return {name: float(value) for name, value in plain_update(next(plain_batches)).items()}

  rounds = 3
  rates = {"rlrep": [], "plain": []}
  for _ in range(rounds):
    rates["rlrep"].append(calls_per_second(learner.step, args.seconds / rounds))
    rates["plain"].append(calls_per_second(plain_step, args.seconds / rounds))
  replicated, plain = (float(np.mean(rates[k])) for k in ("rlrep", "plain"))
  print(f"D4PG learner from pixels, batch {args.batch}, 84x84x9, 1 replica ({os.cpu_count()} cores):")
  print(f"  rlrep Learner.step      {replicated:6.2f} updates/s  ({replicated * args.batch:,.0f} transitions/s)")
  print(f"  plain tf.function       {plain:6.2f} updates/s")
  print(f"  ratio rlrep / plain     {replicated / plain:6.3f}")


if __name__ == "__main__":
  main()
