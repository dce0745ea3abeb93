"""`rlrep train`: check everything that can be checked, prepare the output directory, run in a mode.

All validation happens before any role starts, so bad input leaves nothing running and nothing written. The modes:
in-process (`inprocess.py`), local (`local.py`, a process per role under Ray) and cluster (launch/cluster/, which
submits a KubeRay job whose driver is local mode's).
"""

from __future__ import annotations

import dataclasses
import pathlib

from launch.checkpoints import CheckpointStore
from launch.cluster import submit
from launch.experiment import Experiment, load_experiment, prepare_output_dir
from launch.modes import quiet
from launch.modes.checks import check_replay_fits, check_replicas_available, choose_precision

THIRD_PARTY_LOG = "third_party.log"  # in <out>/logs: what libraries wrote to stderr, shown with --verbose


def resolve_experiment(experiment: Experiment | None, resume: str | None, overrides: dict,
                       cluster_overrides: dict | None = None) -> Experiment:
  """The experiment to run: the saved one when resuming (with `overrides`, e.g. a larger --frames, and
  `cluster_overrides` of its cluster settings, e.g. another --image)."""
  if resume is None:
    return experiment
  saved = load_experiment(resume)
  cluster = dataclasses.replace(saved.cluster, **(cluster_overrides or {}))
  return dataclasses.replace(saved, out=str(pathlib.Path(resume)), cluster=cluster, **overrides)


def train(experiment: Experiment, *, resume: bool = False, overwrite: bool = False, dry_run: bool = False,
          detach: bool = False) -> dict:
  """Validates, prepares `experiment.out` and runs the experiment in its mode; returns the summary."""
  from environments import dmc
  dmc.parse_task(experiment.task)  # an unknown task fails now, with close matches
  if experiment.mode == "cluster":
    return submit.run(experiment, dry_run=dry_run, resume=resume, overwrite=overwrite, follow=not detach)
  if dry_run or detach:
    raise ValueError(f"{'--dry-run' if dry_run else '--detach'} applies to cluster jobs only: use it with --mode "
                     "cluster.")
  if experiment.ray_address is None:  # else the learner and replay run on the cluster's nodes: local.run checks them
    check_replicas_available(experiment.replicas)
    check_replay_fits(experiment)
  choose_precision(experiment)
  if resume and CheckpointStore(experiment.out_dir / "checkpoints").latest() is None:
    raise ValueError(f"--resume {experiment.out}: no intact checkpoint in {experiment.out}/checkpoints; start it "
                     "again with --overwrite.")
  prepare_output_dir(experiment, resume=resume, overwrite=overwrite)
  # Each mode is imported once chosen: local mode needs Ray (an optional extra), in-process mode loads Reverb and
  # every role, which a cluster job's submitter needs neither of.
  if experiment.mode == "inprocess":
    from launch.modes import inprocess
    with quiet.third_party_output_to(experiment.out_dir / "logs" / THIRD_PARTY_LOG, verbose=experiment.verbose):
      return inprocess.run(experiment)
  from launch.modes import local
  return local.run(experiment, ray_address=experiment.ray_address)
