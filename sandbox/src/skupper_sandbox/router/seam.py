"""The sandbox's router behind one seam: what the rest of the sandbox asks of a router.

Two routers stand behind it: the Python imitation in this package (``imitation.Imitation``,
the default) and a real ``skrouterd`` that a user or developer installed on this machine
(``skrouterd.Skrouterd``, where ``$SKMCP_SKUPPER_ROUTER`` points at it). ``choice`` picks one
when a world is laid out and reads the pick back from ``world.json`` everywhere else. Callers
ask the router for its config, how to start it, its management and what its log says of
itself; none of them asks which router it is.
"""

from __future__ import annotations

import sys
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol

from skupper_sandbox import hostenv

HOME_VAR = "SKMCP_SKUPPER_ROUTER"  # the installed skrouterd binary, or its install prefix
KIND_VAR = "SKMCP_SANDBOX_ROUTER"  # auto (default) | real | imitation

RouterKind = Literal["real", "imitation"]


@dataclass
class Launch:
    """What a router container's start scripts leave (``launch.configure``): the config the
    router runs on (None: the image's default), the lines they printed, and for a router that
    is another program, the command the container's process becomes (exec)."""

    text: str | None
    stdout: list[str] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)
    argv: list[str] = field(default_factory=list)


class Management(Protocol):
    """Management connections, one per router (by the caller's key), kept between queries
    where the router's management wants that. Not thread-safe: one thread uses it."""

    def query(
        self, key: str, address: str, port: int, cert: Path | None = None, timeout: float = 2.0
    ) -> dict[str, Any] | None:
        """The router's state (docs/sandbox.md section 10), or None when it does not answer."""

    def keep_alive(self) -> None:
        """Run each kept connection's I/O (its heartbeats), dropping those that failed."""

    def close(self, key: str) -> None: ...

    def close_all(self) -> None: ...


class Router(ABC):
    """A world's router. ``kind`` and ``home`` are what ``world.json`` records of it;
    ``reason`` says why it is the one (for the imitation: why not the real one)."""

    kind: ClassVar[RouterKind]
    #: The module a router container runs (``python -m``), as the image's launch.sh.
    program: ClassVar[str]

    def __init__(self, home: str | None = None, reason: str = "") -> None:
        self.home = home
        self.reason = reason

    def record(self) -> dict[str, str | None]:
        """What ``world.json`` keeps of the choice (``choice.for_world`` reads it back)."""
        return {"router": self.kind, "router_home": self.home}

    def start(self, python: str = sys.executable) -> list[str]:
        """The command a router container (or the Kubernetes router pod) runs."""
        return [python, "-m", self.program]

    @abstractmethod
    def config(self, host: hostenv.HostInfo, env: Mapping[str, str]) -> Launch:
        """Inside the container's process: turn ``$QDROUTERD_CONF`` (the rendered
        ``skrouterd.json``) into the config this router runs on, as the image's scripts do."""

    @abstractmethod
    def management(self) -> Management:
        """Management connections to routers of this kind (the controllers keep one)."""

    @abstractmethod
    def query(
        self, address: str, port: int, client_cert: Path | None = None, timeout: float = 2.0
    ) -> dict[str, Any] | None:
        """One management query on a connection of its own: the router's state, or None when
        it does not answer. ``client_cert``: a directory with ``ca.crt``, ``tls.crt`` and
        ``tls.key`` (TLS with SASL EXTERNAL) where the management listener wants one."""

    @abstractmethod
    def delete(
        self,
        address: str,
        port: int,
        entity: tuple[str, str],
        client_cert: Path | None = None,
        timeout: float = 2.0,
    ) -> str | None:
        """Delete one management entity (``(type, name)``, the type without the
        ``io.skupper.router.`` prefix) on a connection of its own: None when done, else the
        router's (or the connection's) error in skmanage's words."""

    @abstractmethod
    def version(self) -> str:
        """The version the router's log gives (its ``Version:`` line)."""

    @abstractmethod
    def describe(self) -> str:
        """The line ``sandbox up`` and ``sandbox status`` print for the router."""
