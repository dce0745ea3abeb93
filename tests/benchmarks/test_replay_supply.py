"""benchmarks/replay_supply.py on a tiny budget: a server in another process, 1 and 2 sampler processes."""

import re

import pytest


def test_prints_supply_wire_bytes_and_cpu_costs_for_each_number_of_samplers(run_benchmark):
  out = run_benchmark("replay_supply.py", "--samplers", "1,2", "--seconds", "1", "--table-steps", "120",
                      "--batch", "8")
  assert "a server in another process holding 120 rendered steps" in out
  rows = re.findall(r"^  (\d) sampler\(s\): +([\d,]+) transitions/s = +([\d.]+) updates/s; +([\d,]+) "
                    r"bytes/transition on the wire; CPU s per 1,000 transitions: server ([\d.]+), samplers ([\d.]+)$",
                    out, re.M)
  assert [int(row[0]) for row in rows] == [1, 2], out
  for _, transitions, updates, wire, server_cpu, sampler_cpu in rows:
    transitions = float(transitions.replace(",", ""))
    assert transitions > 0 and float(updates) == pytest.approx(transitions / 8, rel=0.01, abs=0.06)
    # A transition's six 84x84x3 frames travel compressed, or at most raw: between a sliver and 6 x 21,168 bytes.
    assert 0 <= float(wire.replace(",", "")) <= 6 * 84 * 84 * 3 * 1.2
    assert float(server_cpu) >= 0 and float(sampler_cpu) > 0
