"""The experiment description: validated at once, saved beside the run, read back exactly for --resume."""

import dataclasses
import json
import pathlib
import shutil

import pytest

from agents.d4pg import D4PGConfig
from agents.ddpg import DDPGConfig
from launch.cluster.config import ClusterConfig
from launch.experiment import Experiment, load_experiment, prepare_output_dir


def test_every_problem_is_listed_at_once():
  with pytest.raises(ValueError) as error:
    Experiment(agent="dqn", mode="kubernetes", actors=0, envs_per_actor=0, frames=0, video_format="avi")
  for message in ("unknown agent 'dqn'", "unknown mode 'kubernetes'", "actors must be >= 1",
                  "envs_per_actor must be >= 1", "frames must be >= 1", "mp4 or gif"):
    assert message in str(error.value)


def test_a_saved_experiment_loads_back_equal_with_tuples_restored(tmp_path):
  experiment = Experiment(task="cartpole-swingup", envs_per_actor=4, out=str(tmp_path / "run"),
                          cluster=ClusterConfig(image="r/rlrep:1", volume_bucket="runs-bucket"),
                          agent_config=D4PGConfig(hidden_sizes=(64, 32), batch_size=32))
  prepare_output_dir(experiment, resume=False, overwrite=False)
  saved = json.loads((tmp_path / "run" / "experiment.json").read_text())
  assert saved["agent_config"]["hidden_sizes"] == [64, 32]
  assert saved["cluster"]["volume_bucket"] == "runs-bucket" and "image" not in saved  # grouped, not at the top
  assert load_experiment(tmp_path / "run") == experiment


def test_an_experiment_json_from_before_the_cluster_settings_were_grouped_still_loads(tmp_path):
  flat = Experiment(out=str(tmp_path)).to_json()
  flat.pop("cluster")
  flat.update(image="r/rlrep:0", namespace="rl", tpu_accelerator="tpu-v4-podslice", tpu_topology="2x2x1",
              gpu_accelerator="nvidia-l4", volume_claim="old-runs")
  (tmp_path / "experiment.json").write_text(json.dumps(flat))
  assert load_experiment(tmp_path) == Experiment(out=str(tmp_path), cluster=ClusterConfig(
      image="r/rlrep:0", namespace="rl", tpu_accelerator="tpu-v4-podslice", tpu_topology="2x2x1",
      volume_claim="old-runs"))


# A run made before the agent's config stopped holding a seed of its own: its experiment.json holds both seeds.
COMMITTED_RUN = pathlib.Path(__file__).resolve().parents[2] / "benchmarks/results/runs/d4pg/cartpole-swingup/seed0"


def test_an_experiment_json_holding_the_agents_own_seed_still_loads_resumes_and_is_saved_without_it(tmp_path):
  saved = json.loads((COMMITTED_RUN / "experiment.json").read_text())
  assert saved["agent_config"]["seed"] == saved["seed"] == 0  # as the CLI saved every run: both the same
  shutil.copy(COMMITTED_RUN / "experiment.json", tmp_path / "experiment.json")
  from launch.modes.train import resolve_experiment
  resumed = resolve_experiment(None, str(tmp_path), {"frames": 300_000})
  assert (resumed.seed, resumed.frames, resumed.agent_config.learning_rate) == (0, 300_000, 3e-4)
  prepare_output_dir(resumed, resume=True, overwrite=False)  # as --resume does
  assert "seed" not in json.loads((tmp_path / "experiment.json").read_text())["agent_config"]
  assert load_experiment(tmp_path) == resumed


def test_an_experiment_json_whose_agent_seed_differs_from_its_seed_is_refused_saying_what_to_do():
  saved = json.loads((COMMITTED_RUN / "experiment.json").read_text())
  saved["agent_config"]["seed"] = 5
  with pytest.raises(ValueError, match=r"learner with agent_config.seed 5 and the environments with seed 0; an "
                                       r"experiment has one seed now, .* start it again"):
    Experiment.from_json(saved)


def test_a_run_is_defined_by_its_agent_task_seed_and_learning_settings_not_by_budget_scale_or_logging():
  run = Experiment(task="cartpole-swingup", seed=1, agent_config=D4PGConfig(n_step=5))
  agent_config = dataclasses.replace(run.agent_config, precision="float32", steps_per_call=4, replay_chunk_length=16)
  elsewhere = dataclasses.replace(run, frames=5, actors=4, envs_per_actor=2, mode="local", replicas="cpu:2",
                                  out="elsewhere", eval_every_frames=5, eval_episodes=3, log_every_s=1.0,
                                  publish_every_steps=3, video_size=64, cluster=ClusterConfig(image="r/rlrep:2"),
                                  agent_config=agent_config)
  assert elsewhere.defining_settings() == run.defining_settings()
  assert {name for name in run.defining_settings() if not name.startswith("agent_config.")} == {"agent", "task", "seed"}
  for other in (dataclasses.replace(run, seed=2), dataclasses.replace(run, task="walker-walk"),
                dataclasses.replace(run, agent_config=D4PGConfig(n_step=3)),
                dataclasses.replace(run, agent="ddpg", agent_config=DDPGConfig(n_step=5))):
    assert other.defining_settings() != run.defining_settings()


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


def test_resuming_keeps_the_saved_cluster_settings_but_those_given_again(tmp_path):
  from launch.modes.train import resolve_experiment
  saved = Experiment(out=str(tmp_path), cluster=ClusterConfig(namespace="rl", volume_bucket="team-runs"))
  prepare_output_dir(saved, resume=False, overwrite=False)
  resumed = resolve_experiment(None, str(tmp_path), {"frames": 5}, {"image": "r/rlrep:2"})
  assert resumed.frames == 5 and resumed.cluster == ClusterConfig(namespace="rl", volume_bucket="team-runs",
                                                                  image="r/rlrep:2")


def test_wandb_is_a_logs_option_and_an_experiment_saved_before_it_loads_without_it(tmp_path):
  import argparse

  from launch.cli import options
  parser = argparse.ArgumentParser()
  groups = options.add_dataclass_options(parser, Experiment, skip=("cluster", "agent_config"))
  assert "wandb" in [action.dest for action in groups["evaluation, logs and checkpoints"]._group_actions]
  assert options.given_values(parser.parse_args(["--wandb", "walker-sweep"]), Experiment) == {"wandb": "walker-sweep"}
  older = Experiment(out=str(tmp_path)).to_json()
  del older["wandb"]
  (tmp_path / "experiment.json").write_text(json.dumps(older))
  assert load_experiment(tmp_path).wandb is None


@pytest.mark.parametrize("settings, message", [
    ({}, "runs a learner process per host: use --mode local"),
    ({"mode": "local", "replicas": "tpu"}, "would need a multi-host TPU slice, which rlrep does not run"),
    ({"mode": "cluster", "replicas": "cpu:4"}, "takes --replicas cpu, gpu, gpu:N or auto"),
    ({"mode": "local", "replicas": "multi_worker"}, "rlrep builds the hosts' TF_CONFIG itself"),
])
def test_a_learner_on_several_hosts_is_refused_where_rlrep_cannot_run_one(settings, message):
  with pytest.raises(ValueError, match=message):
    Experiment(learner_hosts=2, **settings)


def test_a_learner_on_several_hosts_runs_on_cpus_or_gpus_in_local_and_cluster_mode():
  for mode in ("local", "cluster"):
    for replicas in ("cpu", "gpu", "gpu:4", "auto"):
      assert Experiment(mode=mode, replicas=replicas, learner_hosts=3).learner_hosts == 3
