"""Cluster mode: the same program as a KubeRay `RayJob` on GKE, with the learner on a TPU (or GPU) slice.

One module per part of a cluster run:

* `config.py`: cluster mode's own settings (`Experiment.cluster`) and the TPU slices GKE offers;
* `manifests.py`: the ConfigMap, RayJob and NetworkPolicy rendered from the experiment, checked offline and
  written to `<out>/manifests/`;
* `submit.py`: `rlrep train --mode cluster`: the manifests written, then submitted and followed to the job's end;
* `kube.py`: the Kubernetes client, the user's `kubectl`: checks the cluster, submits, follows a job, and serves
  `rlrep cluster status|logs|stop|fetch`;
* `driver.py`: the RayJob's entrypoint in the job's head pod, local mode's driver attached to the job's Ray cluster.
"""
