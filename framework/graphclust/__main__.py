import sys

from graphclust.cli import main

sys.exit(main())
