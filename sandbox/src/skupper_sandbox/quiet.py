"""A library's warnings go to the log at DEBUG, not to the user's terminal.

asyncssh's import alone warns five times (``CryptographyDeprecationWarning: DSA is
deprecated``, with the cryptography release ``make venv`` installs): nothing the user of
``skupper-sandbox`` or ``make demo`` caused or can act on. The world daemon's log keeps
them at DEBUG for whoever asks.
"""

from __future__ import annotations

import logging
import warnings
from typing import TextIO


def library_warnings_to_log() -> None:
    """From now on, a warning a module issues is a DEBUG record of ``py.warnings``."""
    warnings.showwarning = _to_log


def _to_log(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    text = warnings.formatwarning(message, category, filename, lineno, line).rstrip()
    logging.getLogger("py.warnings").debug("%s", text)
