"""Cluster mode's manifests: rendered from the experiment, checked offline, written to `<out>/manifests/`.

`rlrep train --mode cluster` renders three manifests:

* a `ConfigMap` holding `experiment.json`, mounted into every pod;
* the `RayJob`: a head pod that runs the driver (`python -m launch.cluster.driver <experiment.json>`, i.e. local
  mode's driver attached to this Ray cluster) and holds no roles (0 CPUs for Ray); a CPU worker group sized for the
  replay, evaluator and actor roles; and, unless the learner runs on CPUs, an accelerator group for the
  learner: `google.com/tpu` limits and requests equal to the slice's chips per host, with the
  `gke-tpu-accelerator` / `gke-tpu-topology` node selectors (or `nvidia.com/gpu` with `gke-accelerator`).
  Accelerator workers advertise one Ray CPU, which the learner takes, so no other role lands there, and their
  TPU chips or GPUs explicitly (KubeRay's own detection is not relied on). Only TPU learner pods get libtpu's
  environment variables: the other pods run the same image on machines without a TPU. The replay role takes a
  whole CPU worker pod, so its table has that pod's memory to itself.
* a `NetworkPolicy`: Reverb serves replay and weights without authentication, so pods of this job accept
  connections only from each other, plus, on the Ray job port only, the RayJob's submitter and the KubeRay
  operator that polls the job's status (without that rule a RayJob is marked failed after 300 s on
  KubeRay 1.7, or never ends on older versions, and the slice is never released).

All pods mount the run's volume at `/rlrep-runs` (`mount_runs`): the ReadWriteMany `PersistentVolumeClaim`
named by `--volume-claim` (e.g. Filestore), or with `--volume-bucket` a Cloud Storage bucket through GKE's GCS
FUSE CSI driver, as an inline ephemeral volume (no PersistentVolume or claim to create). The run writes
`/rlrep-runs/<job name>/`.

Cloud TPU ships TensorFlow 2.15 for TPUs as a wheel for Python 3.10 outside PyPI, with libtpu 1.9.0; the
image's `tpu` target installs both (see `docker/Dockerfile`).
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import math
import pathlib
import re
import secrets

from launch.cluster.config import DNS_LABEL, ClusterConfig
from launch.experiment import EXPERIMENT_FILE, Experiment
from launch.modes.checks import check_replay_fits
from launch.program import (CPU_WORKER_CPUS, LEARNER_HOST_RESOURCE, MALLOC_ARENA_MAX, WORKER_RESOURCE,
                            WORKER_RESOURCE_PER_POD, Role, make_program)

RAY_VERSION = "2.60.0"
MOUNT = "/rlrep-runs"
CONFIG_MOUNT = "/etc/rlrep"
MEMORY_PER_CPU_GIB = 4
TPU_LEARNER_CPUS = 8             # of the TPU host's many: the learner's input pipeline and host-side work
# GPU learner pods must fit the smallest L4 machine, g2-standard-8 (8 vCPUs, 32 GB): GKE's reservations (its
# plan-node-sizes page, "memory and CPU reservations") leave about 7.9 CPUs and 28.3 GiB allocatable, and its system
# DaemonSets take part of that, leaving about 7.2 CPUs and 27 GiB. 6 CPUs and 24 GiB fit, with room for a GCS FUSE
# sidecar (250m, 256Mi).
GPU_LEARNER_CPUS = 6
# libtpu's PJRT runtime, which TPU v5e and v5p need; set only where a TPU is (the image runs on every pod).
LIBTPU_ENV = {"NEXT_PLUGGABLE_DEVICE_USE_C_API": "true", "TF_PLUGGABLE_DEVICE_LIBRARY_PATH": "/lib/libtpu.so"}
EXISTING = ("refuse", "overwrite", "resume")  # what the driver does with an earlier submission's directory
RAY_JOB_PORT = 8265
JOB_LABEL = "rlrep.dev/job"
MAX_JOB_NAME = 47                # KubeRay refuses longer RayJob names (it derives longer names from them)
FINISHED_CLUSTER_TTL_S = 120     # the slice is released this long after the job ends (time to read the logs)
MANIFESTS = "manifests"          # under --out
GCS_FUSE_DRIVER = "gcsfuse.csi.storage.gke.io"
GCS_FUSE_ANNOTATION = "gke-gcsfuse/volumes"  # asks GKE's webhook to inject the GCS FUSE sidecar into the pod
GCS_FUSE_MOUNT_OPTIONS = "implicit-dirs"     # also show directories that other tools made as mere name prefixes


def job_name(experiment: Experiment) -> str:
  """A Kubernetes name from the output directory's name, e.g. runs/Walker_Pixels -> rlrep-walker-pixels."""
  slug = re.sub(r"[^a-z0-9]+", "-", experiment.out_dir.name.lower()).strip("-") or "run"
  return f"rlrep-{slug}"[:MAX_JOB_NAME].rstrip("-")


