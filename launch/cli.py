"""The `rlrep` command: `rlrep doctor`, `rlrep rollout`; see `rlrep --help`."""

from __future__ import annotations

import argparse
import sys


def _doctor(_: argparse.Namespace) -> int:
  from launch import doctor
  return doctor.run()


def _rollout(args: argparse.Namespace) -> int:
  from launch import rollout
  result = rollout.rollout(args.task, args.steps, args.out, size=args.size, render_quality=args.render_quality,
                           action_repeat=args.action_repeat, frame_stack=args.frame_stack, seed=args.seed,
                           video_format=args.video_format)
  print(f"{result.frames} frames at {result.frames_per_second:.1f} frames/s; wrote {result.video} and {result.strip}")
  return 0


def build_parser() -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(
      prog="rlrep", description="Distributed RL from pixels on DeepMind Control Suite tasks.",
      formatter_class=argparse.ArgumentDefaultsHelpFormatter)
  commands = parser.add_subparsers(dest="command", required=True)

  doctor = commands.add_parser("doctor", help="check the Python stack, GL rendering and TF devices")
  doctor.set_defaults(handler=_doctor)

  rollout = commands.add_parser("rollout", help="step a task with random actions; write a video and a frame strip",
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
  rollout.add_argument("--task", default="walker-walk", help="'domain-task', e.g. cheetah-run")
  rollout.add_argument("--steps", type=int, default=200, help="agent steps (each is --action-repeat frames)")
  rollout.add_argument("--out", default="runs/rollout", help="output directory")
  rollout.add_argument("--size", type=int, default=84, help="image height and width in pixels")
  rollout.add_argument("--render-quality", choices=("standard", "fast"), default="standard",
                       help="'fast' drops shadows, reflections and multisampling (~10x faster in software)")
  rollout.add_argument("--action-repeat", type=int, default=2)
  rollout.add_argument("--frame-stack", type=int, default=3)
  rollout.add_argument("--seed", type=int, default=0)
  rollout.add_argument("--video-format", choices=("mp4", "gif"), default="mp4")
  rollout.set_defaults(handler=_rollout)
  return parser


def main(argv: list[str] | None = None) -> int:
  args = build_parser().parse_args(argv)
  try:
    return args.handler(args)
  except ValueError as error:  # bad settings: the message says what to change
    print(f"rlrep {args.command}: error: {error}", file=sys.stderr)
    return 2


if __name__ == "__main__":
  sys.exit(main())
