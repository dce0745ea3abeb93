"""Headless OpenGL backend selection and render-quality settings for MuJoCo.

dm_control reads `MUJOCO_GL` once, when its renderer is first imported, and an unknown value has been seen
to fall back silently. So the backend is chosen here, before dm_control is imported, and validated:

* `MUJOCO_GL` set: it must name a known backend, else `ValueError`.
* unset: EGL if `libEGL` loads, else OSMesa if `libOSMesa` loads, else `GLUnavailableError` with the Debian
  packages to install. With EGL, rendering goes to the first NVIDIA GPU among EGL's devices when there is
  one (`MUJOCO_EGL_DEVICE_ID` records it, unless already set); otherwise dm_control takes the first device
  that initialises, usually Mesa's llvmpipe, which renders in software on the CPU.

NVIDIA's EGL follows `CUDA_VISIBLE_DEVICES` (mujoco#3245): a process started with it empty finds no GPU to render
on. `describe_gl_backend` says in words which backend and device a process renders with; roles log it.

Render quality is explicit. `"standard"` keeps dm_control's visuals. `"fast"` turns off shadows,
reflections and multisampling and sizes the offscreen buffer to the image: in software rendering it runs
several times faster (`benchmarks/render.py` measures by how much), at the cost of images that look flatter.
Agents trained on one quality should be evaluated on the same one.
"""

from __future__ import annotations

import ctypes
import functools
import logging
import os
import sys

KNOWN_BACKENDS = ("egl", "osmesa", "glfw")
# What the user may set to choose rendering; launchers pass the user's own values on to role processes.
RENDER_VARIABLES = ("MUJOCO_GL", "MUJOCO_EGL_DEVICE_ID", "PYOPENGL_PLATFORM")
EGL_EXTENSIONS = 0x3055                      # eglQueryDeviceStringEXT: the device's extension string
EGL_NVIDIA_GPU = "EGL_NV_device_cuda"        # a device of NVIDIA's driver, i.e. a CUDA GPU
EGL_SOFTWARE = "EGL_MESA_device_software"    # Mesa's llvmpipe
MAX_EGL_DEVICES = 32
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


@functools.cache
def egl_device_extensions() -> tuple[str, ...]:
  """The extension string of each device EGL offers this process, in EGL's order (the index is what
  `MUJOCO_EGL_DEVICE_ID` takes); empty when libEGL or its device enumeration is unavailable. Only lists the
  devices: nothing is initialised, and no GPU memory is taken."""
  for name in _LIBRARIES["egl"]:
    try:
      egl = ctypes.CDLL(name)
      break
    except OSError:
      continue
  else:
    return ()
  egl.eglGetProcAddress.restype = ctypes.c_void_p
  egl.eglGetProcAddress.argtypes = [ctypes.c_char_p]
  query_address = egl.eglGetProcAddress(b"eglQueryDevicesEXT")
  string_address = egl.eglGetProcAddress(b"eglQueryDeviceStringEXT")
  if not query_address or not string_address:
    return ()
  query = ctypes.CFUNCTYPE(ctypes.c_uint, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p),
                           ctypes.POINTER(ctypes.c_int))(query_address)
  device_string = ctypes.CFUNCTYPE(ctypes.c_char_p, ctypes.c_void_p, ctypes.c_int)(string_address)
  devices, count = (ctypes.c_void_p * MAX_EGL_DEVICES)(), ctypes.c_int(0)
  if not query(MAX_EGL_DEVICES, devices, ctypes.byref(count)):
    return ()
  return tuple((device_string(devices[i], EGL_EXTENSIONS) or b"").decode() for i in range(count.value))


def choose_egl_device(extensions: tuple[str, ...]) -> int | None:
  """The index of the first NVIDIA GPU among EGL's devices (given as their extension strings), or None.

  Other devices are left to dm_control's own choice: a Mesa device may be a display adapter it cannot
  render on.

  >>> choose_egl_device(("EGL_MESA_device_software", "EGL_NV_device_cuda EGL_EXT_device_drm"))
  1
  >>> choose_egl_device(("EGL_MESA_device_software EGL_EXT_device_drm_render_node",)) is None
  True
  """
  return next((i for i, names in enumerate(extensions) if EGL_NVIDIA_GPU in names.split()), None)


def describe_gl_backend(environ: dict[str, str] | None = None,
                        extensions: tuple[str, ...] | None = None) -> str:
  """Which backend and device this process renders with, in words (for logs and the terminal).

  >>> describe_gl_backend({"MUJOCO_GL": "egl", "MUJOCO_EGL_DEVICE_ID": "0"}, ("EGL_NV_device_cuda",))
  'egl on an NVIDIA GPU (EGL device 0 of 1)'
  >>> describe_gl_backend({"MUJOCO_GL": "egl"}, ("EGL_MESA_device_software",))
  "egl in software (Mesa llvmpipe on the CPU: no GPU among EGL's 1 device(s))"
  """
  environ = os.environ if environ is None else environ
  backend = environ.get("MUJOCO_GL", "none (no headless OpenGL library)")
  if backend == "osmesa":
    return "osmesa in software (on the CPU)"
  if backend != "egl":
    return backend
  extensions = egl_device_extensions() if extensions is None else extensions
  chosen = environ.get("MUJOCO_EGL_DEVICE_ID")
  if chosen is not None and chosen.isdigit() and int(chosen) < len(extensions):
    names = extensions[int(chosen)].split()
    kind = ("an NVIDIA GPU" if EGL_NVIDIA_GPU in names else "Mesa llvmpipe, in software" if EGL_SOFTWARE in names
            else "a non-NVIDIA device")
    return f"egl on {kind} (EGL device {chosen} of {len(extensions)})"
  if extensions and all(EGL_SOFTWARE in names.split() for names in extensions):
    return f"egl in software (Mesa llvmpipe on the CPU: no GPU among EGL's {len(extensions)} device(s))"
  return f"egl on the first of EGL's {len(extensions)} device(s) that initialises"


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
        gpu = choose_egl_device(egl_device_extensions())
        if gpu is not None:
          environ.setdefault("MUJOCO_EGL_DEVICE_ID", str(gpu))
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
  global _UNAVAILABLE, USER_SETTINGS
  USER_SETTINGS = {name: os.environ[name] for name in RENDER_VARIABLES if name in os.environ}
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
  logging.info("MuJoCo rendering: %s", describe_gl_backend())
  return backend


_UNAVAILABLE: GLUnavailableError | None = None
USER_SETTINGS: dict[str, str] = {}  # the rendering variables the user set, before rlrep chose the rest


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