def new_submission() -> str:
  """A unique id for one `rlrep train --mode cluster`, e.g. 20250102T030405Z-1a2b3c."""
  return f"{datetime.datetime.now(datetime.timezone.utc):%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"


def render(experiment: Experiment, existing: str = "refuse", submission: str | None = None) -> list[dict]:
  """The ConfigMap, RayJob and NetworkPolicy for `experiment` (as plain dicts, ready for YAML). `existing` tells the
  driver what to do with a directory an earlier submission left on the volume (launch/cluster/driver.py);
  `submission` is this submission's id (default: a new one)."""
  if experiment.replicas in ("auto", "multi_worker"):
    raise ValueError(f"--replicas {experiment.replicas}: in cluster mode name the learner's devices, e.g. tpu, "
                     "gpu:4 or cpu:8, so the learner's pod can be sized.")
  if existing not in EXISTING:
    raise ValueError(f"existing must be one of {', '.join(EXISTING)}, got {existing!r}")
  name = job_name(experiment)
  _check_replay_fits_a_worker(experiment)
  cluster_experiment = dataclasses.replace(experiment, mode="cluster", out=f"{MOUNT}/{name}", replay_port=0)
  roles = make_program(cluster_experiment)  # the driver's program: sized as the driver will place it
  learner = next(role for role in roles if role.kind == "learner")
  entrypoint = (f"python -m launch.cluster.driver {CONFIG_MOUNT}/{EXPERIMENT_FILE} --submission "
                f"{submission or new_submission()} --existing {existing}")
  cpu_need = sum(role.cpus for role in roles if role.placement == WORKER_RESOURCE)
  groups = [_worker_group(experiment, name, "cpu", math.ceil(cpu_need / CPU_WORKER_CPUS), CPU_WORKER_CPUS,
                          ray_resources={WORKER_RESOURCE: WORKER_RESOURCE_PER_POD}),
            _learner_group(experiment, name, learner)]
  config_map = {"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": f"{name}-experiment", "namespace": experiment.cluster.namespace},
                "data": {EXPERIMENT_FILE: json.dumps(cluster_experiment.to_json(), indent=2)}}
  ray_job = {
      "apiVersion": "ray.io/v1", "kind": "RayJob",
      "metadata": {"name": name, "namespace": experiment.cluster.namespace, "labels": {JOB_LABEL: name}},
      "spec": {
          "entrypoint": entrypoint,
          "activeDeadlineSeconds": experiment.cluster.job_deadline_s,  # per attempt; KubeRay does not retry it
          "shutdownAfterJobFinishes": True,
          "ttlSecondsAfterFinished": FINISHED_CLUSTER_TTL_S,
          "backoffLimit": 2,  # a failed driver is retried and resumes from the last checkpoint
          "rayClusterSpec": {
              "rayVersion": RAY_VERSION,
              "headGroupSpec": {"rayStartParams": {"num-cpus": "0"},  # the driver and counter only
                                "template": _pod(experiment, name, "ray-head", cpus=2, extra_limits={})},
              "workerGroupSpecs": groups}}}
  policy = {
      "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
      "metadata": {"name": f"{name}-only-own-pods", "namespace": experiment.cluster.namespace},
      "spec": {"podSelector": {"matchLabels": {JOB_LABEL: name}},
               "policyTypes": ["Ingress"],
               "ingress": [{"from": [{"podSelector": {"matchLabels": {JOB_LABEL: name}}}]},
                           *({"from": [source], "ports": [{"protocol": "TCP", "port": RAY_JOB_PORT}]}
                             for source in _dashboard_clients(name))]}}
  return [config_map, ray_job, policy]


