"""A client of a real-podman host's API socket, as Skupper's compat client asks it.

Skupper's CLI (``internal/nonkube/client/compat``) speaks podman's Docker-compatible API over
``unix:///run/podman/podman.sock`` (root) or ``unix://$XDG_RUNTIME_DIR/podman/podman.sock``:
it first checks the engine (``GET /version``: a component named podman, API 4 or later),
then asks for containers by name (``GET /containers/{name}/json``: ``State.Running``). The
sandbox's parts that need a real host's container state ask the same way; the answers are
podman's, so they are read as data: bounded, and anything not of the expected shape is an
error, never a guess.
"""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from skupper_sandbox import hostenv
from skupper_sandbox.emulated.systemd.bus import connect_unix

ROOT_SOCKET = "/run/podman/podman.sock"
#: An answer larger than this is no container's inspect.
MAX_BODY = 4 << 20
TIMEOUT = 5.0


class PodmanApiError(RuntimeError):
    """The API did not answer, or not as podman does."""


def socket_path(info: hostenv.HostInfo) -> Path:
    """Where the host's podman API socket is in the world: ``/run/podman/podman.sock`` on a
    root host (under its sysroot), ``$XDG_RUNTIME_DIR/podman/podman.sock`` otherwise."""
    if info.is_root:
        return hostenv.system_path(info, ROOT_SOCKET)
    return info.run_dir / "podman" / "podman.sock"


def endpoint_socket(env: Mapping[str, str], info: hostenv.HostInfo) -> Path:
    """The socket a controller was given (``CONTAINER_ENDPOINT=unix://PATH``: on 2.1.x the
    host's path, on 2.2.x where install mounts it in the container, ``/var/run/<engine>.sock``,
    which outside a container is no host's: never this machine's own), else the host's own
    (``socket_path``)."""
    endpoint = env.get("CONTAINER_ENDPOINT", "")
    given = endpoint.removeprefix("unix://") if endpoint.startswith(("unix:///", "/")) else ""
    if given == str(mounted_socket(env.get("CONTAINER_ENGINE") or "podman")):
        given = ""
    return in_world(given, info) if given else socket_path(info)


def in_world(given: str, info: hostenv.HostInfo) -> Path:
    """Where a socket path of the host (``/run/user/<uid>/...``, a root host's
    ``/run/podman/...``) is in the world."""
    user_runtime = f"/run/user/{info.uid}"
    if given == user_runtime or given.startswith(user_runtime + "/"):
        return info.run_dir / given[len(user_runtime) :].lstrip("/")
    if info.is_root and given.startswith("/run/podman/"):
        return hostenv.system_path(info, given)
    return Path(given)


def mounted_socket(engine: str) -> Path:
    """Where ``skupper system install`` mounts the API socket in the controller's container:
    ``/var/run/<engine>.sock`` (install.go@2.1.3:86)."""
    return Path(f"/var/run/{engine}.sock")


def controller_socket(env: Mapping[str, str], info: hostenv.HostInfo) -> Path:
    """The socket a controller reaches its host's podman by: the one mounted into its
    container, else the endpoint it was given (``endpoint_socket``)."""
    mounted = mounted_socket(env.get("CONTAINER_ENGINE") or "podman")
    return mounted if mounted.is_socket() else endpoint_socket(env, info)


@dataclass(frozen=True)
class ContainerState:
    """What the controller reads of a container: ``State.Running`` decides."""

    id: str
    running: bool
    pid: int
    restart_count: int
    tty: bool


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: Path, timeout: float) -> None:
        super().__init__("d", timeout=timeout)
        self.path = path

    def connect(self) -> None:
        self.sock = connect_unix(self.path, timeout=self.timeout)


def _field(data: Any, kind: type, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, dict) or key not in data:
            raise PodmanApiError(f"no {'.'.join(keys)} in the answer")
        data = data[key]
    if (kind is int and isinstance(data, bool)) or not isinstance(data, kind):
        raise PodmanApiError(f"{'.'.join(keys)} is not {kind.__name__}")
    return data


class PodmanApi:
    """One host's podman API: a connection per request, each with a timeout."""

    def __init__(self, path: Path, timeout: float = TIMEOUT) -> None:
        self.path = path
        self.timeout = timeout

    def get(self, target: str) -> tuple[int, Any]:
        """The status and the JSON body of ``GET target``."""
        connection = _UnixConnection(self.path, self.timeout)
        try:
            connection.request("GET", target)
            answer = connection.getresponse()
            body = answer.read(MAX_BODY + 1)
        except (OSError, http.client.HTTPException) as exc:
            raise PodmanApiError(f"GET {target}: {exc}") from exc
        finally:
            connection.close()
        if len(body) > MAX_BODY:
            raise PodmanApiError(f"GET {target}: an answer over {MAX_BODY} bytes")
        try:
            return answer.status, json.loads(body)
        except ValueError as exc:
            raise PodmanApiError(f"GET {target}: not JSON ({exc})") from exc

    def validate(self) -> str:
        """compat ``Validate``: the engine must be podman with API 4 or later; its version."""
        status, body = self.get("/version")
        if status != 200:
            raise PodmanApiError(f"GET /version answered {status}")
        components = _field(body, list, "Components")
        for component in components:
            if "podman" in str(_field(component, str, "Name")).lower():
                api = str(_field(component, dict, "Details").get("APIVersion", ""))
                if not api.split(".")[0].isdigit() or int(api.split(".")[0]) < 4:
                    raise PodmanApiError(f"podman version must be 4.0.0 or greater, found: {api}")
                return str(_field(body, str, "Version"))
        raise PodmanApiError("the engine is not podman")

    def inspect(self, name: str) -> ContainerState | None:
        """compat ``ContainerInspect``; None when podman has no such container (404)."""
        status, body = self.get(f"/containers/{quote(name, safe='')}/json")
        if status == 404:
            return None
        if status != 200:
            raise PodmanApiError(f"inspect {name}: answered {status}")
        return ContainerState(
            id=_field(body, str, "Id"),
            running=_field(body, bool, "State", "Running"),
            pid=_field(body, int, "State", "Pid"),
            restart_count=_field(body, int, "RestartCount"),
            tty=_field(body, bool, "Config", "Tty"),
        )

    def events(self) -> socket.socket:
        """A connection on which podman streams every container event (``GET /events``).
        The caller only waits for it to become readable and drains it: the answer's head
        (podman may send it only with the first event) is one more wake, never parsed."""
        filters = quote(json.dumps({"type": ["container"]}), safe="")
        return self._stream(f"/events?filters={filters}")

    def follow_logs(self, container_id: str) -> socket.socket:
        """A connection on which podman streams the container's output from now on
        (``GET /containers/{id}/logs?follow=1&tail=0``, stdout and stderr), until the
        container stops; ``router_news.LogFrames`` reads it."""
        name = quote(container_id, safe="")
        return self._stream(f"/containers/{name}/logs?follow=1&stdout=1&stderr=1&tail=0")

    def _stream(self, target: str) -> socket.socket:
        """A non-blocking connection with ``GET target`` sent, its answer left to read."""
        try:
            sock = connect_unix(self.path, timeout=self.timeout)
        except OSError as exc:
            raise PodmanApiError(f"GET {target}: {exc}") from exc
        try:
            sock.sendall(f"GET {target} HTTP/1.1\r\nHost: d\r\n\r\n".encode())
        except OSError as exc:
            sock.close()
            raise PodmanApiError(f"GET {target}: {exc}") from exc
        sock.setblocking(False)
        return sock
