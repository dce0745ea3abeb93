"""RSS of the learner's loop hosted by a Ray actor, as local mode hosts it: D4PG's Learner.step sampling over gRPC
(the soak's settings: cartpole-swingup, 32x32, batch 32, its rate limiter, the 2 s timeout) from a replay server in
another process that an actor in a third keeps filling. learner_input_pieces.py's `learner limited` is the same
loop without Ray (flat with MALLOC_ARENA_MAX=2). OPTIONS add the role's other per-step work one at a time:
  counter   the two counter calls per step (stop_reason, set_learner_steps) to a Counter in a Ray actor
  publish   weights published to Reverb every 10 steps
  params    the weights read every 10 steps (`policy_params()`) but not published
  publish-same  the weights read once, published every 10 steps
  end-episode   with publish: the publisher's trajectory writer ends its episode after every publication
  tracemalloc  with any of the above: Python's allocations that grew between the second print and the last
  trim      with any of the above: glibc's malloc_trim(0) after every read (free heap pages back to the system)
Each print gives RSS and glibc's own account of its heap. Run with MALLOC_ARENA_MAX=2 (Ray inherits it).
Usage: python benchmarks/probes/learner_in_ray.py STEPS [counter] [publish [end-episode] | params | publish-same]
         [tracemalloc] [trim]"""
import ctypes, multiprocessing as mp, pathlib, sys, time, tracemalloc
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))  # the repository

import ray
from learner_over_grpc import EXPERIMENT, act, serve  # the soak's agent settings, rate limiter included

STEPS, OPTIONS = int(sys.argv[1]), sys.argv[2:]


def heap_mb() -> str:
  """glibc's own account (mallinfo2, every arena): in use, free but kept, and mmapped bytes, in MB."""
  class MallInfo2(ctypes.Structure):  # defined here: Ray pickles this module's functions by value
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
                 "keepcost")]
  libc = ctypes.CDLL("libc.so.6")
  libc.mallinfo2.restype = MallInfo2
  info = libc.mallinfo2()
  return f"heap in use {info.uordblks / 1e6:.1f} free {info.fordblks / 1e6:.1f} mmapped {info.hblkhd / 1e6:.1f}"


class HostedLearner:
  def run(self, experiment, address: str, counter, steps: int, options: list[str]) -> None:
    import psutil, rlrep, tensorflow as tf
    from rlrep import replay
    learner = experiment.make_builder().make_learner(rlrep.make_replicator("cpu:1"), address, seed=experiment.seed,
                                                        end_after_idle_s=2.0)
    publisher = replay.WeightPublisher(replay.connect(address))
    weights = learner.policy_params()
    publisher.publish(0, weights)
    process, start, printed = psutil.Process(), time.time(), set()
    while learner.num_steps < steps:
      try:
        learner.step()
      except (StopIteration, tf.errors.OutOfRangeError):
        learner.restart_input()
      if "counter" in options:
        counter.stop_reason()
        counter.set_learner_steps(learner.num_steps)
      if learner.num_steps % 10 == 0:
        if "publish" in options:
          publisher.publish(learner.num_steps, learner.policy_params())
          if "end-episode" in options:
            publisher._writer.end_episode()  # noqa: SLF001  (a probe of the writer's per-episode state)
        elif "params" in options:
          learner.policy_params()
        elif "publish-same" in options:
          publisher.publish(learner.num_steps, weights)
        if "trim" in options:
          ctypes.CDLL("libc.so.6").malloc_trim(0)
      if learner.num_steps % (steps // 12) == 0 and learner.num_steps not in printed:
        printed.add(learner.num_steps)
        print("ray", *options, learner.num_steps, round(process.memory_info().rss / 1e6, 1),
              f"{time.time() - start:.0f}s", heap_mb(), flush=True)
        if "tracemalloc" in options and len(printed) == 2:
          tracemalloc.start(8)
          first = tracemalloc.take_snapshot()
        elif "tracemalloc" in options and learner.num_steps >= steps:
          for stat in tracemalloc.take_snapshot().compare_to(first, "traceback")[:8]:
            print(stat, *stat.traceback.format()[-16:], sep="\n", flush=True)


def main():
  context = mp.get_context("spawn")
  port_queue = context.Queue()
  context.Process(target=serve, args=(port_queue, EXPERIMENT), daemon=True).start()
  address = f"localhost:{port_queue.get()}"
  ray.init(address="local", num_cpus=2, include_dashboard=False)  # the learner's lines reach this terminal
  from launch.modes.local import CounterClient
  from launch.roles.counter import Counter
  counter = CounterClient(ray.remote(Counter).options(enable_task_events=False).remote())
  learner = ray.remote(HostedLearner).options(num_cpus=1).remote()
  done = learner.run.remote(EXPERIMENT, address, counter, STEPS, OPTIONS)
  time.sleep(30)  # the learner's first publication precedes the actor's first weights pull
  context.Process(target=act, args=(address, EXPERIMENT), daemon=True).start()
  ray.get(done)
  ray.shutdown()


if __name__ == "__main__":
  main()
