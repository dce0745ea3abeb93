"""docker/Dockerfile's targets: each target's pip installs resolve on the package registry for the image's Python
and platform, and each target's environment is what its pods need.

No container runtime runs here, so no image is built. The tests read the Dockerfile itself (its stages and their
COPY, RUN and ENV instructions): they lay out the build context the COPY lines name, redo the RUN steps that
write files pip reads (`sed IN > OUT`), and have pip resolve every `pip install` of a target with `--dry-run`.
pip evaluates requirement markers (`python_version >= "3.11"` in constraints.txt) with the interpreter it runs
on, whatever `--python-version` says, so the resolution runs on an interpreter of the image's Python version.
"""

from __future__ import annotations

import dataclasses
import glob
import json
import os
import pathlib
import re
import shlex
import shutil
import ssl
import subprocess
import sys
import urllib.request

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "docker" / "Dockerfile"
# python:3.10-slim is Debian bookworm or later (glibc >= 2.36): wheels for manylinux2014 up to glibc 2.36 install.
PLATFORMS = ["manylinux2014_x86_64", *(f"manylinux_2_{minor}_x86_64" for minor in range(17, 37))]
LIBTPU_VARIABLES = ("NEXT_PLUGGABLE_DEVICE_USE_C_API", "TF_PLUGGABLE_DEVICE_LIBRARY_PATH")


@dataclasses.dataclass
class Stage:
  name: str
  base: str
  instructions: list[tuple[str, str]]  # (keyword, arguments), continuation lines joined


def parse(text: str) -> dict[str, Stage]:
  """The Dockerfile's stages by name, in order."""
  lines = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
  stages: dict[str, Stage] = {}
  for line in re.sub(r"\\\n", " ", lines).splitlines():
    if not line.strip():
      continue
    keyword, _, arguments = line.strip().partition(" ")
    if keyword.upper() == "FROM":
      base, name = re.fullmatch(r"(\S+)\s+AS\s+(\S+)", arguments.strip(), re.IGNORECASE).groups()
      stages[name] = Stage(name, base, [])
    else:
      list(stages.values())[-1].instructions.append((keyword.upper(), arguments.strip()))
  return stages


STAGES = parse(DOCKERFILE.read_text())


def chain(name: str) -> list[Stage]:
  """The stages `name` builds on, from the one on a base image to `name` itself."""
  stages = [STAGES[name]]
  while stages[0].base in STAGES:
    stages.insert(0, STAGES[stages[0].base])
  return stages


def python_version(name: str) -> str:
  return re.fullmatch(r"python:(\d+\.\d+)[-.\w]*", chain(name)[0].base).group(1)


def environment(name: str) -> dict[str, str]:
  """The ENV a target sets, through its stages; `$VAR` expands to what an earlier ENV set, else stays as written."""
  env: dict[str, str] = {}
  for stage in chain(name):
    for keyword, arguments in stage.instructions:
      if keyword == "ENV":
        for item in shlex.split(arguments):
          key, value = item.split("=", 1)
          env[key] = re.sub(r"\$\{?(\w+)\}?", lambda match: env.get(match.group(1), match.group(0)), value)
  return env


def commands(stage: Stage) -> list[list[str]]:
  """The shell commands of the stage's RUN instructions, each split into words."""
  return [shlex.split(command) for keyword, arguments in stage.instructions if keyword == "RUN"
          for command in re.split(r"\s*&&\s*", arguments)]


