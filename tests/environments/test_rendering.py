"""environments.rendering: backend choice and render-quality settings."""

import numpy as np
import pytest

from environments import dmc
from environments import rendering


def test_explicit_backend_is_honoured_and_normalised():
  environ = {"MUJOCO_GL": " OSMesa "}
  assert rendering.select_gl_backend(environ) == "osmesa"
  assert environ["MUJOCO_GL"] == "osmesa"


def test_misspelt_backend_is_refused_instead_of_falling_back_silently():
  with pytest.raises(ValueError, match="MUJOCO_GL='eql' is not a MuJoCo rendering backend"):
    rendering.select_gl_backend({"MUJOCO_GL": "eql"})


def test_unset_backend_prefers_egl_when_its_library_loads():
  environ = {}
  expected = "egl" if rendering.library_loads("egl") else "osmesa"
  assert rendering.select_gl_backend(environ) == expected
  assert environ["MUJOCO_GL"] == expected


def test_no_library_gives_install_instructions(monkeypatch):
  monkeypatch.setattr(rendering, "library_loads", lambda backend: False)
  with pytest.raises(rendering.GLUnavailableError, match="apt-get install -y libegl1 libgl1-mesa-dri"):
    rendering.select_gl_backend({})


def test_fast_quality_turns_off_shadows_reflections_and_multisampling():
  fast = dmc.load("walker-walk", size=64, render_quality="fast").physics.model
  standard = dmc.load("walker-walk", size=64, render_quality="standard").physics.model
  assert not fast.light_castshadow.any() and not fast.mat_reflectance.any()
  assert fast.vis.quality.offsamples == 0 and fast.vis.global_.offwidth == 64
  assert standard.light_castshadow.any() and standard.vis.quality.offsamples > 0


def test_both_qualities_render_a_real_picture_that_differs():
  fast = dmc.load("walker-walk", size=48, render_quality="fast", seed=0).reset().observation["pixels"]
  standard = dmc.load("walker-walk", size=48, render_quality="standard", seed=0).reset().observation["pixels"]
  assert fast.std() > 5 and standard.std() > 5
  assert not np.array_equal(fast, standard)


def test_standard_quality_grows_the_offscreen_buffer_for_large_images():
  env = dmc.load("cartpole-swingup", size=700, frame_stack=1)
  assert env.reset().observation["pixels"].shape == (700, 700, 3)
