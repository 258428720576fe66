"""Ask a router for its live state, whichever router the world runs.

The real skrouterd answers AMQP management (``amqp_management``), with the site's
``skupper-local-client`` certificate where its management listener wants one; the imitation
answers one JSON line (``{"op": "query"}``). Both give the answer of docs/sandbox.md
section 10.
"""

from __future__ import annotations

import asyncio
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


async def router_state_async(
    address: str,
    port: int,
    *,
    world_dir: str | Path,
    client_cert: Path | None = None,
    timeout: float = 2.0,
) -> dict[str, Any] | None:
    """``router_state`` off the event loop (proton's client blocks)."""
    return await asyncio.to_thread(
        router_state,
        address,
        port,
        world_dir=world_dir,
        client_cert=client_cert,
        timeout=timeout,
    )
