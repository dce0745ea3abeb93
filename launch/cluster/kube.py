"""kubectl as cluster mode's transport: submit a RayJob, follow it to its result, report on it, stop it, and copy
its outputs back.

Every call runs the user's `kubectl`, so its kubeconfig, context and credentials (e.g. GKE's auth plugin) apply;
a failure comes back as kubectl's message plus what to do about it (no kubeconfig or context, KubeRay's CRD
absent or too old, missing permissions, an exhausted ResourceQuota, no free accelerator node).

A run is found again from its local `--out`, which holds `experiment.json` and `manifests/`: the RayJob's name
and namespace come from the manifests. While the job waits or runs, `follow` polls the RayJob's status, prints
the Warning events of the job's objects (why a pod cannot be scheduled, a quota the operator ran into, an image
that cannot be pulled) and copies the driver's log from the submitter pod (`ray job submit` tails the driver),
one stream per attempt: a retried job gets a new Ray cluster and its log follows.

Outputs: the run writes `/rlrep-runs/<job name>/` on its volume, the ReadWriteMany claim or the GCS FUSE bucket.
The job's Ray cluster (and its submitter pod, hence the driver's log) is deleted 120 s after the job ends, so no
pod of the job may be left to copy from. `fetch` therefore starts a short-lived helper pod, `<job name>-fetch`:
the run's image (the cluster can pull it and it has `tar`, which `kubectl cp` needs), the same volume mounted
read-only, nothing but `sleep`, deleted when the copy ends and by Kubernetes after an hour at the latest
(`activeDeadlineSeconds`). It copies with `kubectl cp` while the job runs too, as a snapshot.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import json
import pathlib
import re
import shutil
import subprocess
import sys
import threading
import time

from launch.cluster.config import ClusterConfig
from launch.cluster.manifests import (CPU_WORKER_CPUS, FINISHED_CLUSTER_TTL_S, GCS_FUSE_DRIVER, GPU_LEARNER_CPUS,
                                      JOB_LABEL, MANIFESTS, MEMORY_PER_CPU_GIB, MOUNT, TPU_LEARNER_CPUS, job_name,
                                      mount_runs)
from launch.experiment import EXPERIMENT_FILE, Experiment, RunFailed

POLL_S = 10.0                 # between status polls while following a job
LOG_DRAIN_S = 30.0            # how long the log stream may take to end once the job has ended
FETCH_POD_LIFETIME_S = 3600   # the helper pod's upper bound, should `fetch` be interrupted
FETCH_START_TIMEOUT_S = 600   # pulling a large (TPU) image onto a node can take minutes
FETCH_CONTAINER = "fetch"     # named in exec and cp: a GCS FUSE pod has a second container, the sidecar
TERMINAL = ("Complete", "Failed")  # KubeRay's final jobDeploymentStatus values
KUBERAY_INSTALL = ("install the KubeRay operator >= 1.2: on GKE enable the Ray operator add-on (`gcloud container "
                   "clusters update CLUSTER --location LOCATION --update-addons=RayOperator=ENABLED`), elsewhere "
                   "with Helm (`helm repo add kuberay https://ray-project.github.io/kuberay-helm/`, then `helm "
                   "install kuberay-operator kuberay/kuberay-operator`)")
_HINTS = [  # (what kubectl or an event says, what to do); the first match applies
    (r"current-context is not set|no configuration has been provided|localhost:8080",
     "kubectl has no cluster configured: `gcloud container clusters get-credentials CLUSTER --location LOCATION` "
     "writes a kubeconfig context for a GKE cluster (or set KUBECONFIG / `kubectl config use-context`)."),
    (r"Unable to connect to the server|i/o timeout|no such host",
     "kubectl cannot reach the cluster's API server: check the network (VPN, authorized networks) and the "
     "current context (`kubectl config current-context`)."),
    (r'no matches for kind "RayJob"|resource type "rayjobs?"', f"the cluster has no RayJob CRD: {KUBERAY_INSTALL}."),
    (r"unknown field \"?spec\.", "the cluster's KubeRay CRDs predate fields rlrep uses (backoffLimit came in "
     "KubeRay 1.2): upgrade the KubeRay operator and its CRDs to >= 1.2."),
    (r"exceeded quota", "the namespace's ResourceQuota has no room for this job (`kubectl describe resourcequota "
     "-n NAMESPACE` shows it): ask for more, or ask for less (--actors, the learner's --replicas)."),
    (r"Insufficient (google\.com/tpu|nvidia\.com/gpu)", "no node with a free accelerator of this kind: check that "
     "the node pool exists with the --tpu-accelerator/--tpu-topology (or --gpu-accelerator) asked for, its "
     "autoscaling limits, and the project's TPU/GPU quota in its zone."),
    (r"Insufficient (cpu|memory)\b", "no node has the CPU or memory free that a pod of this job requests (`kubectl "
     "describe pod POD -n NAMESPACE` shows the pod's): CPU worker pods request "
     f"{CPU_WORKER_CPUS} CPUs and {CPU_WORKER_CPUS * MEMORY_PER_CPU_GIB} GiB, a GPU learner pod {GPU_LEARNER_CPUS} "
     f"and {GPU_LEARNER_CPUS * MEMORY_PER_CPU_GIB} GiB, a TPU learner pod {TPU_LEARNER_CPUS} and "
     f"{TPU_LEARNER_CPUS * MEMORY_PER_CPU_GIB} GiB, a --replicas cpu:N learner N and {MEMORY_PER_CPU_GIB}N GiB. Give "
     "the pod's node pool larger machines or let it scale up (autoscaling, node auto-provisioning), or ask for less: "
     "fewer --actors, a smaller N in --replicas cpu:N."),
    (r"GCS bucket|gcsfuse|storage service", "the bucket could not be mounted: check that it exists and that the pods' "
     "--service-account may read and write it through Workload Identity (see the README's cluster section)."),
    (r"forbidden", "your account may not do this in this namespace: it needs create, get, list, watch and delete "
     "on rayjobs.ray.io, configmaps, networkpolicies and pods, plus pods/log, pods/exec and get on "
     "persistentvolumeclaims and serviceaccounts (ask the cluster's admin for such a Role)."),
]


def hint(text: str) -> str:
  """What to do about a kubectl error or event message, when it is a known kind of problem ('' otherwise)."""
  return next((advice for pattern, advice in _HINTS if re.search(pattern, text, re.IGNORECASE)), "")


class KubectlFailed(ValueError):
  """kubectl exited with an error; the message holds kubectl's own and, for known problems, what to do."""

  def __init__(self, args: list[str], stderr: str):
    self.stderr = stderr.strip()
    advice = hint(self.stderr)
    super().__init__(f"`kubectl {' '.join(args)}` failed: {self.stderr}" + (f"\n{advice}" if advice else ""))

  @property
  def not_found(self) -> bool:
    return "(NotFound)" in self.stderr


