"""benchmarks/replay.py on a tiny budget: memory per step, the chunk length trade-off and supply vs consumption."""

import re

import pytest

from agents.d4pg import D4PGConfig

FRAME_BYTES, NAIVE_BYTES = 84 * 84 * 3, 2 * 3 * 84 * 84 * 3  # one raw frame; stacked obs + next_obs
STEPS = 20


def _number(text: str) -> float:
  return float(text.replace(",", ""))


def test_prints_memory_chunk_lengths_and_throughput_with_the_ratios_they_make(run_benchmark):
  out = run_benchmark("replay.py", "--seconds", "0.2", "--steps", str(STEPS), "--batch", "8", "--table-steps", "50")
  floor = re.search(r"\(([\d.]+) frames/step for the (\d+)-step episodes written here\)", out)
  assert floor and int(floor[2]) == STEPS and float(floor[1]) == pytest.approx((STEPS + 1) / STEPS, abs=0.001)
  memory = re.findall(r"^  n-step (\d): +([\d,]+) bytes/step = ([\d.]+) raw frames; naive / ours = ([\d.]+)x$",
                      out, re.M)
  assert [int(n_step) for n_step, *_ in memory] == [3, 4, 5], out
  for _, held, frames, naive_to_ours in memory:
    assert float(frames) == pytest.approx(_number(held) / FRAME_BYTES, abs=0.0001)
    assert float(naive_to_ours) == pytest.approx(NAIVE_BYTES / _number(held), abs=0.01)
    assert float(floor[1]) <= float(frames) < 2  # random frames do not compress, and each is held once

  chunks = re.findall(r"^ +(\d+) steps: ([\d.]+) raw frames/step, +([\d,]+) transitions/s sampled, +([\d.]+) CPU ms "
                      r"per batch(  \(default\))?$", out, re.M)
  default = D4PGConfig().replay.chunk_length
  assert [int(length) for length, *_ in chunks] == sorted({1, 2, 4, 8, 16, default}), out
  assert [int(length) for length, *_, marked in chunks if marked] == [default]
  for _, frames, rate, cpu_ms, _ in chunks:
    assert 0 < float(frames) < 1 and _number(rate) > 0 and float(cpu_ms) > 0  # rendered frames compress

  supplied = re.search(r"^  replay input pipeline alone +([\d,]+) transitions/s$", out, re.M)
  consumed = re.search(r"^  D4PG learner consumes +([\d,]+) transitions/s \(waiting for input (\d+)%\)$", out, re.M)
  ratio = re.search(r"^  supply / consumption +([\d.]+)x$", out, re.M)
  assert supplied and consumed and ratio, out
  assert _number(supplied[1]) > 0 and _number(consumed[1]) > 0 and 0 <= int(consumed[2]) <= 100
  assert float(ratio[1]) == pytest.approx(_number(supplied[1]) / _number(consumed[1]), rel=0.02, abs=0.06)
