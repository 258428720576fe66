"""Emulated `curl` on a sandbox host: the real curl, seeing the host's own loopback.

`curl http://127.0.0.1:9000/` on host H must reach H's port 9000, so host-local names
are redirected to H's address with `--connect-to` and outgoing sockets are bound to it
with `--interface` (docs/sandbox.md §2).
"""

from __future__ import annotations

import os
import shutil
import sys

from skupper_sandbox import hostenv

LOCAL_NAMES = ("localhost", "127.0.0.1", "0.0.0.0", "[::1]")


def real_curl(env: dict[str, str]) -> str | None:
    """The machine's curl, not this shim (whose directory is first on the host's PATH)."""
    shim_dir = os.path.dirname(os.path.abspath(sys.argv[0]))
    path = os.pathsep.join(
        p for p in env.get("PATH", "/usr/bin:/bin").split(os.pathsep) if p and p != shim_dir
    )
    for candidate in ("/usr/bin/curl", "/usr/local/bin/curl"):
        if os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("curl", path=path)


def curl_argv(args: list[str], address: str) -> list[str]:
    """The real curl's arguments: host-local names go to `address`, and leave from it."""
    extra: list[str] = []
    for name in LOCAL_NAMES:
        extra += ["--connect-to", f"{name}::{address}:"]
    return [*extra, "--interface", address, *args]


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    env = dict(os.environ)
    curl = real_curl(env)
    if curl is None:
        print("curl: not installed on this machine", file=sys.stderr)
        return 127
    try:
        info = hostenv.current_host(env)
    except hostenv.NotOnSandboxHost:
        os.execv(curl, [curl, *args])
    os.execv(curl, [curl, *curl_argv(args, info.address)])
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