def executable() -> str:
  path = shutil.which("kubectl")
  if path is None:
    raise ValueError("cluster mode needs kubectl, configured for a GKE cluster with the KubeRay operator; it is not "
                     "installed (not on PATH). Install it (`gcloud components install kubectl` or your package "
                     "manager).")
  return path


def kubectl(*args: str, stdin: str | None = None) -> str:
  """Runs kubectl to completion; returns its stdout or raises KubectlFailed."""
  done = subprocess.run([executable(), *args], input=stdin, capture_output=True, text=True)
  if done.returncode != 0:
    raise KubectlFailed(list(args), done.stderr)
  return done.stdout


@dataclasses.dataclass(frozen=True)
class Job:
  """A RayJob as `rlrep train --mode cluster` rendered it into its local --out."""
  name: str
  namespace: str
  out: pathlib.Path
  cluster: ClusterConfig

  @classmethod
  def of(cls, experiment: Experiment) -> "Job":
    """The job `experiment`'s manifests describe, named as they name it: the job `from_out` finds once they are
    written, without reading them back."""
    return cls(name=job_name(experiment), namespace=experiment.cluster.namespace, out=experiment.out_dir,
               cluster=experiment.cluster)

  @classmethod
  def from_out(cls, out: str | pathlib.Path) -> "Job":
    """The job from its --out: the manifests name it (experiment.json may come back from the volume, with its
    `out` there)."""
    import yaml
    out = pathlib.Path(out)
    manifests = [yaml.safe_load(path.read_text()) for path in sorted((out / MANIFESTS).glob("*.yaml"))]
    jobs = [manifest for manifest in manifests if manifest.get("kind") == "RayJob"]
    if not (out / EXPERIMENT_FILE).exists() or len(jobs) != 1:
      raise ValueError(f"{out} holds no cluster run ({EXPERIMENT_FILE} and {MANIFESTS}/ with one RayJob): pass the "
                       "--out given to `rlrep train --mode cluster`.")
    experiment = json.loads((out / EXPERIMENT_FILE).read_text())
    return cls(name=jobs[0]["metadata"]["name"], namespace=jobs[0]["metadata"].get("namespace", "default"), out=out,
               cluster=ClusterConfig.from_experiment_json(experiment))

  @property
  def manifests(self) -> pathlib.Path:
    return self.out / MANIFESTS


