"""Ask a router for its live state, whichever router the world runs.

The real skrouterd answers AMQP management (``amqp_management``), with the site's
``skupper-local-client`` certificate where its management listener wants one; the imitation
answers one JSON line (``{"op": "query"}``). Both give the answer of docs/sandbox.md
section 10.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

from skupper_sandbox.router import amqp_management, choice


def json_query(address: str, port: int, timeout: float = 1.0) -> dict[str, Any] | None:
    """The imitation's management answer, or None when it does not answer in time."""
    try:
        with socket.create_connection((address, port), timeout=timeout) as conn:
            conn.settimeout(timeout)
            conn.sendall(b'{"op": "query"}\n')
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


def router_state(
    address: str,
    port: int,
    *,
    world_dir: str | Path,
    client_cert: Path | None = None,
    timeout: float = 2.0,
) -> dict[str, Any] | None:
    """The router's state, or None when it does not answer. ``client_cert`` is a directory
    with ``ca.crt``, ``tls.crt`` and ``tls.key`` (TLS with SASL EXTERNAL); None: plain AMQP."""
    if choice.for_world(world_dir).kind == "real":
        cert = amqp_management.ClientCert(client_cert) if client_cert is not None else None
        return amqp_management.query_state(address, port, cert, timeout)
    return json_query(address, port, timeout)


class ManagementSessions:
    """One management connection per router (by the caller's key), kept between queries and
    opened again when it fails (the router restarted or was made again). A new connection
    costs the client about 100 ms of CPU (proton's connection and reply queue), a query on a
    kept one about 7 ms. The imitation answers one JSON line per connection: nothing to keep.
    Not thread-safe: one thread uses it."""

    def __init__(self, world_dir: str | Path) -> None:
        self._real = choice.for_world(world_dir).kind == "real"
        self._open: dict[str, amqp_management.Management] = {}

    def query(
        self,
        key: str,
        address: str,
        port: int,
        client_cert: Path | None = None,
        timeout: float = 2.0,
    ) -> dict[str, Any] | None:
        """The router's state, or None when it does not answer (``router_state``)."""
        if not self._real:
            return json_query(address, port, timeout)
        cert = amqp_management.ClientCert(client_cert) if client_cert is not None else None
        for _ in range(2):  # a kept connection may be to a router that is gone: retry fresh
            session = self._open.get(key)
            try:
                if session is None:
                    session = amqp_management.Management(address, port, cert, timeout)
                    self._open[key] = session
                return amqp_management.state(session)
            except amqp_management.ManagementError:
                self.close(key)
        return None

    def keep_alive(self) -> None:
        """Run each kept connection's I/O (its heartbeats), dropping those that failed."""
        for key, session in list(self._open.items()):
            try:
                session.keep_alive()
            except amqp_management.ManagementError:
                self.close(key)

    def close(self, key: str) -> None:
        session = self._open.pop(key, None)
        if session is not None:
            session.close()

    def close_all(self) -> None:
        for key in list(self._open):
            self.close(key)
