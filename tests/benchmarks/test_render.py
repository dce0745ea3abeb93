"""benchmarks/render.py on a tiny budget: a row per GL backend and render quality, and the ratios between them."""

import re

import pytest

ROW = (r"^  (egl|osmesa) +(standard|fast) +bare +([\d.]+) +bare\+camera +([\d.]+) +wrapped +([\d.]+) +"
       r"wrapped/bare ([\d.]+) +wrapped/bare\+camera ([\d.]+)$")


def test_prints_each_backends_frame_rates_and_the_ratios_they_make(run_benchmark):
  out = run_benchmark("render.py", "--seconds", "0.3")
  assert out.startswith("task walker-walk, 84x84, action repeat 2")
  wrapped = {}
  for backend, quality, *numbers in re.findall(ROW, out, re.M):
    bare, bare_camera, wrapped[backend, quality], to_bare, to_bare_camera = map(float, numbers)
    assert min(bare, bare_camera, wrapped[backend, quality]) > 0
    assert to_bare == pytest.approx(wrapped[backend, quality] / bare, rel=0.02)
    assert to_bare_camera == pytest.approx(wrapped[backend, quality] / bare_camera, rel=0.02)
  measured = {backend for backend, _ in wrapped}
  unavailable = set(re.findall(r"^  (egl|osmesa): unavailable", out, re.M))
  assert measured and measured | unavailable == {"egl", "osmesa"}, out  # one backend at least, each accounted for
  for backend in measured:  # a backend that runs at all renders in both qualities
    fast_to_standard = re.search(rf"^  {backend}: fast / standard = ([\d.]+)x$", out, re.M)
    assert fast_to_standard, out
    assert float(fast_to_standard[1]) == pytest.approx(wrapped[backend, "fast"] / wrapped[backend, "standard"],
                                                       rel=0.02, abs=0.06)
  if measured == {"egl", "osmesa"}:
    for quality in ("standard", "fast"):
      egl_to_osmesa = re.search(rf"^  {quality}: egl / osmesa = ([\d.]+)x$", out, re.M)
      assert egl_to_osmesa and float(egl_to_osmesa[1]) == pytest.approx(
          wrapped["egl", quality] / wrapped["osmesa", quality], rel=0.02)
