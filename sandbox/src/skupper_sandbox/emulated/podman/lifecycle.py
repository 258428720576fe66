"""Starting, stopping, removing and signalling a container's process."""

from __future__ import annotations

import os
import secrets
import signal
import sys
import time
from collections.abc import Callable

from skupper_sandbox.emulated.podman import containers
from skupper_sandbox.emulated.podman.conmon import spawn_monitor
from skupper_sandbox.emulated.podman.containers import Container

from .errors import PodmanError
from .host import Host, locked, wait_until

START_DEADLINE = 15.0
# Real podman stop unmounts and tears down the network after the process has exited;
# a wrapper blocked in `podman wait` therefore sees the exit before `stop` returns
# (the product's start-watch.sh relies on that order). Keep the same order here.
STOP_CLEANUP_SECONDS = 0.3


def start(host: Host, c: Container, *, keep: bool = False) -> None:
    """Start the container's process through a detached monitor; return once it runs.

    `keep` stops the monitor from removing an `--rm` container: an attached `run`
    reads its output and exit code first, then removes it.
    """
    with locked(c):
        current = containers.load(c.dir)
        if current is not None and containers.running(current):
            return
        token = secrets.token_hex(8)
        c.mark_stopped_by_user(False)  # a start undoes a stop (libpod `StoppedByUser`)
        spawn_monitor(c.dir, host.dir, token, keep=keep)
        seen: list[Container] = []

        def recorded() -> bool:
            now = containers.load(c.dir)
            if now is None:  # --rm container that already ended
                return True
            if now.start_token == token and now.status in ("running", "exited"):
                seen.append(now)
                return True
            return False

        if not wait_until(recorded, START_DEADLINE):
            raise PodmanError(f'unable to start container "{c.id}": timed out')
    if seen and seen[0].start_error:
        code = 127 if "not found" in seen[0].start_error else 126
        raise PodmanError(f'unable to start container "{c.id}": {seen[0].start_error}', code)


def signal_group(c: Container, sig: int) -> None:
    if c.pid is None:
        return
    try:
        os.killpg(c.pid, sig)
    except ProcessLookupError:
        pass
    except PermissionError:
        os.kill(c.pid, sig)


def _ended(c: Container) -> Callable[[], bool]:
    def check() -> bool:
        now = containers.load(c.dir)
        return now is None or now.status != "running"

    return check


def stop(c: Container, timeout: float) -> None:
    """SIGTERM to the container's process group, SIGKILL after `timeout` seconds.

    Marks the container stopped by the user first, even when it is not running, so that
    a restart its monitor has pending does not happen (libpod `Container.stop`).
    """
    c.mark_stopped_by_user()
    with locked(c):
        current = containers.load(c.dir)
        if current is None or current.status != "running":
            return
        if not containers.running(current):  # died; its monitor is recording the end
            wait_until(_ended(current), 5.0)
            return
        signal_group(current, signal.SIGTERM)
        if wait_until(_ended(current), timeout):
            time.sleep(STOP_CLEANUP_SECONDS)
            return
        print(
            f"WARN[{int(timeout):04d}] StopSignal SIGTERM failed to stop container "
            f"{current.name} in {int(timeout)} seconds, resorting to SIGKILL",
            file=sys.stderr,
        )
        signal_group(current, signal.SIGKILL)
        wait_until(_ended(current), 10.0)
        time.sleep(STOP_CLEANUP_SECONDS)


def remove(host: Host, c: Container, *, force: bool) -> None:
    """libpod's removeContainer: stop it if it runs, then, under the container's lock and
    only if nothing started it again meanwhile, remove it."""
    while True:
        current = containers.load(c.dir)
        if current is None:
            return
        if containers.running(current):
            if not force:
                raise PodmanError(
                    f"cannot remove container {c.id} as it is running - running or paused "
                    "containers cannot be removed without force: container state improper",
                    2,
                )
            stop(current, 10.0)
        with locked(current):
            again = containers.load(current.dir)
            if again is None:
                return
            if not containers.running(again):
                containers.discard(current.dir)
                return


def signal_number(name: str) -> int:
    text = name.upper().removeprefix("SIG")
    if text.isdigit():
        return int(text)
    try:
        return int(signal.Signals["SIG" + text])
    except KeyError:
        raise PodmanError(f'invalid signal "{name}"') from None
