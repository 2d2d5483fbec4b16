"""`python -m slinky3d`: the same as the `slinky3d` command."""

import sys

from slinky3d.cli import main

sys.exit(main())
