"""`python -m crmatrix.cli`: the `crmatrix` command."""

import sys

from crmatrix.cli import main

sys.exit(main())