def _dashboard_clients(name: str) -> list[dict]:
  """Who must reach the head's job port besides the job's pods: the RayJob's submitter pod; the KubeRay
  operator, which polls job status from its own pod (KubeRay 1.2-1.7, any namespace; Helm and kustomize
  installs both label it component=kuberay-operator); and, for operators that go through the API server
  proxy (GKE's managed Ray add-on, `--use-kubernetes-proxy`), GKE's konnectivity agents."""
  return [{"podSelector": {"matchLabels": {"batch.kubernetes.io/job-name": name}}},
          {"namespaceSelector": {},
           "podSelector": {"matchLabels": {"app.kubernetes.io/component": "kuberay-operator"}}},
          {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
           "podSelector": {"matchLabels": {"k8s-app": "konnectivity-agent"}}}]


def _pod(experiment: Experiment, name: str, container: str, cpus: int, extra_limits: dict,
         node_selector: dict | None = None, extra_env: dict | None = None) -> dict:
  resources = {"cpu": str(cpus), "memory": f"{cpus * MEMORY_PER_CPU_GIB}Gi", **extra_limits}
  env = {"MUJOCO_GL": "egl", "TF_CPP_MIN_LOG_LEVEL": "2", "MALLOC_ARENA_MAX": MALLOC_ARENA_MAX, **(extra_env or {})}
  spec = {"containers": [{
              "name": container, "image": experiment.cluster.image,
              "env": [{"name": key, "value": value} for key, value in env.items()],
              "resources": {"limits": dict(resources), "requests": dict(resources)},
              "volumeMounts": [{"name": "experiment", "mountPath": CONFIG_MOUNT, "readOnly": True}]}],
          "volumes": [{"name": "experiment", "configMap": {"name": f"{name}-experiment"}}]}
  if node_selector:
    spec["nodeSelector"] = node_selector
  return mount_runs({"metadata": {"labels": {JOB_LABEL: name}}, "spec": spec}, experiment.cluster)


def mount_runs(pod: dict, config: ClusterConfig, read_only: bool = False) -> dict:
  """Adds the run's volume to `pod` (a pod or its template; changed in place) at MOUNT in every container, for
  the job's pods and fetch's helper pod alike: the claim, or the bucket through the GCS FUSE CSI driver. The
  driver's sidecar, which runs gcsfuse, joins only pods annotated for it and reads and writes the bucket as the
  pod's service account (through Workload Identity), so a bucket sets both."""
  spec = pod["spec"]
  read_only_flag = {"readOnly": True} if read_only else {}
  for container in spec["containers"]:
    container["volumeMounts"].insert(0, {"name": "runs", "mountPath": MOUNT, **read_only_flag})
  if config.volume_bucket:
    attributes = {"bucketName": config.volume_bucket, "mountOptions": GCS_FUSE_MOUNT_OPTIONS}
    source = {"csi": {"driver": GCS_FUSE_DRIVER, **read_only_flag, "volumeAttributes": attributes}}
    pod["metadata"].setdefault("annotations", {})[GCS_FUSE_ANNOTATION] = "true"
    spec["serviceAccountName"] = config.service_account
  else:
    source = {"persistentVolumeClaim": {"claimName": config.volume_claim, **read_only_flag}}
  spec["volumes"].insert(0, {"name": "runs", **source})
  return pod


def ray_resources_param(resources: dict) -> str:
  """The `resources` rayStartParam: JSON in single quotes, the form KubeRay >= 1.3 reads back (it trims quote
  characters and parses the rest as JSON to add accelerators) and the shell running `ray start` unquotes.

  >>> print(ray_resources_param({"rlrep_learner_host": 1, "TPU": 4}))
  '{"TPU":4,"rlrep_learner_host":1}'
  """
  return "'" + json.dumps(resources, sort_keys=True, separators=(",", ":")) + "'"


def _worker_group(experiment: Experiment, name: str, group: str, replicas: int, cpus: int, ray_resources: dict,
                  extra_limits: dict | None = None, node_selector: dict | None = None, hosts: int = 1,
                  ray_cpus: int | None = None, gpus: int = 0, extra_env: dict | None = None) -> dict:
  params = {"num-cpus": str(cpus if ray_cpus is None else ray_cpus), "resources": ray_resources_param(ray_resources)}
  if gpus:
    params["num-gpus"] = str(gpus)
  return {"groupName": group, "replicas": replicas, "minReplicas": replicas, "maxReplicas": replicas,
          "numOfHosts": hosts, "rayStartParams": params,
          "template": _pod(experiment, name, "ray-worker", cpus, extra_limits or {}, node_selector, extra_env)}


