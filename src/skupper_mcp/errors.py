"""The project's exception tree. Foreign errors (asyncssh, OSError, kubernetes) are
translated into these at the connector seam, with the original kept as ``__cause__``.

    SkupperMcpError
    ├── ConfigError          topology.env or an argument is wrong: nothing was run
    ├── ConnectError         a host could not be reached (refused, timed out, auth, host key)
    │   └── HostKeyError     the host's key is unknown or has changed
    ├── CommandError         a remote or local command ran and failed (exit status, stderr tail)
    ├── CommandTimeout       a command did not finish within its timeout
    ├── KubeError            the Kubernetes API refused or failed a request
    ├── BusyError            another operation holds the topology's lock
    └── BackupError          a site's backup is incomplete: nothing may be removed or restored
"""

from __future__ import annotations


class SkupperMcpError(Exception):
    """Root of every error this project raises on purpose."""


class ConfigError(SkupperMcpError):
    """Bad configuration or arguments. ``location`` is "file:line" when known."""

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        variable: str | None = None,
    ) -> None:
        self.path = path
        self.line = line
        self.variable = variable
        where = ""
        if path:
            where = f"{path}:{line}: " if line else f"{path}: "
        what = f"{variable}: " if variable else ""
        super().__init__(f"{where}{what}{message}")


class ConnectError(SkupperMcpError):
    """A host could not be reached."""

    def __init__(self, host: str, reason: str) -> None:
        self.host = host
        self.reason = reason
        super().__init__(f"cannot connect to {host}: {reason}")


class HostKeyError(ConnectError):
    """The host key is not trusted (unknown, or different from known_hosts)."""


class CommandError(SkupperMcpError):
    """A command exited non-zero."""

    def __init__(
        self, host: str, command: str, exit_status: int | None, stderr: str, stdout: str = ""
    ) -> None:
        self.host = host
        self.command = command
        self.exit_status = exit_status
        self.stderr = stderr
        self.stdout = stdout
        tail = stderr_tail(stderr or stdout)
        summary = command if len(command) <= 80 else command[:77] + "..."
        detail = f": {tail}" if tail else ""
        super().__init__(f"command failed on {host} (exit {exit_status}): {summary}{detail}")


class CommandTimeout(SkupperMcpError):
    """A command did not finish in time."""

    def __init__(self, host: str, command: str, seconds: float) -> None:
        self.host = host
        self.command = command
        self.seconds = seconds
        summary = command if len(command) <= 80 else command[:77] + "..."
        super().__init__(f"command timed out on {host} after {seconds:g}s: {summary}")


class KubeError(SkupperMcpError):
    """A Kubernetes API call failed."""

    def __init__(self, context: str, reason: str, status: int | None = None) -> None:
        self.context = context
        self.reason = reason
        self.status = status
        super().__init__(f"Kubernetes API ({context}): {reason}")


class BusyError(SkupperMcpError):
    """Another operation on the same topology is running."""


def stderr_tail(text: str, lines: int = 3, limit: int = 400) -> str:
    """The last few non-empty lines of a command's output, for error messages."""
    kept = [line.strip() for line in text.strip().splitlines() if line.strip()][-lines:]
    tail = " | ".join(kept)
    return tail if len(tail) <= limit else "..." + tail[-limit:]


class BackupError(SkupperMcpError):
    """A backup that does not hold everything it must; ``missing`` names what it lacks."""

    def __init__(self, host: str, message: str, missing: list[str]) -> None:
        self.host = host
        self.missing = missing
        super().__init__(f"{host}: {message}")
