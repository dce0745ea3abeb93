"""Replication overhead on a learner-sized step, measured side by side in one run.

The step: a pixel encoder (DMC tech report: conv 3x3x32 stride 2, conv 3x3x32, FC-50 + LayerNorm + tanh)
and a 2-layer head, on 84x84x9 uint8 observations scaled on the device, global batch 256, Adam.

Compares steps/s of (a) the step as a plain `tf.function`, (b) the same step through `repl.function` with
1 replica, (c) with 2 and 4 logical CPU replicas (same global batch). On 2 cores, (c) shows no speed-up:
the point is the cost of replication, not parallelism.

Usage: python benchmarks/replicator.py [--seconds 20] [--batch 256]
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import rlrep  # noqa: E402

rlrep.configure_logical_cpus(4)


def build_model() -> tf.keras.Model:
  tf.keras.utils.set_random_seed(0)
  inputs = tf.keras.Input((84, 84, 9), dtype=tf.uint8)
  x = tf.cast(inputs, tf.float32) / 255.0
  x = tf.keras.layers.Conv2D(32, 3, strides=2, activation="relu")(x)
  x = tf.keras.layers.Conv2D(32, 3, activation="relu")(x)
  x = tf.keras.layers.Flatten()(x)
  x = tf.keras.layers.Dense(50)(x)
  x = tf.keras.layers.LayerNormalization()(x)
  x = tf.keras.layers.Activation("tanh")(x)
  x = tf.keras.layers.Dense(256, activation="relu")(x)
  return tf.keras.Model(inputs, tf.keras.layers.Dense(1)(x))


def make_step(model, optimizer):
  def step(batch):
    with tf.GradientTape() as tape:
      loss = tf.reduce_mean((model(batch["pixels"]) - batch["target"]) ** 2)
    gradients = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss
  return step


def data(batch: int) -> tf.data.Dataset:
  rng = np.random.default_rng(0)
  element = {"pixels": rng.integers(0, 256, (batch, 84, 84, 9), dtype=np.uint8),
             "target": rng.normal(size=(batch, 1)).astype(np.float32)}
  return tf.data.Dataset.from_tensors(element).repeat()


def steps_per_second(call, seconds: float) -> float:
  call().numpy()  # trace and warm up
  count, start = 0, time.perf_counter()
  while time.perf_counter() - start < seconds:
    call().numpy()  # wait for the step to finish
    count += 1
  return count / (time.perf_counter() - start)


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--seconds", type=float, default=20.0, help="measuring time per configuration")
  parser.add_argument("--batch", type=int, default=256, help="global batch size")
  args = parser.parse_args()

  model, optimizer = build_model(), tf.keras.optimizers.Adam(1e-4)
  plain_step = tf.function(make_step(model, optimizer))
  plain_iterator = iter(data(args.batch))
  # Measured before and after the replicated runs, so that drifting machine load hits both alike.
  plain = steps_per_second(lambda: plain_step(next(plain_iterator)), args.seconds / 2)
  print(f"global batch {args.batch}, 84x84x9 uint8; steps/s (higher is better)")
  rates = {}

  for replicas in (1, 2, 4):
    repl = rlrep.make_replicator(f"cpu:{replicas}")
    with repl.scope():
      model, optimizer = build_model(), rlrep.wrap_optimizer(tf.keras.optimizers.Adam(1e-4))
    per_replica = rlrep.replicator.per_replica_batch_size(args.batch, replicas)
    iterator = iter(repl.distribute_dataset(lambda ctx, b=per_replica: data(b)))
    train = repl.function(make_step(model, optimizer), reduce="mean")
    rates[replicas] = steps_per_second(lambda: train(iterator), args.seconds)
  plain = (plain + steps_per_second(lambda: plain_step(next(plain_iterator)), args.seconds / 2)) / 2
  print(f"  plain tf.function        {plain:6.2f}")
  for replicas, rate in rates.items():
    print(f"  rlrep, {replicas} replica(s)     {rate:6.2f}   ratio to plain {rate / plain:.3f}")


if __name__ == "__main__":
  main()