def check_cluster(job: Job) -> None:
  """Before submitting: a context, KubeRay's RayJob CRD (>= 1.2), the volume, and no RayJob of this name."""
  try:
    kubectl("config", "current-context")
  except KubectlFailed as error:
    raise ValueError(f"kubectl has no current context (no kubeconfig?): {error.stderr}\n"
                     f"{hint(error.stderr) or hint('current-context is not set')}") from None
  if "rayjobs.ray.io" not in kubectl("api-resources", "--api-group=ray.io", "-o", "name").split():
    raise ValueError(f"the cluster has no RayJob resource (CRD rayjobs.ray.io): {KUBERAY_INSTALL}.")
  try:
    crd = json.loads(kubectl("get", "crd", "rayjobs.ray.io", "-o", "json"))
  except KubectlFailed:
    crd = None  # reading CRDs needs a cluster-wide permission; then the API server's field validation checks
  if crd is not None:
    schemas = {v["name"]: v.get("schema", {}).get("openAPIV3Schema", {}) for v in crd["spec"]["versions"]}
    spec = schemas.get("v1", {}).get("properties", {}).get("spec", {}).get("properties", {})
    if "backoffLimit" not in spec:
      raise ValueError("the cluster's RayJob CRD has no ray.io/v1 spec.backoffLimit, so its KubeRay operator is older "
                       "than 1.2: upgrade the operator and its CRDs (rlrep retries a failed driver with it).")
  if job.cluster.volume_bucket:
    _check_bucket_access(job)
  else:
    _check_claim(job)
  try:
    status = job_status(job)
  except RunFailed:
    return
  raise ValueError(f"RayJob {job.name} already exists in namespace {job.namespace} ({describe(status)}); applying "
                   f"it again would not start a new run. `rlrep cluster stop {job.out}` deletes it (the outputs on "
                   "the volume stay), or choose another --out.")


def _check_claim(job: Job) -> None:
  """The claim exists and every pod can mount it, on whatever node it runs."""
  claim = job.cluster.volume_claim
  try:
    modes = kubectl("get", "pvc", claim, "-n", job.namespace, "-o", "jsonpath={.spec.accessModes}")
  except KubectlFailed as error:
    if not error.not_found:
      raise
    raise ValueError(f"no PersistentVolumeClaim {claim} in namespace {job.namespace}: create a ReadWriteMany claim "
                     "(e.g. Filestore; see the README's cluster section), name another with --volume-claim, or "
                     "write to a Cloud Storage bucket with --volume-bucket.") from None
  if "ReadWriteMany" not in modes:
    raise ValueError(f"PersistentVolumeClaim {claim} is not ReadWriteMany (access modes {modes}): every pod of the "
                     "job mounts it, on different nodes. Use a ReadWriteMany claim (--volume-claim).")


