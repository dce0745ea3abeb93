"""Python objects left behind per call by TensorFlow ops that hand tensors to Python (tensorflow#62551: with
TensorFlow 2.15 on Python 3.11, one ~40-byte object per output tensor, never freed). Counts
`sys.getallocatedblocks()` over COUNT calls of each case in one process, after a warm-up.
Usage: python benchmarks/probes/tensors_left_behind.py [COUNT]"""
import gc, sys

import tensorflow as tf

COUNT = int(sys.argv[1]) if sys.argv[1:] else 20000


def left_per_call(fn) -> float:
  for _ in range(500):
    fn()
  gc.collect()
  before = sys.getallocatedblocks()
  for _ in range(COUNT):
    fn()
  gc.collect()
  return (sys.getallocatedblocks() - before) / COUNT


constant, variable = tf.constant(2.0), tf.Variable(3)
six_fields = iter(tf.data.Dataset.from_tensors({str(i): tf.zeros([3]) for i in range(6)}).repeat())
CASES = {
    "tf.identity(constant)": lambda: tf.identity(constant),
    "constant.numpy() (no new tensor)": lambda: constant.numpy(),
    "int(variable.numpy())": lambda: int(variable.numpy()),
    "tf.function, no output": tf.function(lambda: None),
    "tf.function, 1 output": tf.function(lambda: constant * 2),
    "tf.function, 5 scalar outputs": tf.function(lambda: {str(i): constant * i for i in range(5)}),
    "tf.function, the 5 stacked into 1": tf.function(lambda: tf.stack([constant * i for i in range(5)])),
    "next() on a dataset of 6 fields": lambda: next(six_fields),
    "next() of the same, wrapped in an Optional": (lambda wrapped: lambda: next(wrapped))(
        iter(tf.data.Dataset.from_tensors({str(i): tf.zeros([3]) for i in range(6)}).repeat()
             .map(tf.experimental.Optional.from_value))),
}
print(f"Python {sys.version.split()[0]}, TensorFlow {tf.__version__}; objects left per call over {COUNT:,d} calls:")
for name, fn in CASES.items():
  print(f"  {name:45s} {left_per_call(fn):6.2f}")
