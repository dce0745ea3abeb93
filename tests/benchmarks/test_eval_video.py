"""benchmarks/eval_video.py on a tiny budget: evaluation steps/s with and without video, and their ratio."""

import re

import pytest


def test_prints_both_evaluation_rates_and_the_ratio_they_make(run_benchmark):
  out = run_benchmark("eval_video.py", "--video-size", "64", "--seconds", "0.4")
  rates = dict(re.findall(r"^  (without video|with video) +([\d.]+)$", out, re.M))
  assert set(rates) == {"without video", "with video"} and min(map(float, rates.values())) > 0
  ratio = re.search(r"a recorded episode takes ([\d.]+)x the time of an unrecorded one \(64x64 video frames\)", out)
  assert ratio, out
  assert float(ratio[1]) == pytest.approx(float(rates["without video"]) / float(rates["with video"]), rel=0.02)
