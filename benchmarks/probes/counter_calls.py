"""Does a Ray actor's memory grow with calls to the counter (as the learner makes two per step)? Prints RSS every
tenth of N rounds, for a restartable caller actor and a plain one.

Usage: python benchmarks/probes/counter_calls.py [N]"""
import os, pathlib, sys, time
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))  # the repository
import psutil, ray
from launch.modes.local import CounterClient
from launch.roles.counter import Counter

N = int(sys.argv[1]) if len(sys.argv) > 1 else 60000
ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
counter = CounterClient(ray.remote(Counter).options(max_restarts=-1, max_task_retries=-1,
                                                    enable_task_events=False).remote())

class Caller:
  def run(self, counter, n, mode):
    p = psutil.Process()
    out = []
    for i in range(n):
      if mode == "counter":
        counter.stop_reason(); counter.set_learner_steps(i)
      if i % (n // 10) == 0:
        out.append((i, round(p.memory_info().rss / 1e6, 1)))
    out.append((n, round(p.memory_info().rss / 1e6, 1)))
    return out

for opts in [dict(max_restarts=-1, max_task_retries=-1), dict()]:
  caller = ray.remote(Caller).options(**opts).remote()
  t = time.time()
  print(opts, ray.get(caller.run.remote(counter, N, "counter")), f"{time.time()-t:.0f}s", flush=True)
ray.shutdown()
