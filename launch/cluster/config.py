"""Cluster mode's own settings: the image, namespace and accelerators of a GKE run and where it writes.

Only cluster mode reads them (local mode too reads one thing: the TPU slice's chips per host, which a tpu
learner asks Ray for), so they live apart from the experiment's other fields, as `Experiment.cluster`, and
`rlrep train --help` lists them in their own group. Also here: the TPU slices GKE offers, which
`--tpu-accelerator` and `--tpu-topology` name.

>>> config = ClusterConfig(tpu_topology="2x4", volume_bucket="my-runs")
>>> config.tpu.chips_per_host, config.volume
(8, 'gs://my-runs (GCS FUSE)')
"""

from __future__ import annotations

import dataclasses
import math
import re

# The TPU slice shapes GKE offers, by accelerator type. Only TPU generations whose runtime still ships for
# TensorFlow 2.15 (libtpu 1.9.0; dm-reverb 0.14 needs exactly TF 2.15) are accepted.
TPU_TOPOLOGIES = {
    "tpu-v4-podslice": ("2x2x1", "2x2x2", "2x2x4", "2x4x4", "4x4x4", "4x4x8", "4x8x8", "8x8x8"),
    "tpu-v5p-slice": ("2x2x1", "2x2x2", "2x2x4", "2x4x4", "4x4x4", "4x4x8", "4x8x8", "8x8x8"),
    "tpu-v5-lite-podslice": ("1x1", "2x2", "2x4", "4x4", "4x8", "8x8", "8x16", "16x16"),
}
TPU_ACCELERATORS = tuple(TPU_TOPOLOGIES)
_SINGLE_HOST_MAX_CHIPS = {"tpu-v4-podslice": 4, "tpu-v5p-slice": 4, "tpu-v5-lite-podslice": 8}
_UNSUPPORTED_TPUS = {
    "tpu-v6e-slice": "TPU v6e (Trillium) came after libtpu 1.9.0, the last TPU runtime for TensorFlow 2.15, "
                     "which rlrep's dm-reverb 0.14 requires",
}

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")       # namespaces and rlrep's object names
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")  # claims and service accounts
_LABEL_VALUE = re.compile(r"^[a-z0-9]([-a-z0-9_.]{0,61}[a-z0-9])?$")   # node label values, e.g. nvidia-l4
_BUCKET = re.compile(r"^[a-z0-9][-a-z0-9_.]{1,220}[a-z0-9]$")
MAX_DEADLINE_S = 2**31 - 1  # activeDeadlineSeconds is an int32


@dataclasses.dataclass(frozen=True)
class TPUSlice:
  """A TPU slice: its GKE accelerator type, topology, chip count and hosts."""
  accelerator: str
  topology: str
  chips: int
  hosts: int

  @property
  def chips_per_host(self) -> int:
    return self.chips // self.hosts


