"""How far a trained D4PG critic is from the truth: its value of the policy's action vs the realised return.

Loads a run's latest checkpoint, plays `--episodes` evaluation episodes with the deterministic policy and,
at every agent step, compares the critic's expected value Q(s, pi(s)) with the discounted return that
actually followed (discount per agent step, as the learner uses it; the episode's time limit is the
cut-off, so late steps see a truncated return and only the first half of each episode is scored). Also
prints how saturated the policy's actions are. The question it answers: when a run plateaus, is the critic
still optimistic or pessimistic, and does it rank states the right way?

Usage: python benchmarks/critic_bias.py RUN_DIR [--episodes 3]
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import rlrep  # noqa: E402
from agents.d4pg.learning import Learner  # noqa: E402
from launch.checkpoints import CheckpointStore  # noqa: E402
from launch.experiment import load_experiment  # noqa: E402


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("run", help="a directory written by `rlrep train`")
  parser.add_argument("--episodes", type=int, default=3)
  args = parser.parse_args()
  experiment = load_experiment(args.run)
  config = experiment.agent_config
  builder = experiment.make_builder()
  learner = Learner(rlrep.make_replicator("cpu:1"), builder.observation_spec, builder.action_spec, config)
  state = CheckpointStore(experiment.out_dir / "checkpoints").restore(learner)
  if state is None:
    raise SystemExit(f"{args.run} has no checkpoint yet.")
  networks = learner.state.networks

  @tf.function
  def act_and_value(observation):
    features = networks.encoder(observation)
    preactivation = networks.policy.preactivation(features)
    action = networks.policy.squash(preactivation)
    return action, preactivation, networks.critic.expected_value(networks.critic(features, action))

  environment = builder.make_environment(seed=experiment.seed + 20_000)
  predicted, realised, saturated = [], [], []
  for _ in range(args.episodes):
    timestep, values, rewards = environment.reset(), [], []
    while not timestep.last():
      observation = {k: v[None] for k, v in timestep.observation.items()}
      action, preactivation, value = act_and_value(observation)
      values.append(float(value[0]))
      saturated.append(float(np.mean(np.abs(np.tanh(preactivation.numpy())) > 0.95)))
      timestep = environment.step(action.numpy()[0])
      rewards.append(float(timestep.reward))
    returns = np.zeros(len(rewards))
    following = 0.0
    for t in reversed(range(len(rewards))):
      following = rewards[t] + config.discount * following
      returns[t] = following
    half = len(rewards) // 2  # later steps' returns are cut off by the time limit, not by the task
    predicted.extend(values[:half])
    realised.extend(returns[:half])
  predicted, realised = np.array(predicted), np.array(realised)
  print(f"{experiment.task} at learner step {state['learner_steps']:,d} ({state['frames']:,d} frames), "
        f"{args.episodes} episode(s), first half of each:")
  print(f"  critic Q(s, pi(s)) mean {predicted.mean():8.1f}   realised discounted return mean {realised.mean():8.1f}")
  bias, ratio = np.mean(predicted - realised), predicted.mean() / realised.mean()
  print(f"  bias (critic - realised) {bias:+8.1f}   ratio {ratio:.2f}")
  print(f"  correlation across states {np.corrcoef(predicted, realised)[0, 1]:+.2f}")
  print(f"  actions with |tanh| > 0.95: {np.mean(saturated):.0%}")
  environment.close()


if __name__ == "__main__":
  main()
