"""The sandbox's own errors: it shares no code with the product it hosts."""

from __future__ import annotations


class SandboxError(Exception):
    """Base of the errors the sandbox raises on purpose."""


class RouterConfigError(SandboxError):
    """A router configuration the router refuses; ``path`` is the file when known."""

    def __init__(self, message: str, *, path: str | None = None) -> None:
        self.path = path
        super().__init__(f"{path}: {message}" if path else message)


def output_tail(text: str, lines: int = 3, limit: int = 400) -> str:
    """The last few non-empty lines of a command's output, for error messages."""
    kept = [line.strip() for line in text.strip().splitlines() if line.strip()][-lines:]
    tail = " | ".join(kept)
    return tail if len(tail) <= limit else "..." + tail[-limit:]
