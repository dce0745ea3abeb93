"""D4PG learner updates/s from pixels: augmentation on/off, float32/bfloat16, rlrep vs a plain tf.function
and vs DeepMind Acme's TF D4PG learner on the same network.

Every variant runs `agents.d4pg.learning.update` on the same in-memory batch (global batch 256 of 84x84x9
uint8 observations, walker-sized 6-d actions), fed through `tf.data` so none waits on replay:
* rlrep `Learner` with a 1-replica replicator, exactly as training runs it: augmentation on and off, and
  with `precision=bfloat16` (only fast where the CPU has AVX512-BF16/AMX; elsewhere TF emulates it);
* the same update in a bare `tf.function` under `tf.distribute.OneDeviceStrategy`, the thinnest strategy
  there is (rlrep's primitives need some strategy): rlrep / plain is the cost of the replication layer;
* Acme's own `D4PGLearner` with rlrep's default network (benchmarks/acme_d4pg.py: 2,620,527 parameters in
  both), which has no augmentation: compare it with rlrep's augmentation-off variants.
Variants are measured in alternating rounds so machine noise hits them alike; ratios are to the first.
Compare with Acme on one core: `taskset -c 0 python benchmarks/learner.py`.

Usage: python benchmarks/learner.py [--seconds 60] [--batch 256] [--no-bfloat16] [--no-acme]
"""

from __future__ import annotations

import argparse
import dataclasses
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from dm_env import specs  # noqa: E402

import rlrep  # noqa: E402
import acme_d4pg  # noqa: E402  (benchmarks/acme_d4pg.py)
from render import calls_per_second  # noqa: E402  (benchmarks/render.py)
from agents.d4pg import D4PGConfig  # noqa: E402
from agents.d4pg.learning import Learner, make_state, update  # noqa: E402
from rlrep import precision  # noqa: E402

OBSERVATION_SPEC = {"pixels": specs.BoundedArray((84, 84, 9), np.uint8, 0, 255, name="pixels")}
ACTION_SPEC = specs.BoundedArray((6,), np.float32, -1.0, 1.0, name="action")
ACME = "Acme TF D4PGLearner, no augmentation"


def rlrep_learner(config: D4PGConfig, batch: dict):
  replicator = rlrep.make_replicator("cpu:1")
  dataset = lambda context: tf.data.Dataset.from_tensors(batch).repeat().prefetch(2)  # noqa: E731
  learner = Learner(replicator, OBSERVATION_SPEC, ACTION_SPEC, config, 0,
                    lambda: iter(replicator.distribute_dataset(dataset, per_replica=True)))
  return learner.step


def plain_update(config: D4PGConfig, batch: dict):
  one_device = tf.distribute.OneDeviceStrategy("/cpu:0")
  with one_device.scope():
    state = make_state(OBSERVATION_SPEC, ACTION_SPEC, config, 0)
  compiled = tf.function(lambda b: one_device.run(update, args=(state, b, config)))
  batches = iter(tf.data.Dataset.from_tensors(batch).repeat().prefetch(2))
  return lambda: {name: float(value) for name, value in compiled(next(batches)).items()}


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--seconds", type=float, default=60.0, help="measuring time per variant (split in rounds)")
  parser.add_argument("--batch", type=int, default=256)
  parser.add_argument("--bfloat16", action=argparse.BooleanOptionalAction, default=True,
                      help="include the bfloat16 variants (slow where the CPU emulates bfloat16)")
  parser.add_argument("--acme", action=argparse.BooleanOptionalAction, default=True,
                      help="include Acme's TF D4PG learner on the same network (installed by scripts/setup.sh)")
  args = parser.parse_args()
  batch = acme_d4pg.random_batch(args.batch)
  config = D4PGConfig(batch_size=args.batch, precision="float32")
  variants = {"rlrep, augmentation on, float32": rlrep_learner(config, batch),
              "rlrep, augmentation off, float32": rlrep_learner(dataclasses.replace(config, augment=False), batch),
              "plain tf.function, augmentation on": plain_update(config, batch)}
  if args.bfloat16:
    bfloat16 = dataclasses.replace(config, precision="bfloat16")
    variants["rlrep, augmentation on, bfloat16"] = rlrep_learner(bfloat16, batch)
    variants["rlrep, augmentation off, bfloat16"] = rlrep_learner(dataclasses.replace(bfloat16, augment=False),
                                                                  batch)
  if args.acme:
    variants[ACME] = acme_d4pg.acme_learner(batch, ACTION_SPEC, config)[0]
  rounds = 3
  rates = {name: [] for name in variants}
  for _ in range(rounds):
    for name, step in variants.items():
      rates[name].append(calls_per_second(step, args.seconds / rounds))
  means = {name: float(np.mean(values)) for name, values in rates.items()}
  first = next(iter(means.values()))
  cpu_flags = " ".join(sorted(precision.read_cpu_flags() & {"avx2", "avx512f", "avx512_bf16", "amx_bf16"}))
  print(f"D4PG learner from pixels, batch {args.batch}, 84x84x9, 1 replica ({len(os.sched_getaffinity(0))} cores; "
        f"{cpu_flags}):")
  for name, rate in means.items():
    print(f"  {name:38s} {rate:6.2f} updates/s  ({rate * args.batch:6,.0f} transitions/s)  x{rate / first:.2f}")
  rlrep_rate, plain_rate = means["rlrep, augmentation on, float32"], means["plain tf.function, augmentation on"]
  print(f"  ratio rlrep / plain tf.function       {rlrep_rate / plain_rate:6.3f}")
  if args.acme:  # Acme's update has no augmentation: its peers are rlrep's augmentation-off variants
    for name in [name for name in means if "augmentation off" in name]:
      print(f"  ratio {name.removeprefix('rlrep, augmentation off, ')} rlrep (augmentation off) / Acme "
            f"{means[name] / means[ACME]:6.3f}")


if __name__ == "__main__":
  main()
