"""Run the host's ``podman`` and ``systemctl`` (whatever is on the PATH).

``systemctl --user`` for a user; the system ``systemctl`` for root (``getCmd*`` in
``internal/nonkube/common/systemd.go``).
"""

from __future__ import annotations

import os
import subprocess

from ... import hostenv
from ...errors import output_tail
from .failure import CliFailure


class HostCommandError(CliFailure):
    """A podman or systemctl command exited non-zero."""

    def __init__(self, argv: list[str], code: int, output: str) -> None:
        self.argv = argv
        self.status = code
        self.output = output
        super().__init__(f"{' '.join(argv[:3])}: exit status {code}: {output_tail(output)}")


def run(argv: list[str], timeout: float = 120.0) -> str:
    """Run a command; return its stdout or raise ``HostCommandError``."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except FileNotFoundError as exc:
        raise CliFailure(f"Command not found: {argv[0]}") from exc
    except subprocess.TimeoutExpired as exc:
        raise CliFailure(f"{' '.join(argv[:3])}: timed out after {timeout:g}s") from exc
    if done.returncode != 0:
        raise HostCommandError(argv, done.returncode, done.stderr or done.stdout)
    return done.stdout


def podman(*args: str) -> str:
    return run(["podman", *args])


def systemctl_argv(*args: str) -> list[str]:
    """``systemctl [--user] ARGS``, as Skupper runs it for the current user."""
    try:
        root = hostenv.current_host(os.environ).is_root
    except hostenv.NotOnSandboxHost:
        root = os.getuid() == 0
    return ["systemctl", *([] if root else ["--user"]), *args]


def systemctl(*args: str) -> str:
    return run(systemctl_argv(*args))


PODMAN_SOCKET_UNIT = "podman.socket"


def podman_socket_path(runtime_dir: str) -> str:
    """The API socket the CLI talks to (``unix://$XDG_RUNTIME_DIR/podman/podman.sock``)."""
    return f"{runtime_dir}/podman/podman.sock"


def podman_socket_active() -> bool:
    """Whether the podman API socket listens: the real CLI drives podman through it, so
    nothing works while ``podman.socket`` is inactive (the sandbox has no socket file: the
    user manager's answer for ``podman.socket`` stands for it)."""
    return quietly(systemctl_argv("is-active", "--quiet", PODMAN_SOCKET_UNIT))


def quietly(argv: list[str]) -> bool:
    """Run a best-effort command (cleanup); True when it succeeded."""
    try:
        run(argv)
    except CliFailure:
        return False
    return True
