"""Headless OpenGL backend selection and render-quality settings for MuJoCo.

dm_control reads `MUJOCO_GL` once, when its renderer is first imported, and an unknown value has been seen
to fall back silently. So the backend is chosen here, before dm_control is imported, and validated:

* `MUJOCO_GL` set: it must name a known backend, else `ValueError`.
* unset: EGL (Mesa's llvmpipe or a GPU driver) if `libEGL` loads, else OSMesa if `libOSMesa` loads, else
  `GLUnavailableError` with the Debian packages to install.

Render quality is explicit. `"standard"` keeps dm_control's visuals. `"fast"` turns off shadows,
reflections and multisampling and sizes the offscreen buffer to the image; in software rendering this
measured about 10x more frames/s (`benchmarks/render.py`), at the cost of images that look flatter.
Agents trained on one quality should be evaluated on the same one.
"""

from __future__ import annotations

import ctypes
import logging
import os
import sys

KNOWN_BACKENDS = ("egl", "osmesa", "glfw")
RENDER_QUALITIES = ("standard", "fast")
_LIBRARIES = {
    "egl": ("libEGL.so.1", "libEGL.so"),
    "osmesa": ("libOSMesa.so.8", "libOSMesa.so.6", "libOSMesa.so"),
}
APT_PACKAGES = {"egl": "libegl1 libgl1-mesa-dri", "osmesa": "libosmesa6"}


class GLUnavailableError(RuntimeError):
  """No headless OpenGL library could be loaded."""


def library_loads(backend: str) -> bool:
  """Whether the shared library `backend` needs can be loaded in this process."""
  for name in _LIBRARIES[backend]:
    try:
      ctypes.CDLL(name)
      return True
    except OSError:
      continue
  return False


def select_gl_backend(environ: dict[str, str] | None = None) -> str:
  """Chooses the MuJoCo GL backend and records it in `environ` (default: `os.environ`).

  >>> select_gl_backend({"MUJOCO_GL": "osmesa"})
  'osmesa'
  """
  environ = os.environ if environ is None else environ
  requested = environ.get("MUJOCO_GL")
  if requested is not None:
    backend = requested.strip().lower()
    if backend not in KNOWN_BACKENDS:
      raise ValueError(
          f"MUJOCO_GL={requested!r} is not a MuJoCo rendering backend; use one of {', '.join(KNOWN_BACKENDS)} "
          "(egl or osmesa on a machine without a display), or unset it to let rlrep choose.")
    environ["MUJOCO_GL"] = backend
    return backend
  for backend in ("egl", "osmesa"):
    if library_loads(backend):
      environ["MUJOCO_GL"] = backend
      if backend == "egl":
        environ.setdefault("PYOPENGL_PLATFORM", "egl")
      return backend
  raise GLUnavailableError(
      "No headless OpenGL library found (tried libEGL and libOSMesa), so MuJoCo cannot render pixels. "
      f"Install one: `apt-get install -y {APT_PACKAGES['egl']}` (EGL) or `apt-get install -y "
      f"{APT_PACKAGES['osmesa']}` (OSMesa), or run `bash scripts/setup.sh`, which installs them. "
      "State-feature environments (pixels=False) do not need either.")


def configure_gl_backend() -> str | None:
  """Selects the backend for this process before dm_control is imported, and logs the choice.

  Returns None when no headless library exists: state-feature environments still work, and loading a
  pixel environment raises `GLUnavailableError` with the install command (`require_gl_backend`).
  """
  global _UNAVAILABLE
  if "dm_control._render" in sys.modules:
    backend = os.environ.get("MUJOCO_GL", "glfw (dm_control's default)")
    logging.warning("dm_control was imported before rlrep chose a GL backend; using MUJOCO_GL=%s.", backend)
    return backend
  try:
    backend = select_gl_backend()
  except GLUnavailableError as error:
    _UNAVAILABLE = error
    logging.warning("%s", error)
    return None
  logging.info("MuJoCo rendering backend: %s", backend)
  return backend


_UNAVAILABLE: GLUnavailableError | None = None


def require_gl_backend() -> None:
  """Raises the install instructions when `configure_gl_backend` found no headless GL library."""
  if _UNAVAILABLE is not None:
    raise _UNAVAILABLE


def apply_render_quality(physics, quality: str, width: int, height: int) -> None:
  """Applies a render quality to `physics`' model; must run before its first render.

  Both qualities grow the offscreen buffer to fit the requested image (dm_control refuses larger images).
  """
  if quality not in RENDER_QUALITIES:
    raise ValueError(f"render_quality={quality!r} is unknown; use one of {RENDER_QUALITIES}.")
  model = physics.model
  if quality == "fast":
    model.light_castshadow[:] = 0
    model.vis.quality.shadowsize = 0
    model.mat_reflectance[:] = 0
    model.vis.quality.offsamples = 0
    model.vis.global_.offwidth = width
    model.vis.global_.offheight = height
  else:
    model.vis.global_.offwidth = max(model.vis.global_.offwidth, width)
    model.vis.global_.offheight = max(model.vis.global_.offheight, height)
