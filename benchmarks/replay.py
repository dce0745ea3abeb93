"""Replay cost per environment step and learner-side sample throughput, measured in one run.

1. Memory: episodes of random (incompressible) 84x84x3 frames with frame stack 3 are written through the
   actors' adder for n-step 3, 4 and 5; the server's checkpoint size (`rlrep.replay.held_bytes`) is what it
   holds. The naive layout stores stacked `obs` and `next_obs` in every transition: 2 x 3 frames per step.
   The floor is one frame per observation: T + 1 for an episode of T steps.
2. Chunk length: memory per step against the input pipeline's sampling rate and CPU time per batch (every
   sample decompresses the chunks it touches, and on a small machine the learner's cores pay for it), for a
   few chunk lengths; the default is marked. Frames here are rendered (cartpole-swingup, fast quality,
   random actions), since decompression costs what the frames compress to.
3. Throughput: the learner's input pipeline (`make_dataset`, batch 256) sampling 84x84x9 transitions from a
   filled table, alone; then the D4PG learner consuming that pipeline, to compare what replay supplies with
   what the learner takes (and how long the learner waits for it).

Usage: python benchmarks/replay.py [--seconds 20] [--steps 1000] [--table-steps 2000]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import tempfile
import time
from typing import Callable, Iterator

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import dm_env  # noqa: E402
import numpy as np  # noqa: E402
import reverb  # noqa: E402
from dm_env import specs  # noqa: E402

import rlrep  # noqa: E402
from render import calls_per_second  # noqa: E402  (benchmarks/render.py)
from agents.d4pg import D4PGConfig  # noqa: E402
from agents.d4pg.learning import Learner  # noqa: E402
from environments import dmc  # noqa: E402
from rlrep import replay  # noqa: E402

FRAME, STACK = (84, 84, 3), 3
OBSERVATION_SPEC = {"pixels": specs.BoundedArray(FRAME[:2] + (3 * STACK,), np.uint8, 0, 255, name="pixels")}
ACTION_SPEC = specs.BoundedArray((6,), np.float32, -1.0, 1.0, name="action")
EPISODE_LENGTH = 500


def random_frames(rng: np.random.Generator) -> Iterator[np.ndarray]:
  """Incompressible frames: the worst case for memory."""
  while True:
    yield rng.integers(0, 256, FRAME, dtype=np.uint8)


def rendered_frames(rng: np.random.Generator) -> Iterator[np.ndarray]:
  """cartpole-swingup's own frames (fast quality) under random actions: what sampling decompresses in a run."""
  environment = dmc.load("cartpole-swingup", size=FRAME[0], frame_stack=1, action_repeat=8, render_quality="fast",
                         seed=0)
  while True:
    step = environment.reset()
    while not step.last():
      yield step.observation["pixels"]
      step = environment.step(rng.uniform(-1, 1, environment.action_spec().shape))


def write_episodes(adder: replay.NStepFrameAdder, steps: int, episode_length: int = EPISODE_LENGTH,
                   frame_source: Callable[[np.random.Generator], Iterator[np.ndarray]] = random_frames) -> None:
  rng = np.random.default_rng(0)
  source = frame_source(rng)
  frames: list[np.ndarray] = []

  def observation():
    frames.append(next(source))
    stack = [frames[max(0, len(frames) - STACK + i)] for i in range(STACK)]
    return {"pixels": np.concatenate(stack, axis=-1)}

  written = 0
  while written < steps:
    frames.clear()
    adder.observe_first(dm_env.restart(observation()))
    for t in range(min(episode_length, steps - written)):
      last = t == episode_length - 1 or written + t + 1 == steps
      step = dm_env.truncation if last else dm_env.transition
      adder.observe(rng.uniform(-1, 1, 6).astype(np.float32), step(float(rng.uniform()), observation()))
    written += min(episode_length, steps - written)
  adder.close()


def bytes_per_step(n_step: int, steps: int, chunk_length: int, frame_source=random_frames) -> float:
  layout = replay.StepLayout.from_specs(OBSERVATION_SPEC, ACTION_SPEC, STACK, n_step)
  with tempfile.TemporaryDirectory() as directory:
    server = reverb.Server([reverb.Table.queue(replay.REPLAY_TABLE, 100_000, signature=layout.item_signature())],
                           checkpointer=reverb.checkpointers.DefaultCheckpointer(directory))
    client = reverb.Client(f"localhost:{server.port}")
    write_episodes(replay.NStepFrameAdder(client, layout, chunk_length=chunk_length), steps,
                   frame_source=frame_source)
    held = replay.held_bytes(client)
    server.stop()
  return held / steps