def _check_bucket_access(job: Job) -> None:
  """The cluster runs the GCS FUSE CSI driver and the namespace has the service account the pods mount it as.
  Whether Workload Identity lets that account use the bucket only the mount can tell: its events say so."""
  try:
    kubectl("get", "csidriver", GCS_FUSE_DRIVER, "-o", "name")
  except KubectlFailed as error:
    if error.not_found:
      raise ValueError(f"the cluster has no GCS FUSE CSI driver ({GCS_FUSE_DRIVER}), which --volume-bucket needs: "
                       "enable it (`gcloud container clusters update CLUSTER --location LOCATION --update-addons "
                       "GcsFuseCsiDriver=ENABLED`) or write to a ReadWriteMany claim with --volume-claim.") from None
    # reading cluster-wide objects needs a permission many accounts lack: then the pods' events will tell
  account = job.cluster.service_account
  try:
    kubectl("get", "serviceaccount", account, "-n", job.namespace, "-o", "name")
  except KubectlFailed as error:
    if not error.not_found:
      raise
    raise ValueError(f"no ServiceAccount {account} in namespace {job.namespace}, which the pods mount "
                     f"gs://{job.cluster.volume_bucket} as: create it (`kubectl create serviceaccount {account} -n "
                     f"{job.namespace}`) and let it use the bucket through Workload Identity (see the README's cluster "
                     "section), or name another with --service-account.") from None


def submit(job: Job) -> None:
  """Checks the cluster and applies the manifests; errors also say where the manifests are."""
  try:
    check_cluster(job)
    print(kubectl("apply", "-f", str(job.manifests)).strip(), flush=True)
  except ValueError as error:
    raise ValueError(f"{error}\nThe manifests are in {job.manifests}: once that is fixed, submit them by hand "
                     f"(`kubectl apply -f {job.manifests}`) and follow the job with `rlrep cluster logs {job.out}`, "
                     "or run this again with --overwrite (which also replaces a run an earlier submission left on "
                     "the volume under this job name).") from None


def job_status(job: Job) -> dict:
  """The RayJob's `.status` (empty before the operator first sees it); RunFailed when there is no such RayJob."""
  try:
    return json.loads(kubectl("get", "rayjob", job.name, "-n", job.namespace, "-o", "json")).get("status", {})
  except KubectlFailed as error:
    if not error.not_found:
      raise
    raise RunFailed(f"there is no RayJob {job.name} in namespace {job.namespace}: it was stopped (`rlrep cluster "
                    "stop` deletes it) or never submitted (`rlrep train --mode cluster` without --dry-run submits "
                    "it).") from None


def describe(status: dict) -> str:
  """The RayJob's status in one line.

  >>> describe({"jobDeploymentStatus": "Failed", "jobStatus": "FAILED", "reason": "AppFailed", "failed": 3,
  ...           "startTime": "2025-01-02T03:04:05Z", "endTime": "2025-01-02T04:00:00Z", "message": "exit 1"})
  'Failed (job FAILED, AppFailed), 3 failed attempts, started 2025-01-02T03:04:05Z, ended 2025-01-02T04:00:00Z: exit 1'
  >>> describe({})
  'New (not yet seen by the KubeRay operator)'
  """
  state = status.get("jobDeploymentStatus")
  if not state:
    return "New (not yet seen by the KubeRay operator)"
  details = ([f"job {status['jobStatus']}"] if status.get("jobStatus") else []) + (
      [status["reason"]] if status.get("reason") else [])
  text = state + (f" ({', '.join(details)})" if details else "")
  if status.get("failed"):
    text += f", {status['failed']} failed attempt{'s' if status['failed'] != 1 else ''}"
  for key, verb in (("startTime", "started"), ("endTime", "ended")):
    if status.get(key):
      text += f", {verb} {status[key]}"
  return text + (f": {status['message']}" if status.get("message") else "")


