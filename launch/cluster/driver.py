"""The RayJob's entrypoint, `python -m launch.cluster.driver <experiment.json>`: local mode's driver attached to the
Ray cluster of the job it runs in.

The run writes `/rlrep-runs/<job name>/` on the job's volume. Each `rlrep train` gives its submission an id, which
the driver records there: a retried driver (same submission) continues from the checkpoint there, while a
directory left by an earlier submission is replaced with `--overwrite`, continued with `--resume OUT`, and
otherwise refused (`prepare_volume_dir`).

Nothing waits forever holding the accelerator: KubeRay starts the driver only once every pod runs, so the
RayJob's `activeDeadlineSeconds` (`--job-deadline-hours`) ends an attempt whose pods never all start, and the
driver fails an attempt whose Ray cluster does not offer every role's resources within
`--placement-timeout-s` (`wait_for_placement`).
"""

from __future__ import annotations

import argparse
import json
import logging
import pathlib
import shutil
import time
from typing import Callable

import ray

from launch.cluster.manifests import EXISTING
from launch.experiment import EXPERIMENT_FILE, Experiment, RunFailed, load_experiment, prepare_output_dir
from launch.modes import local
from launch.program import LEARNER_HOST_RESOURCE, WORKER_RESOURCE, Role, make_program

SUBMISSION_FILE = "submission"   # in the run's directory on the volume: the id of the submission that started there
PLACEMENT_POLL_S = 10.0


def prepare_volume_dir(experiment: Experiment, submission: str, existing: str) -> bool:
  """Readies the run's directory on the volume for the driver of `submission`; returns whether the run continues
  from it (a checkpoint there, if any, is resumed).

  The directory records the submission that last started in it. A retry of that submission (KubeRay runs the
  same entrypoint again) continues. A directory left by another submission is replaced when `existing` is
  "overwrite" (--overwrite), continued when "resume" (--resume, and only a run of the same experiment), and
  refused when "refuse", so that resubmitting a job name never silently resumes or ends an old run.
  """
  out = experiment.out_dir
  marker = out / SUBMISSION_FILE
  held = out.is_dir() and any(out.iterdir())
  if held and not (marker.exists() and marker.read_text().strip() == submission):
    if existing == "overwrite":
      shutil.rmtree(out)
      held = False
    elif (not (out / EXPERIMENT_FILE).exists()
          or load_experiment(out).defining_settings() != experiment.defining_settings()):
      raise RunFailed(f"{out} on the volume holds another experiment (another task, agent, seed or agent settings) "
                      "under this job name: resubmit with --overwrite to replace it, or with another --out.")
    elif existing == "refuse":
      raise RunFailed(f"{out} on the volume holds an earlier submission's run of this experiment. Continue it with "
                      "`rlrep train --resume OUT` (after `rlrep cluster stop OUT`), or resubmit with --overwrite to "
                      "start again (its outputs there are deleted: `rlrep cluster fetch OUT` copies them first).")
  prepare_output_dir(experiment, resume=held, overwrite=False)
  marker.write_text(submission + "\n")
  return held


def needed_resources(roles: tuple[Role, ...]) -> dict[str, float]:
  """The Ray resources `roles` reserve in all when placed in cluster mode, by Ray's names (CPU, GPU, TPU and
  rlrep's placement resources)."""
  totals: dict[str, float] = {}
  for role in roles:
    options = local.ray_options(role, placement=True)
    for resource, amount in (("CPU", options["num_cpus"]), ("GPU", options.get("num_gpus", 0)),
                             *options["resources"].items()):
      if amount:
        totals[resource] = totals.get(resource, 0) + amount
  return totals


_OFFERED_BY = {"CPU": "the CPU worker pods and the learner's pod", "GPU": "the learner's GPU pod",
               "TPU": "the learner's TPU pod", LEARNER_HOST_RESOURCE: "the learner's pod",
               WORKER_RESOURCE: "the CPU worker pods"}


def wait_for_placement(roles: tuple[Role, ...], available: Callable[[], dict], timeout_s: float,
                       poll_s: float = PLACEMENT_POLL_S) -> None:
  """Returns once `available()` (Ray's cluster resources) offers everything `roles` need, i.e. every pod they need
  has joined the Ray cluster; raises RunFailed naming what is missing after `timeout_s`, so that the attempt ends
  and releases what it holds instead of waiting for roles Ray cannot place."""
  need = needed_resources(roles)
  deadline = time.monotonic() + timeout_s
  while True:
    have = available()
    missing = {resource: amount for resource, amount in need.items() if have.get(resource, 0) < amount}
    if not missing:
      return
    if time.monotonic() >= deadline:
      lacking = "; ".join(f"{resource} {have.get(resource, 0):g} of {amount:g} (from {_OFFERED_BY[resource]})"
                          for resource, amount in missing.items())
      raise RunFailed(f"after {timeout_s:.0f} s the Ray cluster still lacks what the roles need: {lacking}. Those "
                      "pods never joined it (they could not be scheduled, or did not start): `rlrep cluster status "
                      "OUT` shows their warnings, e.g. no free accelerator node or Insufficient cpu. Raise "
                      "--placement-timeout-s if the node pools only scale up slowly.")
    time.sleep(min(poll_s, max(deadline - time.monotonic(), 0)))


def run_in_cluster(experiment_file: str, submission: str, existing: str = "refuse") -> dict:
  """The RayJob's entrypoint: local mode's driver attached to the Ray cluster it runs in, once that cluster offers
  every role's resources."""
  experiment = load_experiment(pathlib.Path(experiment_file).parent)
  prepare_volume_dir(experiment, submission, existing)
  ray.init(address="auto", logging_level=logging.WARNING, log_to_driver=False)
  try:
    wait_for_placement(make_program(experiment), ray.cluster_resources, experiment.cluster.placement_timeout_s)
  finally:
    ray.shutdown()  # local.run connects again, as its own driver
  return local.run(experiment, ray_address="auto")


def driver_parser() -> argparse.ArgumentParser:
  """The arguments of the RayJob's entrypoint, `python -m launch.cluster.driver` (rendered by `manifests.render`)."""
  parser = argparse.ArgumentParser(prog="python -m launch.cluster.driver", description="Cluster mode's driver.")
  parser.add_argument("experiment_file", help="the experiment.json the ConfigMap mounts")
  parser.add_argument("--submission", required=True, help="the id of the `rlrep train` that submitted the job")
  parser.add_argument("--existing", choices=EXISTING, default="refuse",
                      help="what to do with a run another submission left on the volume")
  return parser


if __name__ == "__main__":
  arguments = driver_parser().parse_args()
  print(json.dumps(run_in_cluster(arguments.experiment_file, arguments.submission, arguments.existing), indent=2,
                   default=str))
