"""benchmarks/actor.py on a tiny budget: the actor with 1 and 2 environments and the bare loop, and their ratios."""

import re

import pytest


def test_prints_actor_and_bare_frame_rates_and_the_ratios_they_make(run_benchmark):
  out = run_benchmark("actor.py", "--envs", "2", "--seconds", "0.6")
  assert out.startswith("walker-walk, 84x84, frame stack 3, action repeat 2, render quality fast")
  rates = [float(rate) for rate in re.findall(r"^  (?:rlrep actor|bare dm_control).* ([\d.]+) frames/s$", out, re.M)]
  assert len(rates) == 3 and min(rates) > 0, out
  single, batched, bare = rates
  ratios = re.search(r"^  ratio actor / bare: 1 environment ([\d.]+), 2 environments ([\d.]+)$", out, re.M)
  assert ratios, out
  assert float(ratios[1]) == pytest.approx(single / bare, rel=0.02)
  assert float(ratios[2]) == pytest.approx(batched / bare, rel=0.02)
