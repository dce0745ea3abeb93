"""Which numeric precision a learner computes in: bfloat16 where its devices run it natively, else float32.

Precision changes how fast an update runs, not what it learns: the networks keep float32 weights, and only
the pixel encoder's convolutions and projection compute in bfloat16. So `"auto"` is the default everywhere
and picks bfloat16 on TPUs, on GPUs of compute capability 8.0 or more and on CPUs with AMX or AVX512-BF16;
elsewhere TensorFlow would emulate bfloat16, slower than float32, so it picks float32 and an explicit
`"bfloat16"` there is refused with the reason.

>>> choose("auto", "CPU", cpu_flags={"avx2", "amx_bf16"})
PrecisionChoice(precision='bfloat16', reason='auto: this CPU has AMX (amx_bf16)')
>>> choose("auto", "CPU", cpu_flags={"avx2"}).precision
'float32'
>>> choose("bfloat16", "GPU", gpu_capabilities=[(7, 5)])
Traceback (most recent call last):
ValueError: --precision bfloat16: GPU compute capability 7.5 is below 8.0, so bfloat16 is emulated ... float32 ...
"""

from __future__ import annotations

import dataclasses
import pathlib
from typing import Iterable

PRECISIONS = ("auto", "float32", "bfloat16")
DEVICE_KINDS = ("CPU", "GPU", "TPU")
CPU_BFLOAT16_FLAGS = {"amx_bf16": "AMX", "avx512_bf16": "AVX512-BF16"}  # /proc/cpuinfo flag -> name
MIN_GPU_CAPABILITY = (8, 0)  # Ampere: the first NVIDIA GPUs with bfloat16 tensor cores


@dataclasses.dataclass(frozen=True)
class PrecisionChoice:
  """The precision a learner uses, and why (shown in the run's first lines and by `rlrep doctor`)."""
  precision: str
  reason: str


def read_cpu_flags() -> set[str]:
  """This machine's CPU feature flags (Linux); empty where /proc/cpuinfo cannot be read."""
  try:
    text = pathlib.Path("/proc/cpuinfo").read_text()
  except OSError:
    return set()
  return {flag for line in text.splitlines() if line.startswith("flags") for flag in line.split(":", 1)[1].split()}


def local_gpu_capabilities() -> list[tuple[int, int]]:
  """Compute capability of each GPU TensorFlow sees on this machine."""
  import tensorflow as tf
  return [tuple(tf.config.experimental.get_device_details(gpu).get("compute_capability", (0, 0)))
          for gpu in tf.config.list_physical_devices("GPU")]


def _native(device_kind: str, cpu_flags: set[str] | None,
            gpu_capabilities: Iterable[tuple[int, int]] | None) -> tuple[bool, str]:
  """Whether `device_kind` devices here run bfloat16 natively, and the evidence in words."""
  if device_kind == "TPU":
    return True, "TPUs compute in bfloat16 natively"
  if device_kind == "GPU":
    capabilities = list(local_gpu_capabilities() if gpu_capabilities is None else gpu_capabilities)
    if not capabilities:
      return False, "no GPU found"
    lowest = min(capabilities)
    shown = f"{lowest[0]}.{lowest[1]}"
    if lowest < MIN_GPU_CAPABILITY:
      return False, f"GPU compute capability {shown} is below 8.0"
    return True, f"GPU compute capability {shown} (>= 8.0)"
  flags = read_cpu_flags() if cpu_flags is None else cpu_flags
  found = [f"{name} ({flag})" for flag, name in CPU_BFLOAT16_FLAGS.items() if flag in flags]
  if found:
    return True, "this CPU has " + " and ".join(found)
  return False, "this CPU has neither AMX nor AVX512-BF16"


def choose(requested: str, device_kind: str, *, cpu_flags: set[str] | None = None,
           gpu_capabilities: Iterable[tuple[int, int]] | None = None) -> PrecisionChoice:
  """The precision for a learner on `device_kind` ("CPU", "GPU" or "TPU") devices, given the requested one
  ("auto", "float32" or "bfloat16"). Raises ValueError for bfloat16 where it would be emulated. The CPU flags
  and GPU capabilities are read from this machine unless given."""
  if requested not in PRECISIONS:
    raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {requested!r}")
  if device_kind not in DEVICE_KINDS:
    raise ValueError(f"device kind must be one of {', '.join(DEVICE_KINDS)}, got {device_kind!r}")
  if requested == "float32":
    return PrecisionChoice("float32", "as requested")
  native, evidence = _native(device_kind, cpu_flags, gpu_capabilities)
  if requested == "bfloat16":
    if not native:
      raise ValueError(f"--precision bfloat16: {evidence}, so bfloat16 is emulated there, slower than "
                       "float32: use --precision auto or float32 here, or bfloat16 on a TPU, a GPU "
                       "with compute capability >= 8.0, or a CPU with AMX or AVX512-BF16.")
    return PrecisionChoice("bfloat16", f"as requested: {evidence}")
  return PrecisionChoice("bfloat16" if native else "float32", f"auto: {evidence}")


def device_kind_of(devices: Iterable[str]) -> str:
  """The kind of a replicator's devices, from their names (e.g. "/job:worker/replica:0/task:0/device:TPU:0").

  >>> device_kind_of(["/job:localhost/replica:0/task:0/device:GPU:0"])
  'GPU'
  """
  kinds = {kind for device in devices for kind in DEVICE_KINDS if f"{kind}:" in device.upper()}
  if len(kinds) != 1:
    raise ValueError(f"expected devices of one kind ({', '.join(DEVICE_KINDS)}), got {list(devices)}")
  return kinds.pop()
