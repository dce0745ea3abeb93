"""benchmarks/replicator.py on a tiny budget: steps/s plain and through 1, 2 and 4 replicas, with ratios to plain."""

import re

import pytest


def test_prints_plain_and_replicated_step_rates_and_the_ratios_they_make(run_benchmark):
  out = run_benchmark("replicator.py", "--seconds", "0.2", "--batch", "8")
  assert out.startswith("global batch 8, 84x84x9 uint8")
  plain = re.search(r"^  plain tf.function +([\d.]+)$", out, re.M)
  assert plain and float(plain[1]) > 0, out
  rows = re.findall(r"^  rlrep, (\d) replica\(s\) +([\d.]+) +ratio to plain ([\d.]+)$", out, re.M)
  assert [int(replicas) for replicas, _, _ in rows] == [1, 2, 4], out
  for _, rate, ratio in rows:
    assert float(rate) > 0 and float(ratio) == pytest.approx(float(rate) / float(plain[1]), rel=0.02, abs=0.002)
