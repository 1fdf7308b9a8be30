"""`python -m perfdsl`: the same as the `perfdsl` command."""

import sys

from perfdsl.cli import main

sys.exit(main())