def warnings(job: Job, cluster: str = "") -> list[str]:
  """The Warning events of the job's objects, with advice: the RayJob and its submitter Job and pods, the Ray
  cluster `cluster` (the status's rayClusterName) and its pods, and fetch's helper pod. Names are matched exactly
  or by KubeRay's naming, so a job named like this one plus a suffix (e.g. rlrep-walker-2) is not mixed in.

  Best effort: an account that may not list events gets none (following must not fail for it).
  """
  try:
    events = json.loads(kubectl("get", "events", "-n", job.namespace, "--field-selector", "type=Warning",
                                "-o", "json"))["items"]
  except KubectlFailed:
    return []
  submitter_pod = re.compile(rf"{re.escape(job.name)}-[a-z0-9]{{5}}")
  found = []
  for event in events:
    kind, name = event.get("involvedObject", {}).get("kind"), event.get("involvedObject", {}).get("name", "")
    if (name in (job.name, f"{job.name}-fetch", cluster) or (cluster and name.startswith(f"{cluster}-"))
        or submitter_pod.fullmatch(name)):
      message = f"{kind} {name}: {event.get('reason')}: {event.get('message', '').strip()}"
      advice = hint(message)
      found.append(message + (f" ({advice})" if advice else ""))
  return list(dict.fromkeys(found))


def status_report(job: Job) -> str:
  status = job_status(job)
  return "\n".join([f"{job.name} in namespace {job.namespace}: {describe(status)}",
                    *(f"  warning: {warning}" for warning in warnings(job, status.get("rayClusterName", "")))])


