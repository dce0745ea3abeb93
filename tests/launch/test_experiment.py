"""The experiment description: validated at once, saved beside the run, read back exactly for --resume."""

import json

import pytest

from agents.d4pg import D4PGConfig
from launch.experiment import Experiment, load_experiment, prepare_output_dir


def test_every_problem_is_listed_at_once():
  with pytest.raises(ValueError) as error:
    Experiment(agent="dqn", mode="kubernetes", actors=0, envs_per_actor=0, frames=0, video_format="avi")
  for message in ("unknown agent 'dqn'", "unknown mode 'kubernetes'", "actors must be >= 1",
                  "envs_per_actor must be >= 1", "frames must be >= 1", "mp4 or gif"):
    assert message in str(error.value)


def test_a_saved_experiment_loads_back_equal_with_tuples_restored(tmp_path):
  experiment = Experiment(task="cartpole-swingup", envs_per_actor=4, out=str(tmp_path / "run"),
                          agent_config=D4PGConfig(hidden_sizes=(64, 32), batch_size=32))
  prepare_output_dir(experiment, resume=False, overwrite=False)
  assert json.loads((tmp_path / "run" / "experiment.json").read_text())["agent_config"]["hidden_sizes"] == [64, 32]
  assert load_experiment(tmp_path / "run") == experiment


def test_a_directory_with_another_run_is_refused_unless_overwritten(tmp_path):
  out = tmp_path / "run"
  out.mkdir()
  (out / "notes.txt").write_text("someone else's")
  with pytest.raises(ValueError, match="already holds files.*--resume.*--overwrite"):
    prepare_output_dir(Experiment(out=str(out)), resume=False, overwrite=False)
  prepare_output_dir(Experiment(out=str(out)), resume=False, overwrite=True)
  assert sorted(p.name for p in out.iterdir()) == ["experiment.json"]


def test_resuming_a_directory_without_an_experiment_says_so(tmp_path):
  with pytest.raises(ValueError, match="nothing to resume"):
    load_experiment(tmp_path)
