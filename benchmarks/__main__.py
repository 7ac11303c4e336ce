"""``python -m benchmarks run|report|list`` (see :mod:`benchmarks.runner_cli`)."""

import sys

from benchmarks.runner_cli import main

if __name__ == "__main__":
    sys.exit(main())
