"""The soak benchmark's judgement: growth per hour, warm-up, the replay plateau and restarted roles."""

import doctest
import importlib.util
import pathlib
import sys
from typing import Callable

import pytest

_PATH = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "soak.py"
_SPEC = importlib.util.spec_from_file_location("benchmarks_soak", _PATH)  # benchmarks/ holds scripts, no package
soak = sys.modules[_SPEC.name] = importlib.util.module_from_spec(_SPEC)  # dataclasses look their module up there
_SPEC.loader.exec_module(soak)

WARMUP_S = 100.0


def _samples(rss_at: Callable[[float], float], pid_at: Callable[[float], int] = lambda t: 1, until_s: int = 600,
             role: str = "actor-0") -> list:
  """A role's samples every 10 s from 0 to `until_s`."""
  return [soak.Sample(float(t), role, pid_at(t), rss_at(t), None) for t in range(0, until_s + 1, 10)]


def test_docstring_examples():
  assert doctest.testmod(soak).failed == 0


def test_growth_is_the_least_squares_slope_per_hour_over_the_mean():
  assert soak.growth_pct_per_hour([0.0, 3600.0], [95.0, 105.0]) == pytest.approx(10.0)
  no_trend = [100.0, 103.0, 97.0, 97.0, 103.0, 100.0]  # ups and downs that mirror each other
  assert soak.growth_pct_per_hour([60.0 * i for i in range(6)], no_trend) == pytest.approx(0.0)


def test_only_samples_after_warm_up_are_judged():
  start_up_then_flat = _samples(lambda t: 100.0 if t >= 200 else 10.0 + t)
  verdict = soak.judge(start_up_then_flat, not_before=200.0, warmup_s=WARMUP_S, limit_pct=5.0)
  assert verdict.result == "PASS" and verdict.growth_pct_per_hour == pytest.approx(0.0)
  assert (verdict.start_mb, verdict.end_mb, verdict.note) == (100.0, 100.0, "")
  leaking = _samples(lambda t: 100.0 + 0.01 * t)  # 36 MB per hour on ~103 MB
  assert soak.judge(leaking, 200.0, WARMUP_S, 5.0).result == "FAIL"


def test_replay_is_judged_only_once_full_and_not_at_all_if_never():
  fills_then_plateaus = _samples(lambda t: 100.0 + min(t, 300.0), role="replay")
  assert soak.judge(fills_then_plateaus, not_before=300.0, warmup_s=WARMUP_S, limit_pct=5.0).result == "PASS"
  never_full = soak.judge(fills_then_plateaus, None, WARMUP_S, 5.0, why_unjudged="replay not full")
  assert (never_full.result, never_full.note) == ("n/a", "replay not full")


def test_a_restarted_role_is_reported_and_judged_on_its_new_process_after_its_own_warm_up():
  # The first process leaks until it dies at 300 s; the new one starts big, settles by 400 s, then stays flat.
  restarted = _samples(lambda t: 100.0 + t if t < 300 else (150.0 if t < 400 else 120.0),
                       pid_at=lambda t: 1 if t < 300 else 2)
  verdict = soak.judge(restarted, not_before=150.0, warmup_s=WARMUP_S, limit_pct=5.0)
  assert verdict.result == "PASS" and verdict.start_mb == 120.0 and verdict.pids == [1, 2]
  assert verdict.note == "restarted 1x: pids 1, 2"


def test_too_few_samples_after_warm_up_are_not_judged():
  verdict = soak.judge(_samples(lambda t: 100.0, until_s=110), 100.0, WARMUP_S, 5.0)
  assert verdict.result == "n/a" and verdict.note == "2 samples after warm-up, 3 needed"
