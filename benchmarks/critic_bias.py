"""How far a trained D4PG critic is from the truth: its value of the policy's action vs the realised return.

Loads a run's latest checkpoint, plays `--episodes` evaluation episodes with the deterministic policy and,
at every agent step of a standard-length episode, compares the critic's expected value Q(s, pi(s)) with the
discounted return that actually followed (discount per agent step, as the learner uses it). Also prints how
saturated the policy's actions are. The question it answers: when a run plateaus, is the critic still
optimistic or pessimistic, and does it rank states the right way?

The learner bootstraps through the task's time limit (dm_control ends an episode there with discount 1), so
its critic estimates a return that does not stop at the limit. Each episode is therefore played
`--length-factor` times the task's time limit and only the steps of a standard episode are scored: what the
realised returns still leave out weighs at most discount ** (steps played after the last scored one), which
is printed. (Before this tool played past the limit, each episode stopped there and its first half was scored,
so the realised returns missed up to ~half of the discounted return and a sound critic read as optimistic.)

Usage: python benchmarks/critic_bias.py RUN_DIR [--episodes 3] [--length-factor 4]
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import rlrep  # noqa: E402
from agents.d4pg.learning import Learner  # noqa: E402
from environments import dmc  # noqa: E402
from launch.checkpoints import CheckpointStore  # noqa: E402
from launch.experiment import load_experiment  # noqa: E402


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("run", help="a directory written by `rlrep train`")
  parser.add_argument("--episodes", type=int, default=3)
  parser.add_argument("--length-factor", type=int, default=4,
                      help="episodes are played this many times the task's time limit (>= 2)")
  args = parser.parse_args()
  if args.length_factor < 2:
    parser.error("--length-factor must be at least 2: with 1 the realised returns stop at the time limit.")
  experiment = load_experiment(args.run)
  config = experiment.agent_config
  builder = experiment.make_builder()
  learner = Learner(rlrep.make_replicator("cpu:1"), builder.observation_spec, builder.action_spec, config,
                    experiment.seed)
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

  limit_s, limit_steps = dmc.default_time_limit(experiment.task)
  scored = -(-limit_steps // config.action_repeat)  # agent steps in a standard episode
  environment = builder.make_environment(seed=experiment.seed + 20_000, time_limit=args.length_factor * limit_s)
  predicted, realised, saturated, played = [], [], [], []
  for _ in range(args.episodes):
    timestep, values, rewards = environment.reset(), [], []
    while not timestep.last():
      observation = {k: v[None] for k, v in timestep.observation.items()}
      action, preactivation, value = act_and_value(observation)
      if len(rewards) < scored:
        values.append(float(value[0]))
        saturated.append(float(np.mean(np.abs(np.tanh(preactivation.numpy())) > 0.95)))
      timestep = environment.step(action.numpy()[0])
      rewards.append(float(timestep.reward))
    returns, following = np.zeros(len(rewards)), 0.0
    for t in reversed(range(len(rewards))):
      following = rewards[t] + config.discount * following
      returns[t] = following
    predicted.extend(values)
    realised.extend(returns[:scored])
    played.append(len(rewards))
  predicted, realised = np.array(predicted), np.array(realised)
  left_out = config.discount ** (min(played) - scored)
  print(f"{experiment.task} at learner step {state['learner_steps']:,d} ({state['frames']:,d} frames), "
        f"{args.episodes} episode(s) of {min(played)} agent steps, the first {scored} scored "
        f"(returns leave out at most {left_out:.1%} of their discounted sum):")
  print(f"  critic Q(s, pi(s)) mean {predicted.mean():8.1f}   realised discounted return mean {realised.mean():8.1f}")
  bias, ratio = np.mean(predicted - realised), predicted.mean() / realised.mean()
  print(f"  bias (critic - realised) {bias:+8.1f}   ratio {ratio:.2f}")
  print(f"  correlation across states {np.corrcoef(predicted, realised)[0, 1]:+.2f}")
  print(f"  actions with |tanh| > 0.95: {np.mean(saturated):.0%}")
  environment.close()


if __name__ == "__main__":
  main()
