"""`python -m sot`: the `sot` command (see sot.tools.cli)."""
import sys

from sot.tools.cli import main

sys.exit(main())
