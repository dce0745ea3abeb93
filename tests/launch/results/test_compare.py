"""`rlrep compare`: seeds pooled into mean and band, groups labelled by what differs, references, bad input."""

import imageio.v2 as imageio
import numpy as np
import pytest

from agents.d4pg import D4PGConfig
from launch import cli
from launch.metrics_log import MetricsLog
from launch.results import compare
from launch.experiment import Experiment, prepare_output_dir


def _run(root, name, returns, seed=0, task="cartpole-swingup", agent_name="d4pg", config=D4PGConfig, **agent):
  experiment = Experiment(task=task, seed=seed, out=str(root / name), agent=agent_name,
                          agent_config=config(**agent))
  prepare_output_dir(experiment, resume=False, overwrite=False)
  log = MetricsLog(experiment.out_dir, "eval")
  for frames, value, *updates in returns:  # (frames, return) or (frames, return, learner updates)
    log.write({"frames": frames, "eval_return": value, **({"learner_steps": updates[0]} if updates else {})})
  return str(experiment.out_dir)


def test_seeds_pool_into_a_mean_with_a_band_and_settings_label_the_groups(tmp_path):
  runs = [_run(tmp_path, "a0", [(0, 10), (100, 30), (200, 50)], seed=0),
          _run(tmp_path, "a1", [(0, 20), (110, 50), (210, 90)], seed=1),
          _run(tmp_path, "b0", [(0, 5), (100, 5)], learning_rate=1e-3)]
  curves = {c.label: c for c in compare.group_runs(runs)}
  assert set(curves) == {"d4pg cartpole-swingup (learning_rate=0.0001)",
                         "d4pg cartpole-swingup (learning_rate=0.001)"}
  seeds = curves["d4pg cartpole-swingup (learning_rate=0.0001)"]
  assert seeds.runs == 2 and seeds.frames[-1] == 200  # up to where both seeds were evaluated
  # at 100 frames: run a0 30, run a1 interpolated between (0, 20) and (110, 50): 20 + 30 * 100 / 110
  np.testing.assert_allclose(seeds.at(100), (30 + 20 + 30 * 100 / 110) / 2)
  assert seeds.low[1] == 30 and seeds.high[1] == pytest.approx(20 + 30 * 100 / 110)
  assert np.isnan(curves["d4pg cartpole-swingup (learning_rate=0.001)"].at(150))  # beyond its last evaluation


def test_runs_that_differ_only_in_how_they_store_replay_pool_as_seeds(tmp_path):
  import json
  chunked = _run(tmp_path, "chunked", [(0, 10), (100, 30)], seed=0, replay_chunk_length=16)
  saved = _run(tmp_path, "saved", [(0, 20), (100, 50)], seed=1)
  settings = json.loads((tmp_path / "saved" / "experiment.json").read_text())
  (tmp_path / "saved" / "experiment.json").write_text(json.dumps({**settings, "checkpoint_replay": True}))
  (curve,) = compare.group_runs([chunked, saved])
  assert curve.runs == 2 and curve.label == "d4pg cartpole-swingup"


def test_runs_are_grouped_by_what_defines_them_but_the_seed():
  run = Experiment(task="walker-walk", seed=4, actors=3, agent_config=D4PGConfig(precision="float32"))
  grouping = compare.grouping_settings(run.to_json())
  assert grouping == {name: value for name, value in run.defining_settings().items() if name != "seed"}
  assert "agent_config.n_step" in grouping and not {"seed", "actors", "agent_config.precision"} & set(grouping)


def test_a_run_written_by_an_older_version_groups_with_new_runs_of_the_same_settings(tmp_path):
  import json
  old, new = _run(tmp_path, "old", [(0, 10), (100, 30)], seed=0), _run(tmp_path, "new", [(0, 20), (100, 50)], seed=1)
  settings = json.loads((tmp_path / "old" / "experiment.json").read_text())
  settings.update(settings.pop("cluster"))  # cluster settings sat at the top level before ClusterConfig
  del settings["agent_config"]["steps_per_call"], settings["video_size"]  # fields added since take defaults
  (tmp_path / "old" / "experiment.json").write_text(json.dumps(settings))
  (curve,) = compare.group_runs([old, new])
  assert curve.runs == 2 and curve.label == "d4pg cartpole-swingup"


def test_the_cli_writes_a_png_and_prints_the_table_with_references(tmp_path, capsys):
  run = _run(tmp_path, "r", [(0, 1), (100_000, 300), (200_000, 500)])
  reference = tmp_path / "published.csv"
  reference.write_text("frames,return,seed\n0,10,1\n0,20,2\n100000,600,1\n100000,700,2\n")
  out = tmp_path / "plot.png"
  assert cli.main(["compare", run, "--reference", str(reference), "--out", str(out), "--at", "100000,150000"]) == 0
  printed = capsys.readouterr().out
  rows = {line.split()[0]: line.split() for line in printed.splitlines()[2:4]}
  assert rows["d4pg"][-2:] == ["300.0", "400.0"]
  assert rows["published"][1:] == ["2", "650.0"]  # two seeds averaged; nothing beyond its last frames
  assert imageio.imread(out).std() > 10


