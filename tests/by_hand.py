"""What a test runs on a sandbox host by hand, as a user at its shell would."""

from __future__ import annotations

from collections.abc import Callable

from skupper_mcp.sites.podman import REMOVAL_RACE
from skupper_mcp.sites.work import RUNS

#: Runs one command on a host: (exit status, stdout, stderr).
Run = Callable[[str], tuple[int, str, str]]


def reload_by_hand(run: Run, namespace: str) -> tuple[int, str, str]:
    """``skupper system reload``, run again when it lost the race with the controller (a
    status write into a directory it was emptying: ``PodmanSite.render``), as the product's
    setup and a user would. What the last run said."""
    for _ in range(RUNS):
        status, out, err = run(f"skupper system reload -n {namespace}")
        if status == 0 or REMOVAL_RACE not in out + err:
            break
    return status, out, err


def stop_by_hand(run: Run, namespace: str, namespaces_dir: str) -> tuple[int, str, str]:
    """``skupper system stop``. When it lost the same race (the controller's status write
    into ``runtime/resources`` while RemoveAll emptied the namespace: ``System teardown has
    failed: unlinkat <dir>: directory not empty``), RemoveAll has gone on to remove all the
    rest, ``internal/platform.yaml`` with it, so a second stop would only say it cannot read
    that file: what is left (only the status files) is removed with ``rm -rf``, as a user
    would. What the stop said (the race's words included) and the exit status of the whole:
    not 0 if anything but those files was left."""
    status, out, err = run(f"skupper system stop -n {namespace}")
    if status == 0 or REMOVAL_RACE not in out + err:
        return status, out, err
    left = (
        f"l={namespaces_dir}/{namespace};"
        ' test ! -e "$l/internal/platform.yaml"'
        ' && [ -z "$(find "$l" -type f ! -path "$l/runtime/resources/*")" ]'
        ' && rm -rf "$l"'
    )
    removed, rm_out, rm_err = run(left)
    return removed, out + rm_out, err + rm_err
