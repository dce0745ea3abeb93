"""How many pixel transitions one Reverb server in another process supplies over gRPC, to 1, 2 and 4 samplers.

A server process holds a replay table of rendered cartpole-swingup frames (84x84x3, frame stack 3, n-step 3,
written through the actors' adder, so chunks compress as in a run) with no rate limiter. Sampler processes each
run the learner's input pipeline (`rlrep.replay.make_dataset`, batch 256 of 84x84x9 transitions as the learner sees
them) against it over gRPC, started together after a warm-up; the run reports, for each number of samplers:

* transitions sampled a second in total, and the learner updates a second that feeds (at the batch size);
* bytes on the wire per transition: the loopback interface's byte counter (/proc/net/dev) over the window, less
  the loopback traffic measured just before it with no sampler (other programs on the machine);
* CPU seconds per 1,000 transitions in the server process and in the samplers: with the machine's cores shared
  by all of them, these say what a larger machine would need for a given rate.

On a small machine the samplers and the server compete for the same cores, so the totals are a floor; the CPU
costs are what carries over.

Usage: python benchmarks/replay_supply.py [--samplers 1,2,4] [--seconds 20] [--table-steps 4000] [--batch 256]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import pathlib
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

REPOSITORY = pathlib.Path(__file__).resolve().parents[1]
WARM_UP_BATCHES = 3


def _cpu_seconds(pid: int) -> float:
  """User + system CPU time of process `pid` (Linux /proc)."""
  fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
  return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def loopback_bytes() -> int:
  """Bytes received on the loopback interface so far (every byte sent on it is received on it once)."""
  for line in pathlib.Path("/proc/net/dev").read_text().splitlines():
    name, _, counters = line.partition(":")
    if name.strip() == "lo":
      return int(counters.split()[0])
  raise RuntimeError("no loopback interface in /proc/net/dev")


def _layout_and_config(batch: int):
  from rlrep import replay
  from replay import ACTION_SPEC, OBSERVATION_SPEC, STACK  # benchmarks/replay.py
  config = replay.ReplayConfig(batch_size=batch, n_step=3, discount=0.99, frame_stack=STACK, samples_per_insert=None,
                               min_replay_size=1)
  return replay.StepLayout.from_specs(OBSERVATION_SPEC, ACTION_SPEC, STACK, config.n_step), config


def serve(table_steps: int, batch: int, port_queue, stop) -> None:
  """The server process: fills the table, reports its port, serves until `stop` is set."""
  sys.path[:0] = [str(REPOSITORY), str(REPOSITORY / "benchmarks")]
  import reverb
  from rlrep import replay
  from replay import rendered_frames, write_episodes  # benchmarks/replay.py
  layout, config = _layout_and_config(batch)
  server = reverb.Server([replay.replay_table(layout, config)])
  adder = replay.NStepFrameAdder(reverb.Client(f"localhost:{server.port}"), layout, chunk_length=config.chunk_length)
  write_episodes(adder, table_steps, frame_source=rendered_frames)
  port_queue.put(server.port)
  stop.wait()
  server.stop()


def sample(address: str, batch: int, seconds: float, ready, start, results) -> None:
  """A sampler process: warms its pipeline up, says so, waits for the common start, samples for `seconds`."""
  sys.path[:0] = [str(REPOSITORY), str(REPOSITORY / "benchmarks")]
  from rlrep import replay
  layout, config = _layout_and_config(batch)
  batches = iter(replay.make_dataset(address, layout, config.discount, batch))
  for _ in range(WARM_UP_BATCHES):
    next(batches)
  ready.put(os.getpid())
  start.wait()
  count, cpu_before, began = 0, time.process_time(), time.perf_counter()
  while time.perf_counter() - began < seconds:
    next(batches)
    count += 1
  results.put((count * batch, time.process_time() - cpu_before, time.perf_counter() - began))


def background_loopback_rate(seconds: float = 2.0) -> float:
  """Loopback bytes a second while no sampler runs: other programs' traffic, subtracted from the window's."""
  before, began = loopback_bytes(), time.perf_counter()
  time.sleep(seconds)
  return (loopback_bytes() - before) / (time.perf_counter() - began)


def measure(samplers: int, address: str, server_pid: int, batch: int, seconds: float) -> dict[str, float]:
  """One window of `samplers` parallel sampler processes against the server at `address`."""
  context = multiprocessing.get_context("spawn")
  ready, start, results = context.Queue(), context.Event(), context.Queue()
  processes = [context.Process(target=sample, args=(address, batch, seconds, ready, start, results))
               for _ in range(samplers)]
  background = background_loopback_rate()
  for process in processes:
    process.start()
  for _ in processes:
    ready.get(timeout=600)
  wire_before, server_cpu_before, began = loopback_bytes(), _cpu_seconds(server_pid), time.perf_counter()
  start.set()
  outcomes = [results.get(timeout=seconds + 600) for _ in processes]
  wire = loopback_bytes() - wire_before - background * (time.perf_counter() - began)
  server_cpu = _cpu_seconds(server_pid) - server_cpu_before
  for process in processes:
    process.join()
  transitions = sum(count for count, _, _ in outcomes)
  window = max(wall for _, _, wall in outcomes)
  return {"transitions_per_s": transitions / window, "updates_per_s": transitions / window / batch,
          "wire_bytes_per_transition": max(wire, 0.0) / transitions,
          "server_cpu_s_per_1000": 1000 * server_cpu / transitions,
          "sampler_cpu_s_per_1000": 1000 * sum(cpu for _, cpu, _ in outcomes) / transitions}


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--samplers", default="1,2,4", help="comma-separated numbers of parallel sampler processes")
  parser.add_argument("--seconds", type=float, default=20.0, help="measuring window per number of samplers")
  parser.add_argument("--table-steps", type=int, default=4000, help="environment steps the table holds")
  parser.add_argument("--batch", type=int, default=256, help="transitions per sampled batch (the learner's batch)")
  args = parser.parse_args()
  counts = [int(part) for part in args.samplers.split(",")]

  context = multiprocessing.get_context("spawn")
  port_queue, stop = context.Queue(), context.Event()
  server = context.Process(target=serve, args=(args.table_steps, args.batch, port_queue, stop))
  server.start()
  port = port_queue.get(timeout=600)
  print(f"Replay supply over gRPC: 84x84x9 transitions, batch {args.batch}, a server in another process holding "
        f"{args.table_steps:,d} rendered steps ({os.cpu_count()} cores):")
  try:
    for samplers in counts:
      figures = measure(samplers, f"localhost:{port}", server.pid, args.batch, args.seconds)
      print(f"  {samplers} sampler(s): {figures['transitions_per_s']:9,.0f} transitions/s = "
            f"{figures['updates_per_s']:7.1f} updates/s; {figures['wire_bytes_per_transition']:8,.0f} bytes/transition "
            f"on the wire; CPU s per 1,000 transitions: server {figures['server_cpu_s_per_1000']:.3f}, samplers "
            f"{figures['sampler_cpu_s_per_1000']:.3f}")
  finally:
    stop.set()
    server.join(timeout=60)


if __name__ == "__main__":
  main()
