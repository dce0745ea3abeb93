"""The evaluator plays whole episodes through the acting loop with the learner's weights, records the first one
and can be abandoned. A real Reverb server and environment."""

import dataclasses
import math

import imageio.v2 as imageio

from launch.roles.evaluator import Evaluator
from rlrep import replay


def test_an_evaluation_scores_whole_episodes_and_records_the_first(replay_server):
  experiment, address = replay_server
  experiment = dataclasses.replace(experiment, eval_episodes=2, video_format="gif", video_size=32)
  builder = experiment.make_builder()
  replay.WeightPublisher(replay.connect(address)).publish(0, builder.make_policy(evaluation=True).params())
  lines = []
  evaluator = Evaluator(experiment, builder, address, announce=lines.append)
  try:
    first = evaluator.evaluate({"frames": 1234, "learner_steps": 0})
    abandoned = evaluator.evaluate({"frames": 2000, "learner_steps": 0}, abandon=lambda: True)
  finally:
    evaluator.close()
  assert first["frames"] == 0  # the untrained weights are the curve's first point, whatever the actors did
  assert math.isfinite(first["eval_return"]) and first["weights_version"] == 0
  assert "over 2 episode(s)" in lines[0]
  video = experiment.out_dir / evaluator.results[0]["video"]
  assert len(imageio.mimread(video)) > 10  # one episode of frames (a GIF merges repeated ones)
  assert abandoned is None and len(evaluator.results) == 1
