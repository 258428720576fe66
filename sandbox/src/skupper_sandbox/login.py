"""The login shim OpenSSH runs (``ForceCommand``) for every session on a sandbox host.

``python -m skupper_sandbox.login HOST_DIR``: applies the host's environment and its
``slow`` fault, then execs the host user's login shell as
``$SHELL -c "$SSH_ORIGINAL_COMMAND"`` in the host's home (``hostenv.login_argv``), exactly
what the asyncssh server does in-process.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from skupper_sandbox import hostenv
from skupper_sandbox.faults import slow_delay


def main(argv: list[str]) -> int:
    """Replace this process with the session's command; returns only on bad usage."""
    if len(argv) != 1:
        print("usage: python -m skupper_sandbox.login HOST_DIR", file=sys.stderr)
        return 2
    host_dir = Path(argv[0])
    delay = slow_delay(host_dir)
    if delay > 0:
        time.sleep(delay)
    command = os.environ.get("SSH_ORIGINAL_COMMAND")
    if command:
        command = hostenv.map_system_paths(command, hostenv.load_host_info(host_dir))
    env = hostenv.host_env(host_dir)
    os.chdir(env["HOME"])
    os.execve(env["SHELL"], hostenv.login_argv(env["SHELL"], command), env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
