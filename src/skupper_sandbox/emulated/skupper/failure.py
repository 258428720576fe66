"""The one error the emulated CLI raises: its message is what the real CLI prints."""

from __future__ import annotations


class CliFailure(Exception):
    """A command failed; ``str(exc)`` goes to stderr and the exit status is 1."""
