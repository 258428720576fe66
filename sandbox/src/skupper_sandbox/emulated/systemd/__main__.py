"""Entry point of the emulated systemd user manager.

python -m skupper_sandbox.emulated.systemd --host-dir H
"""

from __future__ import annotations

import sys

from .manager import main

if __name__ == "__main__":
    sys.exit(main())
