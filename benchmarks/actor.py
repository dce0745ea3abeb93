"""An actor's frames/s (D4PG policy inference and replay writes included) vs a bare dm_control loop, in one run.

The actor is `rlrep.acting.Actor` exactly as training runs it: the wrapped pixel environment (84x84, frame
stack 3, action repeat 2), the D4PG policy network with exploration noise, and the frame-deduplicated adder
writing to a real Reverb server (no rate limiter, so only the cost of writing counts), with one environment
and with `--envs` environments sharing each batched policy call (`--envs-per-actor` in training). The bare
loop does the same physics steps and renders with one reused camera and no policy, no stacking, no replay.
All loops run in alternating rounds so that load on the machine hits them alike.

Usage: python benchmarks/actor.py [--task walker-walk] [--render-quality fast] [--envs 8] [--seconds 20]
"""

from __future__ import annotations

import argparse
import dataclasses
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import reverb  # noqa: E402

from agents.d4pg import D4PGBuilder, D4PGConfig  # noqa: E402
from render import bare_loops, calls_per_second  # noqa: E402  (benchmarks/render.py)
from rlrep import acting, replay  # noqa: E402


def make_actor(builder: D4PGBuilder, client: reverb.Client, envs: int) -> acting.Actor:
  policy = builder.make_policy()
  replay.WeightPublisher(client).publish(0, policy.params())  # stands in for the learner's first weights
  weights = replay.WeightClient(client, builder.config.weights_update_period)
  weights.wait(should_stop=lambda: False)
  environments = [builder.make_environment(seed=i) for i in range(envs)]
  return acting.Actor(environments, policy, [builder.make_adder(client) for _ in environments], weights)


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--task", default="walker-walk")
  parser.add_argument("--render-quality", default="fast", choices=("standard", "fast"))
  parser.add_argument("--envs", type=int, default=8, help="environments per actor for the batched figure")
  parser.add_argument("--seconds", type=float, default=20.0, help="measuring time per loop (split in rounds)")
  args = parser.parse_args()

  config = dataclasses.replace(D4PGConfig(), render_quality=args.render_quality, samples_per_insert=None,
                               min_replay_size=1)
  builder = D4PGBuilder(args.task, config)
  server = reverb.Server(builder.make_tables())
  client = reverb.Client(f"localhost:{server.port}")
  single, batched = make_actor(builder, client, 1), make_actor(builder, client, args.envs)
  frames_per_step = config.action_repeat
  loops = {"actor": (lambda: single.run(rounds=1), 1),
           "batched": (lambda: batched.run(rounds=1), args.envs),
           "bare": (bare_loops(args.task, args.render_quality, config.image_size,
                               config.action_repeat)["bare_camera"], 1)}
  rounds, rates = 3, {name: 0.0 for name in loops}
  for _ in range(rounds):
    for name, (loop, steps_per_call) in loops.items():
      rates[name] += frames_per_step * steps_per_call * calls_per_second(loop, args.seconds / rounds) / rounds
  server.stop()
  print(f"{args.task}, 84x84, frame stack 3, action repeat 2, render quality {args.render_quality} "
        f"({os.environ.get('MUJOCO_GL')}, {os.cpu_count()} cores):")
  print(f"  rlrep actor, 1 environment (policy + noise + replay writes)  {rates['actor']:7.1f} frames/s")
  print(f"  rlrep actor, {args.envs} environments, one policy call per round  {rates['batched']:7.1f} frames/s")
  print(f"  bare dm_control step + render                                 {rates['bare']:7.1f} frames/s")
  print(f"  ratio actor / bare: 1 environment {rates['actor'] / rates['bare']:.3f}, "
        f"{args.envs} environments {rates['batched'] / rates['bare']:.3f}")


if __name__ == "__main__":
  main()
