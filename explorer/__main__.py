"""`python -m explorer ...`: the command line (explorer/cli/)."""
import sys

from .cli import main

sys.exit(main())
