"""RSS of the learner's loop without Ray: D4PG's Learner.step sampling over gRPC from a replay server in another
process that an actor in a third keeps filling (the soak's settings: cartpole-swingup, 32x32, batch 32), weights
published every 10 steps. With `same-process`, the server lives in the learner's process instead (Reverb then
samples without gRPC).

Usage: python benchmarks/probes/learner_over_grpc.py STEPS [same-process]"""
import multiprocessing as mp, pathlib, sys, time
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))  # the repository

from agents.d4pg import D4PGConfig
from launch.experiment import Experiment

EXPERIMENT = Experiment(task="cartpole-swingup", frames=10**9, out="/tmp/probe-learner", agent_config=D4PGConfig(
    image_size=32, action_repeat=8, render_quality="fast", batch_size=32, min_replay_size=200,
    max_replay_size=15000, samples_per_insert=64.0, vmax=800.0, learning_rate=3e-4, target_update_tau=0.01))

def serve(port_q, experiment=EXPERIMENT):
  from launch.roles.replay_server import make_replay_server
  server = make_replay_server(experiment.make_builder())
  port_q.put(server.port)
  server.wait()

def act(address, experiment=EXPERIMENT):
  from launch import roles
  from launch.roles.counter import Counter
  roles.run_actor(experiment, experiment.make_builder(), address, Counter(), 0)

if __name__ == "__main__":
  ctx = mp.get_context("spawn")
  if sys.argv[2:] == ["same-process"]:
    from launch.roles.replay_server import make_replay_server
    server = make_replay_server(EXPERIMENT.make_builder())
    address = f"localhost:{server.port}"
  else:
    q = ctx.Queue()
    ctx.Process(target=serve, args=(q,), daemon=True).start()
    address = f"localhost:{q.get()}"
  import psutil, rlrep, tensorflow as tf
  from rlrep import replay
  replicator = rlrep.make_replicator("cpu:1")
  learner = EXPERIMENT.make_builder().make_learner(replicator, address, seed=EXPERIMENT.seed, end_after_idle_s=2.0)
  publisher = replay.WeightPublisher(replay.connect(address))
  publisher.publish(0, learner.policy_params())
  ctx.Process(target=act, args=(address,), daemon=True).start()
  proc, n, start, restarts = psutil.Process(), int(sys.argv[1]), time.time(), 0
  while learner.num_steps < n:
    try:
      learner.step()
    except (StopIteration, tf.errors.OutOfRangeError):
      learner.restart_input(); restarts += 1
      continue
    if learner.num_steps % 10 == 0:
      publisher.publish(learner.num_steps, learner.policy_params())
    if learner.num_steps % (n // 12) == 0:
      print(learner.num_steps, round(proc.memory_info().rss / 1e6, 1), f"{time.time() - start:.0f}s",
            f"{restarts} input restarts", flush=True)
