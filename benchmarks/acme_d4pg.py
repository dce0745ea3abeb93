"""DeepMind Acme's TF D4PG learner with rlrep's default pixel network, for `benchmarks/learner.py --acme`.

The comparison that matters is per update on the same network, so this builds Acme's own
`acme.agents.tf.d4pg.D4PGLearner` (unchanged: its `_step`, losses, optimizers and target copies) around Sonnet
modules shaped exactly as rlrep's defaults: two 3x3 convolutions (32 channels, stride 2 then 1, no padding)
on uint8 pixels scaled to [-0.5, 0.5], FC-50 + LayerNorm + tanh, then Acme's LayerNormMLP(256, 256) policy
and critic heads and a 51-atom categorical head. `parameter_count` lets a test hold the two networks equal.
Acme's update has no augmentation, so compare it with rlrep's augmentation-off variants (and know that
rlrep's own DrQ shift is the extra work in the augmentation-on ones).

Acme 0.4 is installed without its dependencies (`scripts/setup.sh`, pins in benchmarks/acme-requirements.txt):
it pins TensorFlow 2.8 and dm-launchpad 0.5, which has no wheels for Python 3.11. Two imports that a
learner never uses are stepped around: Acme's top-level package imports launchpad only for the environment
loop's signal handling, so `load_acme` registers an empty `launchpad` module when the real one is absent;
and the `acme.agents.tf.d4pg` package's `__init__` imports the whole agent (Reverb adders that need JAX), so
its `learning.py` is loaded by file, unchanged.
"""

from __future__ import annotations

import importlib.util
import pathlib
import sys
import types
from typing import Callable

import numpy as np
import tensorflow as tf
from dm_env import specs

from agents.d4pg import D4PGConfig

INSTALL_HINT = ("Acme's TF learner is not installed: run `bash scripts/setup.sh` (it installs benchmarks/"
                "acme-requirements.txt with --no-deps) or `pip install --no-deps -r benchmarks/acme-requirements.txt`"
                "; `benchmarks/learner.py --no-acme` leaves Acme out.")
_LEARNING_MODULE = "acme_tf_d4pg_learning"


def load_acme():
  """Imports and returns (acme's d4pg learning module, acme.tf.networks, sonnet); ImportError with the
  install command when Acme is missing."""
  if "launchpad" not in sys.modules:
    try:
      import launchpad  # noqa: F401
    except ImportError:
      sys.modules["launchpad"] = types.ModuleType("launchpad")  # see the module docstring
  try:
    import acme
    import sonnet as snt
    from acme.tf import networks
  except ImportError as error:
    raise ImportError(f"{INSTALL_HINT} ({error})") from error
  if _LEARNING_MODULE not in sys.modules:
    path = pathlib.Path(acme.__file__).parent / "agents" / "tf" / "d4pg" / "learning.py"
    spec = importlib.util.spec_from_file_location(_LEARNING_MODULE, path)
    sys.modules[_LEARNING_MODULE] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sys.modules[_LEARNING_MODULE])
  return sys.modules[_LEARNING_MODULE], networks, snt


def make_networks(action_spec: specs.BoundedArray, config: D4PGConfig) -> dict:
  """Acme/Sonnet modules shaped as rlrep's networks for `config` (its conv channels, feature size, hidden
  sizes and atoms): {'observation', 'policy', 'critic'}, variables not yet created (`create_variables`)."""
  _, networks, snt = load_acme()
  scale = lambda pixels: tf.cast(pixels, tf.float32) / 255.0 - 0.5  # noqa: E731
  channels = config.conv_channels
  observation = snt.Sequential([scale, snt.Conv2D(channels, 3, stride=2, padding="VALID"), tf.nn.relu,
                                snt.Conv2D(channels, 3, stride=1, padding="VALID"), tf.nn.relu, snt.Flatten(),
                                snt.Linear(config.feature_dim), snt.LayerNorm(axis=-1, create_scale=True,
                                                                              create_offset=True), tf.nn.tanh])
  policy = snt.Sequential([networks.LayerNormMLP(config.hidden_sizes, activate_final=True),
                           networks.NearZeroInitializedLinear(int(np.prod(action_spec.shape))),
                           networks.TanhToSpec(action_spec)])
  critic = snt.Sequential([networks.CriticMultiplexer(),
                           networks.LayerNormMLP(config.hidden_sizes, activate_final=True),
                           networks.DiscreteValuedHead(config.vmin, config.vmax, config.num_atoms)])
  return {"observation": observation, "policy": policy, "critic": critic}


