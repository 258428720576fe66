"""What a test runs on a sandbox host by hand, as a user at its shell would."""

from __future__ import annotations

from collections.abc import Callable

from skupper_mcp.sites.podman import RELOAD_RACE
from skupper_mcp.sites.work import RUNS

#: Runs one command on a host: (exit status, stdout, stderr).
Run = Callable[[str], tuple[int, str, str]]


def reload_by_hand(run: Run, namespace: str) -> tuple[int, str, str]:
    """``skupper system reload``, run again when it lost the race with the controller (a
    status write into a directory it was emptying: ``PodmanSite.render``), as the product's
    setup and a user would. What the last run said."""
    for _ in range(RUNS):
        status, out, err = run(f"skupper system reload -n {namespace}")
        if status == 0 or RELOAD_RACE not in out + err:
            break
    return status, out, err
