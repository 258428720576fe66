"""Where the system-controller reads its routers' containers, per host kind.

The emulated controller asks a router for its status only while the router's container
runs, and is woken by what changes in it (docs/sandbox.md section 5). On an emulated host
that is the emulated store (``containers``: each container's state file and log, watched
with inotify). On a real-podman host the store is podman's own, so the controller asks the
host's podman API socket, as Skupper's compat client does (``GET /containers/{name}/json``:
``State.Running``), reads the log file podman names (``LogPath``), and is woken by podman's
event stream (``GET /events``) instead of inotify on state files. Both give one answer per
router, ``RouterSeen``, and the controller decides the same way on both.
"""

from __future__ import annotations

import contextlib
import socket
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from skupper_sandbox import hostenv, real_podman
from skupper_sandbox.emulated import podman_api
from skupper_sandbox.emulated.podman import containers

#: More event bytes than this at one wake are drained no further: any event is news.
MAX_EVENT_READ = 1 << 20


@dataclass(frozen=True)
class RouterSeen:
    """A router container as the controller sees it. ``running`` None: podman could not be
    asked, so the router's own answer decides (as the real controller's heartbeat does)."""

    running: bool | None
    mark: object  # changes whenever the container starts, stops or restarts
    log: Path | None


class RouterContainers(Protocol):
    def look(self, name: str) -> RouterSeen: ...

    def watched(self, name: str) -> list[Path]: ...

    def wake_fds(self) -> list[int]: ...

    def drain(self, ready: list[int]) -> None: ...

    def blind(self) -> bool: ...

    def close(self) -> None: ...


class StoreContainers:
    """An emulated host's store: state files and logs under the host's home."""

    def __init__(self, host_home: Path) -> None:
        self.store = containers.store_root(host_home)

    def look(self, name: str) -> RouterSeen:
        found = containers.load(self.store / name)
        return RouterSeen(
            running=found is not None and containers.running(found),
            mark=found and (found.status, found.pid, found.restart_count),
            log=self.store / name / containers.LOG_FILE,
        )

    def watched(self, name: str) -> list[Path]:
        return [self.store, self.store / name]

    def wake_fds(self) -> list[int]:
        return []

    def drain(self, ready: list[int]) -> None:
        return None

    def blind(self) -> bool:
        return False

    def close(self) -> None:
        return None


class ApiContainers:
    """A real-podman host: its podman API socket, asked and listened to."""

    def __init__(self, api: podman_api.PodmanApi) -> None:
        self.api = api
        self.events: socket.socket | None = None
        self.logs: dict[str, Path] = {}
        self.reported: str | None = None

    def _report(self, problem: str | None) -> None:
        if problem is not None and problem != self.reported:
            print(f"podman API {self.api.path}: {problem}", file=sys.stderr, flush=True)
        self.reported = problem

    def look(self, name: str) -> RouterSeen:
        try:
            state = self.api.inspect(name)
        except podman_api.PodmanApiError as exc:
            self._report(str(exc))
            return RouterSeen(None, ("unknown",), self.logs.get(name))
        self._report(None)
        if state is None:
            self.logs.pop(name, None)
            return RouterSeen(False, None, None)
        log = Path(state.log_path) if state.log_path else None
        if log is not None:
            self.logs[name] = log
        return RouterSeen(state.running, (state.running, state.pid, state.restart_count), log)

    def watched(self, name: str) -> list[Path]:
        log = self.logs.get(name)
        return [log.parent] if log is not None else []

    def wake_fds(self) -> list[int]:
        """The event stream's socket, connected again when it is gone (the socket unit
        stopped and started); none while podman cannot be reached."""
        if self.events is None:
            try:
                self.api.validate()  # as the compat client does before it uses a socket
                self.events = self.api.events()
            except podman_api.PodmanApiError as exc:
                self._report(str(exc))
                return []
        return [self.events.fileno()]

    def drain(self, ready: list[int]) -> None:
        events = self.events
        if events is None or events.fileno() not in ready:
            return
        read = 0
        try:
            while read < MAX_EVENT_READ:
                chunk = events.recv(65536)
                if not chunk:  # podman's service went away
                    self.close()
                    return
                read += len(chunk)
        except BlockingIOError:
            return
        except OSError:
            self.close()

    def blind(self) -> bool:
        """Whether no event stream tells of changes (then each tick is a look)."""
        return self.events is None

    def close(self) -> None:
        if self.events is not None:
            with contextlib.suppress(OSError):
                self.events.close()
            self.events = None


def for_host(env: Mapping[str, str]) -> RouterContainers:
    """The host's containers as its controller reads them: podman's API on a real-podman
    host (the endpoint the controller was given, ``CONTAINER_ENDPOINT``), else the store."""
    host = hostenv.current_host(env)
    if real_podman.is_real(Path(host.host_dir)):
        return ApiContainers(podman_api.PodmanApi(podman_api.endpoint_socket(env, host)))
    return StoreContainers(host.home)
