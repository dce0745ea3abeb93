"""Device setup of role processes: which GPUs each role sees, and TensorFlow's GPU memory growth.

This machine has no GPU, so TensorFlow's GPU list is stood in for where a test needs GPUs; the real processes'
environments are checked end to end in tests/launch/modes/test_local.py and test_ray_cluster.py.
"""

import logging

import tensorflow as tf
from tensorflow.python.eager import context

from launch.experiment import Experiment
from launch.program import fit_to_nodes
from launch.roles import devices


def test_only_a_gpu_learner_sees_gpus_and_each_renderer_sees_the_one_it_renders_on():
  program = fit_to_nodes(Experiment(replicas="gpu", actors=3), [{"CPU": 16.0, "GPU": 2.0}])
  render = devices.render_gpus(program, ["0", "1"])
  environments = {role.name: devices.process_environment(role, render.get(role.name)) for role in program}
  assert environments == {"counter": {"CUDA_VISIBLE_DEVICES": ""}, "replay": {"CUDA_VISIBLE_DEVICES": ""},
                          "learner": {},  # Ray sets it to the learner's GPUs: all of them
                          "evaluator": {"CUDA_VISIBLE_DEVICES": "0"}, "actor-0": {"CUDA_VISIBLE_DEVICES": "1"},
                          "actor-1": {"CUDA_VISIBLE_DEVICES": "0"}, "actor-2": {"CUDA_VISIBLE_DEVICES": "1"}}
  learner = next(role for role in program if role.kind == "learner")
  assert (learner.accelerator, learner.accelerator_count) == ("gpu", 2)
  assert "learner on 2 GPU(s)" in devices.summary(program, render)


def test_without_gpus_every_role_starts_with_none_visible():
  program = fit_to_nodes(Experiment(replicas="auto"), [{"CPU": 4.0}])
  assert devices.render_gpus(program, []) == {}
  assert {devices.process_environment(role)["CUDA_VISIBLE_DEVICES"] for role in program} == {""}


def test_a_learner_given_a_gpu_count_keeps_it_and_one_on_cpus_stays_there():
  nodes = [{"CPU": 16.0, "GPU": 4.0}]
  learners = {spec: next(role for role in fit_to_nodes(Experiment(replicas=spec), nodes) if role.kind == "learner")
              for spec in ("gpu:1", "cpu:2")}
  assert (learners["gpu:1"].accelerator, learners["gpu:1"].accelerator_count) == ("gpu", 1)
  assert (learners["cpu:2"].accelerator, learners["cpu:2"].cpus) == (None, 2.0)
  assert devices.process_environment(learners["cpu:2"]) == {"CUDA_VISIBLE_DEVICES": ""}


def test_memory_growth_is_set_on_every_gpu_and_a_gpu_already_set_up_is_reported(monkeypatch, caplog):
  gpus = [tf.config.PhysicalDevice(f"/physical_device:GPU:{i}", "GPU") for i in range(2)]
  grown = []

  def set_memory_growth(gpu, enable):
    if gpu is gpus[1]:
      raise RuntimeError("Physical devices cannot be modified after being initialized")
    grown.append((gpu.name, enable))

  monkeypatch.setattr(tf.config, "list_physical_devices", lambda kind=None: gpus if kind == "GPU" else [])
  monkeypatch.setattr(tf.config.experimental, "set_memory_growth", set_memory_growth)
  with caplog.at_level(logging.WARNING):
    devices.grow_gpu_memory()
  assert grown == [("/physical_device:GPU:0", True)]
  assert "already set up /physical_device:GPU:1" in caplog.text


def test_on_cpu_runs_the_body_under_a_cpu_device_scope():
  assert devices.on_cpu(lambda: context.context().device_name)().endswith("device:CPU:0")
  assert context.context().device_name == ""


def test_a_process_report_says_what_it_started_with_and_what_tensorflow_sees():
  report = devices.report(role="actor-0")
  assert report["role"] == "actor-0" and report["tensorflow_gpus"] == [] and "rendering" in report
