"""The one error the emulated CLI raises: its message is what the real CLI prints.

The real CLI prints every error on **stdout** (``utils.HandleError``: ``fmt.Println(err)``)
and exits 2 for a validation error (``ValidateInput``), 1 for any other
(internal/cmd/skupper/common/utils/handle_error.go@2.1.2).
"""

from __future__ import annotations

GENERIC_ERROR = 1
VALIDATION_ERROR = 2


class CliFailure(Exception):
    """A command failed; ``str(exc)`` goes to stdout and the exit status is ``code``."""

    def __init__(self, message: str, code: int = GENERIC_ERROR) -> None:
        super().__init__(message)
        self.code = code


def warn(message: str, **attrs: str) -> None:
    """A ``log/slog`` warning as the CLI's default handler writes it: on stderr."""
    import sys
    import time

    extra = "".join(f" {k}={v}" for k, v in attrs.items())
    stamp = time.strftime("%Y/%m/%d %H:%M:%S")
    print(f"{stamp} WARN {message}{extra}", file=sys.stderr)