def build_context(name: str, context: pathlib.Path) -> list[list[str]]:
  """Lays out the working directory the target's RUN steps see (COPY, and files `sed` writes); returns the
  arguments of the target's own `pip install` commands."""
  installs = []
  for stage in chain(name):
    for keyword, arguments in stage.instructions:
      if keyword == "COPY":
        *sources, destination = shlex.split(arguments)
        assert not any(source.startswith("--") for source in sources), f"COPY flags are not handled: {arguments}"
        for source in sources:
          if (ROOT / source).is_dir():
            shutil.copytree(ROOT / source, context / destination, dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
          else:
            shutil.copy2(ROOT / source, context / destination)
    for words in commands(stage):
      if words[0] == "sed" and words[-2] == ">":
        written = subprocess.run(words[:-2], cwd=context, capture_output=True, text=True, check=True).stdout
        (context / words[-1]).write_text(written)
      elif words[:2] == ["pip", "install"] and stage.name == name:
        installs.append(words[2:])
  return installs


def stand_in(requirement: str) -> str:
  """A requirement pip can resolve on PyPI. The Cloud TPU TensorFlow wheel is not on PyPI; PyPI's
  tensorflow==2.15.0 declares the same requirements, so a wheel URL stands for its name and version."""
  if "://" not in requirement:
    return requirement
  dist, version = pathlib.PurePosixPath(requirement).name.split("-")[:2]
  return f"{dist}=={version}"


def interpreter(version: str) -> str | None:
  """A Python of `version` on this machine (on PATH or under pyenv), or None."""
  if f"{sys.version_info.major}.{sys.version_info.minor}" == version:
    return sys.executable
  candidates = [shutil.which(f"python{version}"),
                *sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{version}.*/bin/python")))]
  return next((candidate for candidate in candidates if candidate and _runs_as(candidate, version)), None)


def _runs_as(python: str, version: str) -> bool:
  """Whether `python` starts and is that version (a pyenv shim for a version not selected fails)."""
  done = subprocess.run([python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], capture_output=True,
                        text=True)
  return done.returncode == 0 and done.stdout.strip() == version


def index_url() -> str:
  """The index pip is configured to use (PyPI unless configured otherwise)."""
  if os.environ.get("PIP_INDEX_URL"):
    return os.environ["PIP_INDEX_URL"]
  configured = subprocess.run([sys.executable, "-m", "pip", "config", "get", "global.index-url"],
                              capture_output=True, text=True).stdout.strip()
  return configured or "https://pypi.org/simple"


@pytest.fixture(scope="module")
def registry() -> str:
  """The package index, or a skip when it cannot be reached."""
  index = index_url().rstrip("/")
  context = ssl.create_default_context(cafile=os.environ.get("PIP_CERT"))
  try:
    urllib.request.urlopen(f"{index}/pip/", timeout=20, context=context).close()
  except OSError as error:
    pytest.skip(f"the package registry {index} cannot be reached ({error}): resolving the Dockerfile's pip "
                "installs needs it")
  return index


def resolve(arguments: list[str], version: str, context: pathlib.Path, report: pathlib.Path) -> dict[str, str]:
  """What `pip install arguments` would install for Python `version` on the image's platform: name -> version."""
  python = interpreter(version)
  if python is None:
    pytest.skip(f"no Python {version} here (on PATH as python{version} or under ~/.pyenv): pip evaluates "
                "requirement markers with the interpreter it runs on, so resolving for the image needs one")
  # fast-deps reads each wheel's metadata with HTTP range requests instead of downloading it (CUDA wheels: GBs).
  command = [sys.executable, "-m", "pip", "--python", python, "install", "--dry-run", "--ignore-installed",
             "--only-binary=:all:", "--python-version", version, *(f"--platform={p}" for p in PLATFORMS),
             "--use-feature=fast-deps", "--quiet", "--report", str(report),
             *(stand_in(argument) for argument in arguments if argument != "--no-cache-dir")]
  done = subprocess.run(command, cwd=context, capture_output=True, text=True, timeout=540)
  assert done.returncode == 0, f"`pip install {' '.join(arguments)}` does not resolve:\n{done.stderr[-3000:]}"
  installed = json.loads(report.read_text())["install"]
  return {item["metadata"]["name"].lower().replace("_", "-"): item["metadata"]["version"] for item in installed}


def test_the_dockerfile_has_the_documented_targets():
  assert list(STAGES) == ["cpu", "tpu", "gpu"] and {python_version(name) for name in STAGES} == {"3.10"}


@pytest.mark.parametrize("target", list(STAGES))
def test_every_targets_pip_installs_resolve_for_the_images_python_and_platform(target, registry, tmp_path):
  context = tmp_path / "context"
  context.mkdir()
  installs = build_context(target, context)
  assert installs, f"target {target} installs nothing with pip"
  for index, arguments in enumerate(installs):
    resolved = resolve(arguments, python_version(target), context, tmp_path / f"report-{index}.json")
    tensorflow = {name: version for name, version in resolved.items() if name in ("tensorflow", "tensorflow-cpu")}
    assert tensorflow and all(version.startswith("2.15.") for version in tensorflow.values()), resolved
  if target == "tpu":
    assert resolved["tensorflow"] == "2.15.0" and resolved["ml-dtypes"].startswith("0.2.")


def test_the_tpu_targets_constraints_change_only_the_ml_dtypes_pin(tmp_path):
  build_context("tpu", tmp_path)
  [written] = [words[-1] for words in commands(STAGES["tpu"]) if words[0] == "sed"]
  cpu_pins = (tmp_path / "constraints.txt").read_text().splitlines()
  tpu_pins = (tmp_path / written).read_text().splitlines()
  changed = [(cpu, tpu) for cpu, tpu in zip(cpu_pins, tpu_pins) if cpu != tpu]
  assert len(cpu_pins) == len(tpu_pins) and [tpu for _, tpu in changed] == ["ml-dtypes==0.2.0"]


def test_libtpus_variables_are_set_in_no_image_and_the_gpu_image_finds_gkes_nvidia_driver():
  """libtpu's variables belong to TPU learner pods only (tests/launch/cluster/test_manifests.py checks those)."""
  for target in STAGES:
    assert not set(LIBTPU_VARIABLES) & set(environment(target)), target
  gpu = environment("gpu")
  assert "/usr/local/nvidia/lib64" in gpu["LD_LIBRARY_PATH"].split(":")
  assert gpu["PATH"].split(":")[0] == "/usr/local/nvidia/bin" and gpu["PATH"].endswith(":$PATH")
  assert "LD_LIBRARY_PATH" not in environment("cpu")
