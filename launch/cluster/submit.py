"""`rlrep train --mode cluster`: the experiment's manifests rendered, checked and written, then submitted with
kubectl and followed to the job's end.

Without `--dry-run` the manifests are submitted with `kubectl` (after checking the cluster: launch/cluster/kube.py)
and the job is followed to its end (unless `--detach`); `rlrep cluster status|logs|stop|fetch OUT` find it again
from `--out`. Each submission gets an id, which its driver records on the volume (launch/cluster/driver.py), and
tells the driver what to do with a run an earlier submission left there: `--overwrite` replaces it, `--resume OUT`
continues it, anything else refuses it.
"""

from __future__ import annotations

from launch.cluster import kube
from launch.cluster.manifests import MANIFESTS, MOUNT, job_name, render, validate, write
from launch.experiment import Experiment, prepare_output_dir


def run(experiment: Experiment, dry_run: bool = False, resume: bool = False, overwrite: bool = False,
        follow: bool = True) -> dict:
  """Renders, validates and writes the manifests; unless `dry_run`, submits them and, if `follow`, follows the
  job to its end (launch/cluster/kube.py), raising RunFailed when it fails.

  `--out` follows the rule of every mode: a directory holding another experiment is refused unless `overwrite`
  (or kept with `resume`). The run's own outputs go to the volume, under the job's name, where `overwrite`
  replaces an earlier submission's run, `resume` continues it and neither refuses it.
  """
  existing = "resume" if resume else "overwrite" if overwrite else "refuse"
  manifests = render(experiment, existing=existing)
  validate(manifests)
  prepare_output_dir(experiment, resume=resume, overwrite=overwrite)
  paths = write(manifests, experiment.out_dir / MANIFESTS)
  name = job_name(experiment)
  earlier = {"refuse": "refused", "overwrite": "replaced", "resume": "continued"}[existing]
  result = {"mode": "cluster", "job": name, "manifests": [str(p) for p in paths], "submitted": False,
            "volume": f"{MOUNT}/{name}/ on {experiment.cluster.volume}; a run an earlier submission left there is "
                      f"{earlier}"}
  if dry_run:
    return result
  job = kube.Job.of(experiment)
  kube.submit(job)
  if not follow:
    print(f"submitted {job.name}: `rlrep cluster logs {job.out}` follows it, `rlrep cluster status {job.out}` "
          "reports on it.", flush=True)
    return {**result, "submitted": True}
  return {**result, "submitted": True, "job_status": kube.follow(job)["jobStatus"]}
