"""`python -m launch.cli ARGS` is `rlrep ARGS`; `rlrep sweep` starts its runs this way."""

import sys

from launch.cli.commands import main

if __name__ == "__main__":
  sys.exit(main())