def filled_table(config: D4PGConfig, steps: int,
                 frame_source=random_frames) -> tuple[reverb.Server, replay.StepLayout]:
  """A replay server holding `steps` steps written through the adder with `config`'s chunk length."""
  layout = replay.StepLayout.from_specs(OBSERVATION_SPEC, ACTION_SPEC, STACK, config.n_step)
  server = reverb.Server([replay.replay_table(layout, config.replay)])
  adder = replay.NStepFrameAdder(reverb.Client(f"localhost:{server.port}"), layout,
                                 chunk_length=config.replay.chunk_length)
  write_episodes(adder, steps, frame_source=frame_source)
  return server, layout


def sampling_cost(config: D4PGConfig, seconds: float, table_steps: int,
                  frame_source=random_frames) -> tuple[float, float]:
  """(transitions per second, CPU milliseconds per batch) of the input pipeline (`make_dataset`) alone, sampling
  a table of `table_steps` steps."""
  server, layout = filled_table(config, table_steps, frame_source)
  batches = iter(replay.make_dataset(f"localhost:{server.port}", layout, config.discount, config.batch_size))
  cpu_before = time.process_time()
  rate = calls_per_second(lambda: next(batches), seconds)
  cpu_ms_per_batch = 1000 * (time.process_time() - cpu_before) / (rate * seconds)
  server.stop()
  return rate * config.batch_size, cpu_ms_per_batch


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--seconds", type=float, default=20.0, help="measuring time per throughput figure")
  parser.add_argument("--steps", type=int, default=1000, help="environment steps written per memory figure")
  parser.add_argument("--batch", type=int, default=256)
  parser.add_argument("--table-steps", type=int, default=2000,
                      help="environment steps in the table each throughput figure samples from")
  args = parser.parse_args()

  config = D4PGConfig(batch_size=args.batch, samples_per_insert=None, min_replay_size=1)
  default_chunk = config.replay.chunk_length
  frame_bytes, naive = int(np.prod(FRAME)), 2 * STACK * int(np.prod(FRAME))
  print(f"Replay bytes per environment step, 84x84x3 frames, frame stack {STACK}, chunk length {default_chunk} "
        f"(one raw frame = {frame_bytes:,d} bytes; naive stacked obs + next_obs = {naive:,d} bytes):")
  for n_step in (3, 4, 5):
    ours = bytes_per_step(n_step, args.steps, default_chunk)
    print(f"  n-step {n_step}: {ours:10,.0f} bytes/step = {ours / frame_bytes:.4f} raw frames; "
          f"naive / ours = {naive / ours:.2f}x")
  episode = min(EPISODE_LENGTH, args.steps)  # write_episodes cuts the last episode short
  print("  floor: one frame per observation, T + 1 per episode of T steps "
        f"({(episode + 1) / episode:.3f} frames/step for the {episode}-step episodes written here)")

  print(f"Chunk length trade-off (n-step {config.n_step}, batch {args.batch}; rendered cartpole-swingup frames):")
  for chunk_length in sorted({1, 2, 4, 8, 16, default_chunk}):
    memory = bytes_per_step(config.n_step, args.steps, chunk_length, rendered_frames) / frame_bytes
    rate, cpu_ms = sampling_cost(dataclasses.replace(config, replay_chunk_length=chunk_length), args.seconds / 2,
                                 args.table_steps, rendered_frames)
    print(f"  {chunk_length:3d} steps: {memory:.4f} raw frames/step, {rate:7,.0f} transitions/s sampled, "
          f"{cpu_ms:5.1f} CPU ms per batch{'  (default)' if chunk_length == default_chunk else ''}")

  supplied, _ = sampling_cost(config, args.seconds, args.table_steps)
  server, layout = filled_table(config, args.table_steps)
  replicator = rlrep.make_replicator("cpu:1")
  input_fn = replay.make_input_fn(f"localhost:{server.port}", layout, config.discount, args.batch)
  learner = Learner(replicator, OBSERVATION_SPEC, ACTION_SPEC, config, 0,
                    lambda: iter(replicator.distribute_dataset(input_fn, per_replica=True)))
  learner.step()
  waited_before, start = learner.input_wait_s, time.perf_counter()
  consumed = calls_per_second(learner.step, args.seconds) * args.batch
  wait_share = (learner.input_wait_s - waited_before) / (time.perf_counter() - start)
  server.stop()
  print(f"Sampling 84x84x9 transitions, batch {args.batch} ({os.cpu_count()} cores):")
  print(f"  replay input pipeline alone   {supplied:8,.0f} transitions/s")
  print(f"  D4PG learner consumes         {consumed:8,.0f} transitions/s (waiting for input {wait_share:.0%})")
  print(f"  supply / consumption          {supplied / consumed:8.1f}x")


if __name__ == "__main__":
  main()
