"""The evaluator role plays whole episodes through the acting loop with the weights it pulled, logs their
return, writes the first episode's video at the video size, and can be abandoned mid-episode (a stopping
run) without logging anything."""

import numpy as np

from environments import recording
from launch import metrics, roles
from launch.roles.evaluator import EVALUATOR_ABANDON_CHECK_STEPS, VideoRecorder
from rlrep import replay


def _publish_untrained(experiment, address):
  policy = experiment.make_builder().make_policy(evaluation=True)
  replay.WeightPublisher(replay.connect(address)).publish(0, policy.params())


def test_an_evaluation_plays_every_episode_and_logs_it_at_0_frames_when_untrained(replay_server):
  experiment, address = replay_server
  _publish_untrained(experiment, address)
  announced = []
  evaluator = roles.Evaluator(experiment, experiment.make_builder(), address, announced.append)
  try:
    row = evaluator.evaluate({"frames": 4000, "learner_steps": 0})
  finally:
    evaluator.close()
  assert row["frames"] == 0 and row["weights_version"] == 0  # the untrained policy is the curve's first point
  assert 0 <= row["eval_return"] <= 500  # 500 agent steps (action repeat 2), reward <= 1 per step
  assert [r["eval_return"] for r in metrics.read_log(experiment.out_dir, "eval")] == [row["eval_return"]]
  assert "evaluation at 0 frames" in announced[0]
  assert (experiment.out_dir / evaluator.results[0]["video"]).stat().st_size > 0


def test_an_abandoned_evaluation_logs_nothing_and_the_next_one_starts_a_fresh_episode(replay_server):
  experiment, address = replay_server
  _publish_untrained(experiment, address)
  evaluator = roles.Evaluator(experiment, experiment.make_builder(), address, lambda line: None)
  asked = []
  try:
    assert evaluator.evaluate({"frames": 0, "learner_steps": 0}, abandon=lambda: asked.append(1) or True) is None
    assert not (experiment.out_dir / "logs" / "eval.csv").exists() and not evaluator.results
    assert len(asked) == 1  # asked once, after EVALUATOR_ABANDON_CHECK_STEPS steps
    row = evaluator.evaluate({"frames": 0, "learner_steps": 0})
  finally:
    evaluator.close()
  assert row is not None and len(metrics.read_log(experiment.out_dir, "eval")) == 1
  assert EVALUATOR_ABANDON_CHECK_STEPS < 500


def test_the_video_recorder_keeps_the_first_episode_only_with_a_running_return(replay_server):
  experiment, _ = replay_server
  environment = experiment.make_builder().make_environment(seed=3, render_size=48)
  video = VideoRecorder(environment, 48, camera=0, frames_evaluated=1234)
  try:
    timestep = environment.reset()
    video.observe_first(timestep)
    steps = 0
    while not timestep.last():
      timestep = environment.step(np.zeros(1, np.float32))
      video.observe(np.zeros(1, np.float32), timestep)
      steps += 1
    video.observe_first(environment.reset())  # a second episode is not recorded
  finally:
    environment.close()
  assert len(video.frames) == steps + 1
  assert video.frames[0].shape == (48 + recording.CAPTION_HEIGHT, 48, 3)