def _learner_group(experiment: Experiment, name: str, learner: Role) -> dict:
  """The learner's own pods, one per learner host: a TPU host, GPU nodes, or (a CPU learner) pods with the cores it
  asked for."""
  host = {LEARNER_HOST_RESOURCE: 1}
  count = str(learner.accelerator_count)
  if learner.accelerator == "tpu":
    tpu = experiment.cluster.tpu
    return _worker_group(experiment, name, "tpu-learner", 1, cpus=TPU_LEARNER_CPUS,
                         ray_resources={**host, "TPU": learner.accelerator_count},
                         extra_limits={"google.com/tpu": count},
                         node_selector={"cloud.google.com/gke-tpu-accelerator": tpu.accelerator,
                                        "cloud.google.com/gke-tpu-topology": tpu.topology},
                         hosts=tpu.hosts, ray_cpus=1, extra_env=LIBTPU_ENV)
  if learner.accelerator == "gpu":
    return _worker_group(experiment, name, "gpu-learner", experiment.learner_hosts, cpus=GPU_LEARNER_CPUS,
                         ray_resources=host,
                         extra_limits={"nvidia.com/gpu": count},
                         node_selector={"cloud.google.com/gke-accelerator": experiment.cluster.gpu_accelerator},
                         ray_cpus=1, gpus=learner.accelerator_count)
  return _worker_group(experiment, name, "cpu-learner", experiment.learner_hosts, cpus=math.ceil(learner.cpus),
                       ray_resources=host)


def _check_replay_fits_a_worker(experiment: Experiment) -> None:
  """The replay role has a CPU worker pod to itself (it takes all its CPUs): its replay must fit in that pod's
  memory."""
  check_replay_fits(experiment, memory_bytes=CPU_WORKER_CPUS * MEMORY_PER_CPU_GIB * 2**30,
                    where="of the replay's CPU worker pod")


def validate(manifests: list[dict]) -> None:
  """Offline checks of what the API server and KubeRay would reject or silently mis-schedule."""
  problems = []
  for manifest in manifests:
    kind, name = manifest.get("kind"), manifest.get("metadata", {}).get("name", "")
    if not DNS_LABEL.match(name):
      problems.append(f"{kind} name {name!r} is not a valid Kubernetes name (lowercase, digits, '-', <= 63)")
    if kind != "RayJob":
      continue
    cluster = manifest["spec"]["rayClusterSpec"]
    templates = [("head", cluster["headGroupSpec"]["template"])]
    for group in cluster["workerGroupSpecs"]:
      templates.append((group["groupName"], group["template"]))
      if not group["minReplicas"] <= group["replicas"] <= group["maxReplicas"] or group["numOfHosts"] < 1:
        problems.append(f"worker group {group['groupName']}: replicas/hosts out of range")
    for group_name, template in templates:
      for container in template["spec"]["containers"]:
        limits, requests = container["resources"]["limits"], container["resources"]["requests"]
        if not container.get("image"):
          problems.append(f"{group_name}: container {container['name']} has no image")
        for accelerator in ("google.com/tpu", "nvidia.com/gpu"):
          if limits.get(accelerator) != requests.get(accelerator):
            problems.append(f"{group_name}: {accelerator} limits and requests must be equal")
        if "google.com/tpu" in limits and not {"cloud.google.com/gke-tpu-accelerator",
                                                "cloud.google.com/gke-tpu-topology"} <= set(
                                                    template["spec"].get("nodeSelector", {})):
          problems.append(f"{group_name}: TPU pods need gke-tpu-accelerator and gke-tpu-topology node selectors")
      gcs_fuse = any(volume.get("csi", {}).get("driver") == GCS_FUSE_DRIVER for volume in template["spec"]["volumes"])
      if gcs_fuse and (template["metadata"].get("annotations", {}).get(GCS_FUSE_ANNOTATION) != "true"
                       or not template["spec"].get("serviceAccountName")):
        problems.append(f"{group_name}: a GCS FUSE volume needs the {GCS_FUSE_ANNOTATION}: \"true\" annotation "
                        "(else nothing mounts it and the pod never starts) and a serviceAccountName")
  if problems:
    raise ValueError("invalid cluster manifests:\n  - " + "\n  - ".join(problems))


def write(manifests: list[dict], directory: pathlib.Path) -> list[pathlib.Path]:
  import yaml
  directory.mkdir(parents=True, exist_ok=True)
  paths = []
  for index, manifest in enumerate(manifests):
    path = directory / f"{index:02d}-{manifest['kind'].lower()}.yaml"
    path.write_text(yaml.safe_dump(manifest, sort_keys=False))
    paths.append(path)
  return paths