def test_references_are_read_at_the_runs_learner_updates_given_their_schedule(tmp_path, capsys):
  runs = [_run(tmp_path, "s0", [(0, 0, 0), (100_000, 300, 10_000), (200_000, 500, 22_000)], seed=0),
          _run(tmp_path, "s1", [(0, 0, 0), (100_000, 500, 12_000)], seed=1)]
  reference = tmp_path / "published.csv"
  reference.write_text("frames,return\n0,0\n40000,200\n50000,400\n100000,900\n")
  assert cli.main(["compare", *runs, "--reference", str(reference), "--out", str(tmp_path / "p.png"),
                   "--at", "100000,200000", "--equal-updates", "drqv2"]) == 0
  printed = capsys.readouterr().out
  rows = [line.split() for line in printed.split("at equal learner updates")[1].splitlines() if "d4pg" in line]
  # 11,000 updates (the seeds' mean) = 4,000 + 4 x 11,000 = 48,000 frames of the reference: 200 + 200 x 0.8
  assert rows == [["d4pg", "cartpole-swingup", "100,000", "11,000", "400.0", "360.0", "(48,000)"]]  # s1 ends at 100k
  assert compare.DRQV2_UPDATES.frames_at(11_000) == 48_000


def test_a_committed_result_directory_reads_like_its_run(tmp_path):
  run = tmp_path / _run(tmp_path, "r", [(0, 1), (100, 30)])
  (run / "eval.csv").write_text((run / "logs" / "eval.csv").read_text())  # as benchmarks/results/ keeps it
  (run / "logs" / "eval.csv").unlink()
  (curve,) = compare.group_runs([run])
  assert curve.at(100) == 30


def test_runs_of_different_tasks_are_labelled_by_task(tmp_path):
  runs = [_run(tmp_path, "s", [(0, 1), (10, 2)]), _run(tmp_path, "w", [(0, 3), (10, 4)], task="walker-walk")]
  assert sorted(c.label for c in compare.group_runs(runs)) == ["d4pg cartpole-swingup", "d4pg walker-walk"]


def test_runs_of_different_agents_are_labelled_by_agent_and_the_settings_both_have(tmp_path):
  from agents.ddpg import DDPGConfig
  runs = [_run(tmp_path, "d4pg", [(0, 1), (10, 2)]),
          _run(tmp_path, "ddpg", [(0, 3), (10, 4)], agent_name="ddpg", config=DDPGConfig,
               learning_rate=1e-3)]
  # sigma, tau and gradient clipping differ too (each agent's defaults); vmax or target_noise only one has
  assert sorted(c.label for c in compare.group_runs(runs)) == [
      "d4pg cartpole-swingup (learning_rate=0.0001, max_gradient_norm=40.0, saturation_penalty=0.01, sigma=0.2, "
      "target_update_tau=0.0)",
      "ddpg cartpole-swingup (learning_rate=0.001, max_gradient_norm=0.0, saturation_penalty=0.0, sigma=0.1, "
      "target_update_tau=0.01)"]


@pytest.mark.parametrize("make, message", [
    (lambda tmp: ["compare", str(tmp)], "is not an rlrep run with evaluations (no experiment.json)"),
    (lambda tmp: ["compare", _run(tmp, "r", [(0, 1)]), "--reference", str(tmp / "none.csv")], "no such file"),
    (lambda tmp: ["compare", _run(tmp, "r", [(0, 1)]), "--reference", _csv(tmp, "step,value\n1,2\n")],
     "needs 'frames' and 'return' columns, found ['step', 'value']"),
    (lambda tmp: ["compare", _run(tmp, "r", [(0, 1, 0)]), "--equal-updates", "drqv2"], "add a --reference"),
    (lambda tmp: ["compare", _run(tmp, "r", [(0, 1)]), "--reference", _csv(tmp, "frames,return\n0,1\n"),
                  "--equal-updates", "4000,4"], "has no learner_steps column"),
    (lambda tmp: ["compare", str(tmp), "--equal-updates", "often"], "expected drqv2 or START_FRAMES,FRAMES_PER_UPDATE"),
    (lambda tmp: ["compare", str(tmp), "--equal-updates", "4000,0"], "FRAMES_PER_UPDATE > 0"),
])
def test_bad_input_is_a_message_not_a_traceback(tmp_path, capsys, monkeypatch, make, message):
  arguments = make(tmp_path)
  monkeypatch.chdir(tmp_path)  # where the default --out would land
  assert cli.main(arguments) == 2
  assert message in capsys.readouterr().err
  assert not (tmp_path / "comparison.png").exists()  # refused input writes nothing


def test_bad_frame_budgets_are_refused_by_the_parser(tmp_path, capsys):
  assert cli.main(["compare", str(tmp_path), "--at", "many"]) == 2
  assert "comma-separated frame counts" in capsys.readouterr().err


def _csv(tmp, text):
  path = tmp / "bad.csv"
  path.write_text(text)
  return str(path)
