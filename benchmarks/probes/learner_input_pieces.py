"""RSS of the learner's input path taken apart, without Ray: a replay server in one process, an actor filling it
in another (the soak's settings: cartpole-swingup, 32x32, batch 32), and in this one, by MODE:
  dataset      rlrep.replay.make_dataset iterated (Reverb over gRPC, item_to_transition, batch, prefetch)
  distributed  the same through Replicator.distribute_dataset, as the learner reads it
  const        Learner.step on one constant batch (the update without Reverb)
  learner      Learner.step sampling over gRPC (the learner role's loop without Ray, its counter or logs)
Add `limited` for the soak's rate limiter (64 samples per insert; else only a minimum size) and `timeout` for
the learner's 2 s rate-limiter timeout in dataset/distributed (the learner modes always have it).
Run with MALLOC_ARENA_MAX=2 to match rlrep's role processes.

Usage: python benchmarks/probes/learner_input_pieces.py MODE STEPS [limited] [timeout]"""
import multiprocessing as mp, pathlib, sys, time
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))  # the repository

from agents.d4pg import D4PGConfig
from launch.experiment import Experiment
from learner_over_grpc import act, serve  # the same server and actor processes, given this probe's experiment

MODE, STEPS, OPTIONS = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
IDLE_S = 2.0 if "timeout" in OPTIONS or MODE in ("const", "learner") else None
EXPERIMENT = Experiment(task="cartpole-swingup", frames=10**9, out="/tmp/probe-learner", agent_config=D4PGConfig(
    image_size=32, action_repeat=8, render_quality="fast", batch_size=32, min_replay_size=200,
    max_replay_size=15000, samples_per_insert=64.0 if "limited" in OPTIONS else None, vmax=800.0,
    learning_rate=3e-4, target_update_tau=0.01))


def main():
  context = mp.get_context("spawn")
  port_queue = context.Queue()
  context.Process(target=serve, args=(port_queue, EXPERIMENT), daemon=True).start()
  address = f"localhost:{port_queue.get()}"
  import psutil, rlrep, tensorflow as tf
  from rlrep import replay
  replicator = rlrep.make_replicator("cpu:1")
  builder = EXPERIMENT.make_builder()
  learner = builder.make_learner(replicator, address, seed=EXPERIMENT.seed, end_after_idle_s=IDLE_S)
  replay.WeightPublisher(replay.connect(address)).publish(0, learner.policy_params())
  context.Process(target=act, args=(address, EXPERIMENT), daemon=True).start()

  input_fn = replay.make_input_fn(address, builder.layout, EXPERIMENT.agent_config.discount, 32, end_after_idle_s=IDLE_S)
  if MODE == "const":
    batch = next(iter(builder.make_learner(replicator, address, seed=EXPERIMENT.seed)._iterator))
    learner._make_iterator = lambda: iter(replicator.distribute_dataset(
        lambda _: tf.data.Dataset.from_tensors(batch).repeat(), per_replica=True))
  elif MODE == "distributed":
    learner._make_iterator = lambda: iter(replicator.distribute_dataset(input_fn, per_replica=True))
  elif MODE == "dataset":
    learner._make_iterator = lambda: iter(input_fn(rlrep.InputContext(1, 1, 0, 0)))
  learner.restart_input()
  step = learner.step if MODE in ("const", "learner") else lambda: next(learner._iterator)

  process, start, restarts = psutil.Process(), time.time(), 0
  for i in range(1, STEPS + 1):
    try:
      step()
    except (StopIteration, tf.errors.OutOfRangeError):
      learner.restart_input()
      restarts += 1
    if i % (STEPS // 12) == 0:
      print(MODE, i, round(process.memory_info().rss / 1e6, 1), f"{time.time() - start:.0f}s", f"{restarts} restarts",
            flush=True)


if __name__ == "__main__":
  main()
