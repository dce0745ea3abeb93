"""rlrep: write a model and a training step for one device; rlrep replicates them over many.

>>> import tensorflow as tf, rlrep
>>> repl = rlrep.make_replicator("cpu:2")     # or "auto", "gpu", "tpu", "multi_worker"
>>> with repl.scope():
...   weight = tf.Variable(2.0)
...   optimizer = rlrep.wrap_optimizer(tf.keras.optimizers.SGD(0.1))
>>> def step_fn():
...   loss = optimizer.minimize(lambda: weight ** 2, [weight])
...   return rlrep.all_mean(loss)
>>> float(repl.function(step_fn, reduce="mean")())
4.0

The stack is checked before anything heavy is imported, so a wrong TensorFlow, NumPy or MuJoCo version
fails here with an explanation rather than with a linker error (see `rlrep._stack`).
"""

from rlrep._stack import StackError, installed_versions, require_compatible_stack

require_compatible_stack()

from rlrep import precision  # noqa: E402
from rlrep.optim import ReplicatedOptimizer, wrap_optimizer  # noqa: E402
from rlrep.primitives import (  # noqa: E402
    ReplicaContextError, all_gather, all_max, all_mean, all_min, all_sum, broadcast, num_replicas, replica_id)
from rlrep.replicator import (  # noqa: E402
    InputContext, Replicator, configure_logical_cpus, make_replicator, parse_spec)

__version__ = "0.1.0"
