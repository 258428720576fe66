"""A model API on loopback that answers each path as a test says (status and body, or a
reset connection): the route-checks tests' server, shared by the tests of test_model."""

from __future__ import annotations

import asyncio
import socket
import struct
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

ADDRESS = "127.204.1.20"
RESET = (0, b"")


@asynccontextmanager
async def model_api(answers: dict[str, tuple[int, bytes]]) -> AsyncIterator[int]:
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request = await reader.readuntil(b"\r\n\r\n")
            path = request.split(b" ")[1].decode()
            length = next(
                (
                    int(line.split(b":")[1])
                    for line in request.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                ),
                0,
            )
            await reader.readexactly(length)
            status, body = answers.get(path, (404, b"{}"))
            if status == 0:  # a reset: RST instead of an answer
                sock = writer.get_extra_info("socket")
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                writer.transport.abort()
                return
            writer.write(
                f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                + body
            )
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()

    async with serving(serve) as port:
        yield port


Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@asynccontextmanager
async def serving(handler: Handler, address: str = ADDRESS) -> AsyncIterator[int]:
    """``handler`` serving each connection on ``address`` (a free port, yielded); the
    server closed after, its open connections too where Python can (3.13's
    ``close_clients``: a handler still answering would hold ``wait_closed``)."""
    server = await asyncio.start_server(handler, address, 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
        close_clients = getattr(server, "close_clients", None)
        if close_clients is not None:
            close_clients()
        await server.wait_closed()


def details(checks: Any) -> dict[str, tuple[bool, str]]:
    """Each check's (passed, detail), by its name."""
    return {c.name: (c.passed, c.detail) for c in checks}
