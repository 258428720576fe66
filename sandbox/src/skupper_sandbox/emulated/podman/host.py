"""The sandbox host podman runs on, and the per-container lock and polling helpers."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from skupper_sandbox import hostenv
from skupper_sandbox.emulated.podman import containers
from skupper_sandbox.emulated.podman.containers import Container

from .errors import PodmanError, no_such_container

POLL = 0.02


@dataclass(frozen=True)
class Host:
    info: hostenv.HostInfo
    home: Path
    #: ``--events-backend`` as given, else the host's default: ``journald`` where podman
    #: logs to the journal (the ``journald`` quirk: a host with systemd's journal), else
    #: ``file`` (``events_logger``, containers.conf)
    events_backend: str = ""

    @property
    def events_logger(self) -> str:
        return self.events_backend or ("journald" if self.info.quirks.journald else "file")

    @property
    def dir(self) -> str:
        return self.info.host_dir


def current_host(events_backend: str = "") -> Host:
    try:
        info = hostenv.current_host()
    except hostenv.NotOnSandboxHost as exc:
        raise PodmanError(str(exc)) from exc
    return Host(info, info.home, events_backend)


def find(host: Host, name: str) -> Container:
    found = containers.get(host.home, name)
    if found is None:
        raise no_such_container(name)
    return found


@contextmanager
def locked(c: Container) -> Iterator[None]:
    """Serialise state changes of one container between concurrent podman commands."""
    try:
        with containers.lock(c.dir):
            yield
    except containers.Removed:
        raise no_such_container(c.name) from None


def wait_until(check: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while True:
        if check():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL)
