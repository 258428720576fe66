"""The imitation behind the router seam: ``python -m skupper_sandbox.router`` (``__main__``).

It stands in for skrouterd by default, on every machine: its config is the container's copy
of the rendered ``skrouterd.json`` (``launch.configure``), its management answers one JSON
line (``{"op": "query"}``) per connection, and its log follows skrouterd 3.4.2's lines
(checked against ``tests/router_logs``).
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from skupper_sandbox import hostenv
from skupper_sandbox.router import launch, release, seam

PROGRAM = "skupper_sandbox.router"
#: Where configure.sh leaves the config: the imitation reads JSON whatever the type says.
COPY_PATH = "/tmp/skrouterd.json"


def json_query(
    address: str, port: int, timeout: float = 1.0, request: bytes = b'{"op": "query"}\n'
) -> dict[str, Any] | None:
    """The imitation's management answer, or None when it does not answer in time."""
    try:
        with socket.create_connection((address, port), timeout=timeout) as conn:
            conn.settimeout(timeout)
            conn.sendall(request)
            buffer = b""
            while not buffer.endswith(b"\n"):
                chunk = conn.recv(65536)
                if not chunk:
                    break
                buffer += chunk
        answer = json.loads(buffer)
    except (OSError, ValueError):
        return None
    return answer if isinstance(answer, dict) else None


class JsonManagement:
    """``seam.Management`` for the imitation: one JSON line per connection, nothing kept."""

    def query(
        self, key: str, address: str, port: int, cert: Path | None = None, timeout: float = 2.0
    ) -> dict[str, Any] | None:
        return json_query(address, port, timeout)

    def keep_alive(self) -> None:
        pass

    def close(self, key: str) -> None:
        pass

    def close_all(self) -> None:
        pass


class Imitation(seam.Router):
    kind: ClassVar[seam.RouterKind] = "imitation"
    program: ClassVar[str] = PROGRAM

    def config(self, host: hostenv.HostInfo, env: Mapping[str, str]) -> seam.Launch:
        """configure.sh's copy at ``/tmp/skrouterd.json`` (written only inside a container's
        own ``/tmp``); text None when ``/tmp`` could not be written."""
        env = {**env, "QDROUTERD_CONF_TYPE": env.get("QDROUTERD_CONF_TYPE") or "conf"}
        text, stdout, stderr = launch.configure(env, COPY_PATH, launch.tmp_writable(host, env))
        if text is not None:
            copy = hostenv.container_path(COPY_PATH, env)
            if copy != Path(COPY_PATH):
                copy.parent.mkdir(parents=True, exist_ok=True)
                copy.write_text(text)
        return seam.Launch(text, stdout, stderr)

    def management(self) -> seam.Management:
        return JsonManagement()

    def query(
        self, address: str, port: int, client_cert: Path | None = None, timeout: float = 2.0
    ) -> dict[str, Any] | None:
        return json_query(address, port, timeout)

    def delete(
        self,
        address: str,
        port: int,
        entity: tuple[str, str],
        client_cert: Path | None = None,
        timeout: float = 2.0,
    ) -> str | None:
        asked = {"op": "delete", "type": entity[0], "name": entity[1]}
        answer = json_query(address, port, timeout, (json.dumps(asked) + "\n").encode())
        if answer is None:
            return (
                f"ConnectionException: Connection amqps://{address}:{port} disconnected: "
                "Condition('proton:io', 'Connection refused')"
            )
        error = answer.get("error")
        return str(error) if error else None

    def version(self) -> str:
        """The release of the image this router runs in (``router.release``)."""
        return f"{release.release_tag(os.environ)} (imitation)"

    def describe(self) -> str:
        return "router imitation (python)"
