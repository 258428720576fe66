"""``python -m skupper_sandbox.router.real``: a router container's process on a real skrouterd.

It does what the image's ``launch.sh`` does (``Skrouterd.config``: ``configure.sh``'s copy,
adapted to the sandbox's hosts) and then *is* skrouterd (exec), so signals and the exit code
are the router's own. The world must run the real router (``world.json``).
"""

from __future__ import annotations

import os
import sys

from skupper_sandbox import hostenv, lifeline
from skupper_sandbox.router import choice
from skupper_sandbox.router.skrouterd import Skrouterd


def main() -> int:
    lifeline.hold()
    try:
        host = hostenv.current_host()
    except (hostenv.NotOnSandboxHost, OSError) as exc:
        print(f"router: {exc}", file=sys.stderr)
        return 1
    router = choice.for_world(host.world_dir)
    if not isinstance(router, Skrouterd):
        print("router: this world does not run the real router", file=sys.stderr)
        return 1
    env = dict(os.environ)
    # launch.sh exports these before configure.sh runs (so a config may use them).
    env.setdefault("HOSTNAME_IP_ADDRESS", host.address)
    env.setdefault("POD_ID", env.get("HOSTNAME", "").rsplit("-", 1)[-1])
    try:
        started = router.config(host, env)
    except (OSError, RuntimeError) as exc:
        print(f"router: {exc}", file=sys.stderr)
        return 1
    for line in started.stdout:
        print(line, flush=True)
    for line in started.stderr:
        print(line, file=sys.stderr, flush=True)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(started.argv[0], started.argv, env)
    return 127  # not reached


if __name__ == "__main__":
    sys.exit(main())