class _LogStream:
  """`kubectl logs -f` of the job's submitter pod, copied line by line to stdout by a thread."""

  def __init__(self, job: Job, attempt: str, since: str | None):
    self.attempt, self.lines = attempt, 0
    self.process = subprocess.Popen(
        [executable(), "logs", "-f", "-n", job.namespace, f"job/{job.name}", "--pod-running-timeout=60s",
         *([f"--since-time={since}"] if since else [])], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    self.thread = threading.Thread(target=self._copy, daemon=True)
    self.thread.start()

  def _copy(self) -> None:
    for line in self.process.stdout:
      self.lines += 1
      sys.stdout.write(line)
      sys.stdout.flush()

  def running(self) -> bool:
    return self.process.poll() is None

  def finish(self, timeout: float) -> None:
    try:
      self.process.wait(timeout)
    except subprocess.TimeoutExpired:
      self.process.terminate()
      self.process.wait()
    self.thread.join()


def _now() -> str:
  return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def follow(job: Job) -> dict:
  """Prints the job's progress, warnings and driver log until the RayJob ends; returns its final status.

  Raises RunFailed when the job failed or its RayJob disappeared. On Ctrl-C it says how to follow again or
  stop, and re-raises: the job keeps running.
  """
  shown, stream, ended = set(), None, {}  # ended: attempt -> when its last stream that printed anything ended
  try:
    while True:
      status = job_status(job)
      state, attempt = status.get("jobDeploymentStatus"), status.get("rayClusterName", "")
      done = state in TERMINAL
      for line, to in [(describe(status), sys.stdout),
                       *((f"warning: {w}", sys.stderr) for w in warnings(job, attempt))]:
        if line not in shown:
          shown.add(line)
          print(f"[{job.name}] {line}", file=to, flush=True)
      if stream is not None and not stream.running():
        stream.finish(0)
        if stream.lines:
          ended[stream.attempt] = _now()
        stream = None
      if stream is None and attempt and (state == "Running" or done and attempt not in ended):
        stream = _LogStream(job, attempt, since=ended.get(attempt))
      if done:
        if stream is not None:
          stream.finish(LOG_DRAIN_S)
          if not stream.lines and attempt not in ended:
            print(f"[{job.name}] no driver log: the job's pods are deleted {FINISHED_CLUSTER_TTL_S} s after it ends; "
                  f"its outputs (logs/ included) are on the volume: `rlrep cluster fetch {job.out}`.", file=sys.stderr)
          stream = None
        return _result(job, status)
      time.sleep(POLL_S)
  except KeyboardInterrupt:
    print(f"\nstopped following {job.name}; the job keeps running: `rlrep cluster logs {job.out}` follows it again, "
          f"`rlrep cluster stop {job.out}` stops it.", file=sys.stderr)
    raise
  finally:
    if stream is not None:
      stream.finish(0)


def _result(job: Job, status: dict) -> dict:
  if status.get("jobDeploymentStatus") == "Complete" and status.get("jobStatus") == "SUCCEEDED":
    return status
  raise RunFailed(f"RayJob {job.name} ended {describe(status)}. Its outputs so far are on the volume: `rlrep "
                  f"cluster fetch {job.out}` copies them here.")


def print_logs(job: Job) -> None:
  """The driver's log so far, once (the submitter pod's, which exists until 120 s after the job ends)."""
  try:
    print(kubectl("logs", "-n", job.namespace, f"job/{job.name}"), end="", flush=True)
  except KubectlFailed as error:
    raise RunFailed(f"no driver log for {job.name}: {error.stderr}\nThe job's pods are deleted "
                    f"{FINISHED_CLUSTER_TTL_S} s after it ends; its outputs (logs/ included) are on the volume: "
                    f"`rlrep cluster fetch {job.out}`.") from None


def stop(job: Job) -> str:
  """Deletes the RayJob (its Ray cluster and submitter go with it), ConfigMap and NetworkPolicy; the volume stays."""
  deleted = kubectl("delete", "-f", str(job.manifests), "--ignore-not-found", "--timeout=120s").strip()
  return deleted or f"nothing to stop: none of {job.name}'s objects exist in namespace {job.namespace}."


def fetch_pod(job: Job, image: str | None = None) -> dict:
  """The helper pod `fetch` copies from (see the module's docstring); `image` replaces the run's."""
  container = {"name": FETCH_CONTAINER, "image": image or job.cluster.image,
               "command": ["sleep", str(FETCH_POD_LIFETIME_S)],
               "resources": {"requests": {"cpu": "250m", "memory": "512Mi"}, "limits": {"cpu": "1", "memory": "1Gi"}},
               "volumeMounts": []}
  pod = {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": f"{job.name}-fetch", "namespace": job.namespace, "labels": {JOB_LABEL: job.name}},
         "spec": {"restartPolicy": "Never", "activeDeadlineSeconds": FETCH_POD_LIFETIME_S, "containers": [container],
                  "volumes": []}}
  return mount_runs(pod, job.cluster, read_only=True)


def fetch(job: Job, dest: pathlib.Path, image: str | None = None) -> None:
  """Copies the run's directory on the volume into `dest` through a short-lived helper pod."""
  pod = fetch_pod(job, image)
  name, source = pod["metadata"]["name"], f"{MOUNT}/{job.name}"
  kubectl("apply", "-f", "-", stdin=json.dumps(pod))
  try:
    try:
      kubectl("wait", "-n", job.namespace, f"pod/{name}", "--for=condition=Ready",
              f"--timeout={FETCH_START_TIMEOUT_S}s")
    except KubectlFailed as error:
      why = "\n  ".join(w for w in warnings(job) if name in w) or "(no warning events)"
      raise ValueError(f"the helper pod {name} did not start: {error.stderr}\n  {why}") from None
    try:
      kubectl("exec", "-n", job.namespace, name, "-c", FETCH_CONTAINER, "--", "test", "-d", source)
    except KubectlFailed as error:
      if "exit code" not in error.stderr:
        raise
      raise RunFailed(f"the volume ({job.cluster.volume}) has no {source}: the job has written nothing yet (its "
                      "driver creates it when it starts).") from None
    dest.mkdir(parents=True, exist_ok=True)
    kubectl("cp", "-n", job.namespace, "-c", FETCH_CONTAINER, f"{name}:{source}", str(dest))
  finally:
    with contextlib.suppress(KubectlFailed):  # else Kubernetes ends the pod at its deadline
      kubectl("delete", "-n", job.namespace, f"pod/{name}", "--ignore-not-found", "--wait=false")
