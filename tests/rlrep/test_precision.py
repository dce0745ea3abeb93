"""The learner's precision: bfloat16 only where its devices run it natively, and the reason said in words."""

import pytest

import rlrep
from rlrep import precision


@pytest.mark.parametrize("flags, expected", [({"avx2", "amx_bf16", "amx_tile"}, "bfloat16"),
                                             ({"avx512f", "avx512_bf16"}, "bfloat16"),
                                             ({"avx2", "avx512f"}, "float32"), (set(), "float32")])
def test_auto_on_cpus_follows_the_bfloat16_instructions(flags, expected):
  choice = precision.choose("auto", "CPU", cpu_flags=flags)
  assert choice.precision == expected
  assert choice.reason.startswith("auto: this CPU has")


@pytest.mark.parametrize("capabilities, expected", [([(8, 0)], "bfloat16"), ([(9, 0), (8, 9)], "bfloat16"),
                                                    ([(8, 6), (7, 5)], "float32"), ([], "float32")])
def test_auto_on_gpus_needs_compute_capability_8_on_every_gpu(capabilities, expected):
  assert precision.choose("auto", "GPU", gpu_capabilities=capabilities).precision == expected


def test_tpus_always_compute_in_bfloat16():
  assert precision.choose("auto", "TPU").precision == "bfloat16"
  assert precision.choose("float32", "TPU").precision == "float32"  # asked for: honoured


def test_bfloat16_where_it_would_be_emulated_is_refused_with_what_to_use():
  with pytest.raises(ValueError, match="neither AMX nor AVX512-BF16.*use --precision auto or float32"):
    precision.choose("bfloat16", "CPU", cpu_flags={"avx2"})
  with pytest.raises(ValueError, match="compute capability 7.0 is below 8.0"):
    precision.choose("bfloat16", "GPU", gpu_capabilities=[(7, 0)])
  assert precision.choose("bfloat16", "CPU", cpu_flags={"avx512_bf16"}).precision == "bfloat16"


def test_unknown_precisions_and_device_kinds_are_refused():
  with pytest.raises(ValueError, match="one of auto, float32, bfloat16"):
    precision.choose("float16", "CPU")
  with pytest.raises(ValueError, match="device kind"):
    precision.choose("auto", "NPU")


def test_a_replicators_device_kind_is_read_from_its_devices():
  assert rlrep.make_replicator("cpu:2").device_kind == "CPU"
  assert rlrep.replicator.device_kind_for_spec("cpu:2") == "CPU"
  assert rlrep.replicator.device_kind_for_spec("tpu") == "TPU"
  assert rlrep.replicator.device_kind_for_spec("auto") == "CPU"  # this machine: no TPU, no GPU
  with pytest.raises(ValueError, match="one kind"):
    precision.device_kind_of(["/device:CPU:0", "/device:GPU:0"])


def test_this_machines_cpu_flags_are_read():
  flags = precision.read_cpu_flags()
  assert "fpu" in flags or not flags  # every x86 CPU lists fpu; elsewhere (no /proc/cpuinfo) nothing
