"""``python -m skupper_sandbox``: the same as the ``skupper-sandbox`` command."""

import sys

from skupper_sandbox.cli import main

sys.exit(main())
