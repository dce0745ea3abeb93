"""`wrap_optimizer`: gradients averaged over replicas exactly once, so a one-device step is right on N.

Under tf.distribute, a Keras optimizer's `apply_gradients` *sums* gradients across replicas: it expects a
loss already divided by the global batch size (`tf.nn.compute_average_loss`). A step written for one
device takes the mean loss over its own batch, so a plain optimizer on N replicas takes steps N times too
large. The wrapper averages gradients with one all-reduce and tells Keras not to aggregate again.

>>> import tensorflow as tf, rlrep
>>> repl = rlrep.make_replicator("cpu:2")
>>> with repl.scope():
...   weight = tf.Variable(1.0)
...   optimizer = rlrep.wrap_optimizer(tf.keras.optimizers.SGD(learning_rate=1.0))
>>> def step():
...   gradient = tf.cast(rlrep.replica_id(), tf.float32)  # replica 0: 0, replica 1: 1
...   optimizer.apply_gradients([(gradient, weight)])
>>> _ = repl.function(step)()
>>> float(weight.numpy())  # 1 - mean(0, 1)
0.5
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Sequence

import tensorflow as tf

from rlrep import primitives


class ReplicatedOptimizer(tf.Module):
  """A Keras optimizer whose `apply_gradients` averages gradients across replicas first.

  Everything but `apply_gradients` and `minimize` is the wrapped optimizer's (learning rate, iterations,
  variables). It is a `tf.Module`, so `tf.train.Checkpoint(optimizer=wrapped)` saves the optimizer's state.
  """

  def __init__(self, optimizer: tf.keras.optimizers.Optimizer):
    if isinstance(optimizer, ReplicatedOptimizer):
      raise ValueError("this optimizer is already wrapped: wrapping twice would average gradients twice.")
    super().__init__(name="replicated_optimizer")
    self.optimizer = optimizer

  def apply_gradients(self, grads_and_vars: Iterable[tuple[tf.Tensor | None, tf.Variable]], **kwargs: Any):
    pairs = [(g, v) for g, v in grads_and_vars if g is not None]
    if not pairs:
      raise ValueError("no gradients to apply: every gradient is None (is the loss connected to the variables?).")
    if tf.distribute.has_strategy() and tf.distribute.in_cross_replica_context():
      raise primitives.ReplicaContextError(
          "apply_gradients must run inside the step_fn given to `Replicator.run`, where each replica has "
          "its own gradients to average.")
    gradients = [g for g, _ in pairs]
    if tf.distribute.has_strategy():
      gradients = primitives.all_mean(gradients)
    return self.optimizer.apply_gradients(zip(gradients, [v for _, v in pairs]),
                                          skip_gradients_aggregation=True, **kwargs)

  def minimize(self, loss_fn: Callable[[], tf.Tensor], var_list: Sequence[tf.Variable]) -> tf.Tensor:
    """Applies the replica-mean gradient of `loss_fn()` to `var_list`; returns this replica's loss."""
    with tf.GradientTape() as tape:
      loss = loss_fn()
    self.apply_gradients(zip(tape.gradient(loss, var_list), var_list))
    return loss

  def __getattr__(self, name: str) -> Any:
    # Only reached for names this wrapper lacks; before __init__ has set `optimizer` there is nothing to ask.
    optimizer = self.__dict__.get("optimizer")
    if optimizer is None or name.startswith("__"):
      raise AttributeError(name)
    return getattr(optimizer, name)


def wrap_optimizer(optimizer: tf.keras.optimizers.Optimizer) -> ReplicatedOptimizer:
  """Wraps a Keras optimizer so that `apply_gradients` uses the mean gradient over all replicas."""
  return ReplicatedOptimizer(optimizer)
