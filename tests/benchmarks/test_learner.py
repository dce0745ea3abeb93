"""benchmarks/learner.py on a tiny budget: updates/s of every float32 variant and Acme's, and the ratios."""

import re

import pytest

BATCH = 8


def test_prints_every_variants_update_rate_and_the_ratios_they_make(run_benchmark):
  out = run_benchmark("learner.py", "--seconds", "0.3", "--batch", str(BATCH), "--no-bfloat16")
  assert out.startswith(f"D4PG learner from pixels, batch {BATCH}, 84x84x9, 1 replica")
  rows = re.findall(r"^  (\S.*?) +([\d.]+) updates/s  \( *([\d,]+) transitions/s\)  x([\d.]+)$", out, re.M)
  rates = {name: float(rate) for name, rate, _, _ in rows}
  assert list(rates) == ["rlrep, augmentation on, float32", "rlrep, augmentation off, float32",
                         "plain tf.function, augmentation on", "Acme TF D4PGLearner, no augmentation"], out
  first = rates["rlrep, augmentation on, float32"]
  for name, rate, transitions, to_first in rows:
    assert float(rate) > 0 and int(transitions.replace(",", "")) == pytest.approx(float(rate) * BATCH, abs=1)
    assert float(to_first) == pytest.approx(float(rate) / first, rel=0.02, abs=0.01)
  plain = re.search(r"^  ratio rlrep / plain tf.function +([\d.]+)$", out, re.M)
  assert plain and float(plain[1]) == pytest.approx(first / rates["plain tf.function, augmentation on"], rel=0.02)
  acme = re.search(r"^  ratio float32 rlrep \(augmentation off\) / Acme +([\d.]+)$", out, re.M)
  assert acme and float(acme[1]) == pytest.approx(
      rates["rlrep, augmentation off, float32"] / rates["Acme TF D4PGLearner, no augmentation"], rel=0.02)
