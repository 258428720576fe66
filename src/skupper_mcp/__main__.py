"""``python -m skupper_mcp``: the same as the ``skupper-mcp`` command."""

import sys

from skupper_mcp.cli import main

sys.exit(main())