def create_variables(nets: dict, pixels_shape: tuple[int, ...]) -> None:
  """Calls every module once on a one-element batch so its variables exist."""
  features = nets["observation"](tf.zeros((1, *pixels_shape), tf.uint8))
  nets["critic"](features, nets["policy"](features))


def random_batch(batch_size: int, seed: int = 0) -> dict:
  """A learner-shaped batch both sides of the comparison train on: uint8 84x84x9 observations, 6-d actions in
  [-1, 1], rewards of a 3-step return at action repeat 2 (<= 6), discount 0.99 ** 3."""
  rng = np.random.default_rng(seed)
  pixels = lambda: rng.integers(0, 256, (batch_size, 84, 84, 9), dtype=np.uint8)  # noqa: E731
  return {"observation": {"pixels": pixels()}, "next_observation": {"pixels": pixels()},
          "action": rng.uniform(-1, 1, (batch_size, 6)).astype(np.float32),
          "reward": rng.uniform(0, 6, batch_size).astype(np.float32),
          "discount": np.full(batch_size, 0.99 ** 3, np.float32)}


def parameter_count(nets: dict) -> int:
  return sum(int(np.prod(v.shape)) for name in ("observation", "policy", "critic") for v in nets[name].variables)


def acme_learner(batch: dict, action_spec: specs.BoundedArray,
                 config: D4PGConfig) -> tuple[Callable[[], None], dict]:
  """(Acme's `D4PGLearner.step`, its online networks), the learner with `config`'s networks, learning rate,
  discount and target period training on `batch` (a dict of numpy arrays shaped as `random_batch`'s) repeated
  through tf.data, so it never waits on replay. Checkpointing is off and the logger a no-op, so a step is
  Acme's compiled update plus its step counter."""
  learning, _, snt = load_acme()
  import reverb
  from acme import types as acme_types
  from acme.utils import counting, loggers

  pixels_shape = batch["observation"]["pixels"].shape[1:]
  online, target = make_networks(action_spec, config), make_networks(action_spec, config)
  for nets in (online, target):
    create_variables(nets, pixels_shape)
  size = len(batch["reward"])
  transition = acme_types.Transition(observation=batch["observation"]["pixels"], action=batch["action"],
                                     reward=batch["reward"], discount=batch["discount"],
                                     next_observation=batch["next_observation"]["pixels"], extras=())
  info = reverb.SampleInfo(key=np.zeros(size, np.uint64), probability=np.ones(size, np.float64),
                           table_size=np.full(size, size, np.int64), priority=np.ones(size, np.float64),
                           times_sampled=np.ones(size, np.int32))
  dataset = tf.data.Dataset.from_tensors(reverb.ReplaySample(info=info, data=transition)).repeat().prefetch(2)
  learner = learning.D4PGLearner(
      policy_network=online["policy"], critic_network=online["critic"], target_policy_network=target["policy"],
      target_critic_network=target["critic"], observation_network=online["observation"],
      target_observation_network=target["observation"], discount=config.discount,
      target_update_period=config.target_update_period, dataset_iterator=iter(dataset),
      policy_optimizer=snt.optimizers.Adam(config.learning_rate),
      critic_optimizer=snt.optimizers.Adam(config.learning_rate), counter=counting.Counter(),
      logger=loggers.NoOpLogger(), checkpoint=False)
  return learner.step, online
