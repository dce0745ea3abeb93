"""rlrep: write a model and a training step for one device; rlrep replicates them over many.

The stack is checked before anything heavy is imported, so a wrong TensorFlow, NumPy or MuJoCo version
fails here with an explanation rather than with a linker error (see `rlrep._stack`).
"""

from rlrep._stack import StackError, installed_versions, require_compatible_stack

require_compatible_stack()

__version__ = "0.1.0"
