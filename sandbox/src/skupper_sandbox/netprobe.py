"""Whether something listens on a TCP port: the one probe of the sandbox and its tests.

A leaf: it imports nothing of the sandbox. The probe connects and closes at once; a refused
connection, a timeout or any other socket error all mean "no".
"""

from __future__ import annotations

import asyncio
import contextlib
import socket


def port_open(
    address: str, port: int, timeout: float = 1.0, *, greeting: bytes | None = None
) -> bool:
    """Whether ``address:port`` accepts a connection within ``timeout`` seconds and, with
    ``greeting``, its first bytes start with it (``b"SSH-"``: an SSH server's banner)."""
    try:
        with socket.create_connection((address, port), timeout=timeout) as conn:
            if greeting is None:
                return True
            conn.settimeout(timeout)
            return conn.recv(len(greeting)).startswith(greeting)
    except OSError:
        return False


async def port_open_async(address: str, port: int, timeout: float = 1.0) -> bool:
    """``port_open`` for an event loop: the loop goes on while the connection is made."""
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(address, port), timeout)
    except (OSError, TimeoutError):
        return False
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return True
