"""Where the system-controller reads its routers' containers, per host kind.

The emulated controller asks a router for its status only while the router's container
runs, and is woken by what changes in it (docs/sandbox.md section 5). On an emulated host
that is the emulated store (``containers``: each container's state file and log, watched
with inotify). On a real-podman host the store is podman's own, so the controller asks the
host's podman API socket, as Skupper's compat client does (``GET /containers/{name}/json``:
``State.Running``), is woken by podman's event stream (``GET /events``) instead of inotify
on state files, and follows each running router's output through the same socket
(``router_news.LogFrames``): podman's log file is not readable from the controller's
container. Both give one answer per router, ``RouterSeen``, and say whether the routers'
output had news since the last look; the controller decides the same way on both.
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
from skupper_sandbox.emulated.router_news import LogFrames, RouterLogs, StreamError, is_news

#: More event bytes than this at one wake are drained no further: any event is news. A
#: followed log gives at most this much at one wake too; the rest waits for the next.
MAX_EVENT_READ = 1 << 20


@dataclass(frozen=True)
class RouterSeen:
    """A router container as the controller sees it. ``running`` None: podman could not be
    asked, so the router's own answer decides (as the real controller's heartbeat does)."""

    running: bool | None
    mark: object  # changes whenever the container starts, stops or restarts
    log: Path | None  # the log file, where the controller can read it


class RouterContainers(Protocol):
    def look(self, name: str) -> RouterSeen: ...

    def watched(self, name: str) -> list[Path]: ...

    def wake_fds(self) -> list[int]: ...

    def drain(self, ready: list[int]) -> None: ...

    def news(self, routers: list[RouterSeen]) -> bool: ...

    def blind(self) -> bool: ...

    def close(self) -> None: ...


class StoreContainers:
    """An emulated host's store: state files and logs under the host's home."""

    def __init__(self, host_home: Path) -> None:
        self.store = containers.store_root(host_home)
        self.logs = RouterLogs()

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

    def news(self, routers: list[RouterSeen]) -> bool:
        return self.logs.news(router.log for router in routers if router.log is not None)

    def blind(self) -> bool:
        return False

    def close(self) -> None:
        return None


@dataclass
class _Followed:
    """One running router's output, followed through the API."""

    container_id: str
    sock: socket.socket
    frames: LogFrames


class ApiContainers:
    """A real-podman host: its podman API socket, asked and listened to."""

    def __init__(self, api: podman_api.PodmanApi) -> None:
        self.api = api
        self.events: socket.socket | None = None
        self.followed: dict[str, _Followed] = {}
        self.had_news = False
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
            return RouterSeen(None, ("unknown",), None)
        self._report(None)
        if state is None or not state.running:
            self._unfollow(name)
        else:
            self._follow(name, state)
        if state is None:
            return RouterSeen(False, None, None)
        return RouterSeen(state.running, (state.running, state.pid, state.restart_count), None)

    def _follow(self, name: str, state: podman_api.ContainerState) -> None:
        """Follow a running router's output from now on, once per run of its container:
        a stream podman ended (the container stopped) or one of a container since replaced
        is followed anew. Opened before the look's query, so nothing logged after the
        query goes unseen."""
        current = self.followed.get(name)
        if current is not None and current.container_id == state.id:
            return
        self._unfollow(name)
        try:
            sock = self.api.follow_logs(state.id)
        except podman_api.PodmanApiError as exc:
            self._report(str(exc))
            return
        self.followed[name] = _Followed(state.id, sock, LogFrames(tty=state.tty))

    def _unfollow(self, name: str) -> None:
        gone = self.followed.pop(name, None)
        if gone is not None:
            with contextlib.suppress(OSError):
                gone.sock.close()

    def watched(self, name: str) -> list[Path]:
        return []

    def wake_fds(self) -> list[int]:
        """The event stream's socket, connected again when it is gone (the socket unit
        stopped and started), and each followed router's output; none while podman cannot
        be reached."""
        if self.events is None:
            try:
                self.api.validate()  # as the compat client does before it uses a socket
                self.events = self.api.events()
            except podman_api.PodmanApiError as exc:
                self._report(str(exc))
                return []
        return [self.events.fileno(), *(f.sock.fileno() for f in self.followed.values())]

    def drain(self, ready: list[int]) -> None:
        for name, followed in list(self.followed.items()):
            if followed.sock.fileno() in ready:
                self._read_output(name, followed)
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

    def _read_output(self, name: str, followed: _Followed) -> None:
        """Take what the router wrote since the last wake; any news line is news. A stream
        that ended (its container stopped) or is not podman's is dropped: the next look
        follows the container again if it runs."""
        read = 0
        try:
            while read < MAX_EVENT_READ:
                chunk = followed.sock.recv(65536)
                if not chunk:
                    break
                read += len(chunk)
                self.had_news |= any(is_news(line) for line in followed.frames.feed(chunk))
                if followed.frames.ended:
                    break
            else:
                return
        except BlockingIOError:
            return
        except StreamError as exc:
            self._report(f"the output of {name}: {exc}")
        except OSError:
            pass
        # The stream is over: the container stopped (an event says so too) or podman's
        # service went away. What it said last is a change, as the closing of a log is.
        self.had_news = True
        self._unfollow(name)

    def news(self, routers: list[RouterSeen]) -> bool:
        news, self.had_news = self.had_news, False
        return news

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
    host (the socket ``system install`` mounted into the controller's container, else the
    endpoint it was given, ``CONTAINER_ENDPOINT``), else the store."""
    host = hostenv.current_host(env)
    if real_podman.is_real(Path(host.host_dir)):
        return ApiContainers(podman_api.PodmanApi(podman_api.controller_socket(env, host)))
    return StoreContainers(host.home)
