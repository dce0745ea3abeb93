"""RSS of the learner role's outputs taken apart, without Ray and without training (the soak's settings:
cartpole-swingup, 32x32, batch 32), by MODE:
  checkpoint   launch.checkpoints.CheckpointStore.save of D4PG's learner, the step counter moved between saves
  metrics      launch.metrics_log.MetricsLog.write of a train.csv row as wide as the learner's (CSV and TensorBoard)
  params       the learner's policy_params() (the weights it publishes, read from its variables)
  publish      rlrep.replay.WeightPublisher.publish of policy_params() to the replay server in this process
  publish-same the same, publishing one set of weights read once
Run with MALLOC_ARENA_MAX=2 to match rlrep's role processes.

Usage: python benchmarks/probes/learner_role_pieces.py MODE COUNT"""
import pathlib, shutil, sys, time
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))  # the repository

from learner_over_grpc import EXPERIMENT  # the soak's agent settings

MODE, COUNT = sys.argv[1], int(sys.argv[2])
OUT = pathlib.Path("/tmp/probe-learner-role")


def main():
  import psutil, rlrep
  from rlrep import replay
  from launch.checkpoints import CheckpointStore
  from launch.metrics_log import MetricsLog
  from launch.roles.replay_server import make_replay_server
  shutil.rmtree(OUT, ignore_errors=True)
  server = make_replay_server(EXPERIMENT.make_builder())  # the learner needs an address; it never samples here
  learner = EXPERIMENT.make_builder().make_learner(rlrep.make_replicator("cpu:1"), f"localhost:{server.port}",
                                                  seed=EXPERIMENT.seed)
  store, log = CheckpointStore(OUT / "checkpoints"), MetricsLog(OUT, "train")
  publisher, weights = replay.WeightPublisher(replay.connect(f"localhost:{server.port}")), learner.policy_params()
  row = {name: 1.0 for name in ("frames_per_s", "learner_steps", "learner_steps_per_s", "episodes", "episode_return",
                                "replay_size", "weights_staleness", "actor_wait_share", "learner_wait_share",
                                "actor_restarts", "critic_loss", "policy_loss", "q_mean", "grad_norm")}
  process, start = psutil.Process(), time.time()
  for i in range(1, COUNT + 1):
    if MODE == "checkpoint":
      learner.state.num_steps.assign_add(1)
      store.save(learner, {"frames": i, "episodes": i, "learner_steps": i})
    elif MODE == "metrics":
      log.write({"frames": i * 100, **row})
    elif MODE == "params":
      learner.policy_params()
    else:
      publisher.publish(i, learner.policy_params() if MODE == "publish" else weights)
    if i % max(COUNT // 12, 1) == 0:
      print(MODE, i, round(process.memory_info().rss / 1e6, 1), f"{time.time() - start:.0f}s", flush=True)


if __name__ == "__main__":
  main()
