"""Test-session setup: 8 logical CPU devices, made before any test runs a TensorFlow op."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("RAY_AUTH_MODE", "disabled")

import rlrep  # noqa: E402

rlrep.configure_logical_cpus(8)