def tpu_slice(accelerator: str, topology: str) -> TPUSlice:
  """Chips and hosts of a GKE TPU slice, e.g. v5e 2x2 = 4 chips on one host; v4 2x2x2 = 8 chips on 2 hosts.

  >>> tpu_slice("tpu-v5-lite-podslice", "2X4")
  TPUSlice(accelerator='tpu-v5-lite-podslice', topology='2x4', chips=8, hosts=1)
  """
  if accelerator in _UNSUPPORTED_TPUS:
    raise ValueError(f"{accelerator}: {_UNSUPPORTED_TPUS[accelerator]}. Use one of {', '.join(TPU_ACCELERATORS)}.")
  if accelerator not in TPU_TOPOLOGIES:
    raise ValueError(f"unknown TPU accelerator {accelerator!r}; use one of {', '.join(TPU_ACCELERATORS)}.")
  topology = topology.lower()
  if topology not in TPU_TOPOLOGIES[accelerator]:
    raise ValueError(f"TPU topology {topology!r} is not a slice GKE offers for {accelerator}; its topologies are "
                     f"{', '.join(TPU_TOPOLOGIES[accelerator])}.")
  chips = math.prod(int(d) for d in topology.split("x"))
  single_host = chips <= _SINGLE_HOST_MAX_CHIPS[accelerator]
  return TPUSlice(accelerator, topology, chips, 1 if single_host else chips // 4)


@dataclasses.dataclass(frozen=True)
class ClusterConfig:
  """Attributes:
    image: container image for cluster pods, built from docker/Dockerfile and pushed where GKE can pull it.
    namespace: Kubernetes namespace of the job.
    tpu_accelerator: GKE TPU type for a tpu learner (node label cloud.google.com/gke-tpu-accelerator).
    tpu_topology: TPU slice topology for a tpu learner, e.g. 2x2 (one host, 4 chips).
    gpu_accelerator: GKE GPU type for a gpu learner (node label cloud.google.com/gke-accelerator).
    volume_claim: ReadWriteMany PersistentVolumeClaim every pod mounts for the run's outputs (unless
      --volume-bucket is given).
    volume_bucket: a Cloud Storage bucket every pod mounts instead of the claim, through GKE's GCS FUSE CSI
      driver; none: use the claim.
    service_account: Kubernetes service account of the pods when they mount --volume-bucket; Workload Identity
      must let it read and write the bucket.
    placement_timeout_s: seconds the job's driver waits for the Ray cluster to offer what every role needs (the
      learner's TPU or GPU pod, the CPU worker pods) before it fails the attempt, naming what is missing.
    job_deadline_hours: hours one attempt of the job may take, from creating its pods to its end, before KubeRay
      fails it and deletes its pods (the RayJob's activeDeadlineSeconds; such a failure is not retried). It also
      ends an attempt whose pods never all start, which KubeRay would otherwise wait for forever: allow for
      node scale-up plus the run's frames at its expected speed.
  """
  image: str = "rlrep:0.1.0"
  namespace: str = "default"
  tpu_accelerator: str = "tpu-v5-lite-podslice"
  tpu_topology: str = "2x2"
  gpu_accelerator: str = "nvidia-l4"
  volume_claim: str = "rlrep-runs"
  volume_bucket: str | None = None
  service_account: str = "rlrep"
  placement_timeout_s: float = 1800.0
  job_deadline_hours: float = 48.0

  OPTION_GROUPS = {"cluster mode (--mode cluster only)": ("image", "namespace", "tpu_accelerator", "tpu_topology",
                                                          "gpu_accelerator", "volume_claim", "volume_bucket",
                                                          "service_account", "placement_timeout_s",
                                                          "job_deadline_hours")}

  def __post_init__(self):
    problems = []
    if not self.image or any(character.isspace() for character in self.image):
      problems.append(f"image must name a container image, e.g. REGISTRY/rlrep-tpu:0.1.0; got {self.image!r}")
    if not DNS_LABEL.match(self.namespace):
      problems.append(f"namespace {self.namespace!r} is not a Kubernetes namespace name (lowercase letters, digits "
                      "and '-', at most 63)")
    try:
      tpu = self.tpu
    except ValueError as error:
      problems.append(str(error))
    else:
      if tpu.hosts > 1:
        problems.append(f"TPU topology {tpu.topology} spans {tpu.hosts} hosts; rlrep's learner runs on one host "
                        "(TPUStrategy on the local slice). Choose a single-host topology, e.g. 2x2 or 2x4 for "
                        "v5e, 2x2x1 for v4.")
    if not _LABEL_VALUE.match(self.gpu_accelerator):
      problems.append(f"gpu_accelerator {self.gpu_accelerator!r} is not a GKE accelerator name, e.g. nvidia-l4")
    for name in ("volume_claim", "service_account"):
      if not DNS_SUBDOMAIN.match(getattr(self, name)):
        problems.append(f"{name} {getattr(self, name)!r} is not a Kubernetes object name (lowercase letters, "
                        "digits, '-' and '.')")
    if self.volume_bucket is not None and self.volume_bucket.startswith("gs://"):
      problems.append(f"volume_bucket takes the bucket's name: {self.volume_bucket.removeprefix('gs://')!r}, not "
                      f"{self.volume_bucket!r}")
    elif self.volume_bucket is not None and not _BUCKET.match(self.volume_bucket):
      problems.append(f"volume_bucket {self.volume_bucket!r} is not a Cloud Storage bucket name (lowercase letters, "
                      "digits, '-', '_' and '.', starting and ending with a letter or digit)")
    if self.placement_timeout_s <= 0:
      problems.append(f"placement_timeout_s must be > 0, got {self.placement_timeout_s}")
    if not self.placement_timeout_s < self.job_deadline_s <= MAX_DEADLINE_S:
      problems.append(f"job_deadline_hours ({self.job_deadline_hours}) must exceed the placement timeout "
                      f"({self.placement_timeout_s / 3600:.2f} h) and be at most {MAX_DEADLINE_S // 3600:,d} hours")
    if problems:
      raise ValueError("invalid cluster settings:\n  - " + "\n  - ".join(problems))

  @property
  def tpu(self) -> TPUSlice:
    """The TPU slice a tpu learner runs on."""
    return tpu_slice(self.tpu_accelerator, self.tpu_topology)

  @property
  def job_deadline_s(self) -> int:
    """One attempt's deadline, as the RayJob's activeDeadlineSeconds."""
    return math.ceil(self.job_deadline_hours * 3600)

  @property
  def volume(self) -> str:
    """Where the run's outputs go, for messages."""
    if self.volume_bucket:
      return f"gs://{self.volume_bucket} (GCS FUSE)"
    return f"PersistentVolumeClaim {self.volume_claim}"

  @classmethod
  def from_experiment_json(cls, data: dict) -> "ClusterConfig":
    """The cluster settings of a saved experiment.json. Files written before the settings were grouped under
    "cluster" hold them at the top level; they load the same (the settings added since take their defaults)."""
    if "cluster" in data:
      return cls(**data["cluster"])
    return cls(**{field.name: data[field.name] for field in dataclasses.fields(cls) if field.name in data})
