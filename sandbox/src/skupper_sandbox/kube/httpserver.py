"""A small HTTP/1.1 server on asyncio streams, with TLS and keep-alive.

The API needs what a generic framework hides: closing the listening socket *and* every
open connection on demand (the ``down`` fault: a pooled client connection must fail too),
then listening again on the same port.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

log = logging.getLogger(__name__)

_REASONS = {
    200: "OK",
    201: "Created",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    405: "Method Not Allowed",
    409: "Conflict",
    411: "Length Required",
    413: "Payload Too Large",
    415: "Unsupported Media Type",
    422: "Unprocessable Entity",
    500: "Internal Server Error",
}
_MAX_BODY = 8 * 1024 * 1024
_MAX_HEADER_LINES = 100


@dataclass
class Request:
    """One parsed HTTP request."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # lower-case names
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


@dataclass
class Response:
    """A JSON response, or with ``bytes`` for a body, those bytes as ``content_type``."""

    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json"

    def encode(self, keep_alive: bool) -> bytes:
        payload = self.body if isinstance(self.body, bytes) else json.dumps(self.body).encode()
        lines = [
            f"HTTP/1.1 {self.status} {_REASONS.get(self.status, 'Unknown')}",
            f"Content-Type: {self.content_type}",
            f"Content-Length: {len(payload)}",
            "Connection: " + ("keep-alive" if keep_alive else "close"),
            "Cache-Control: no-cache, private",
            *(f"{k}: {v}" for k, v in self.headers.items()),
        ]
        return ("\r\n".join(lines) + "\r\n\r\n").encode() + payload


Handler = Callable[[Request], Awaitable[Response]]


class _BadRequest(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


async def _read_request(reader: asyncio.StreamReader) -> Request | None:
    line = await reader.readline()
    if not line:
        return None
    try:
        method, target, _version = line.decode("latin-1").strip().split(" ", 2)
    except ValueError as error:
        raise _BadRequest(400, "malformed request line") from error
    headers: dict[str, str] = {}
    for _ in range(_MAX_HEADER_LINES):
        header = (await reader.readline()).decode("latin-1")
        if header in ("\r\n", "\n", ""):
            break
        name, _, value = header.partition(":")
        headers[name.strip().lower()] = value.strip()
    else:
        raise _BadRequest(400, "too many headers")
    if "chunked" in headers.get("transfer-encoding", "").lower():
        raise _BadRequest(411, "chunked request bodies are not supported")
    length = int(headers.get("content-length", "0") or 0)
    if length > _MAX_BODY:
        raise _BadRequest(413, "request body too large")
    body = await reader.readexactly(length) if length else b""
    parts = urlsplit(target)
    query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
    return Request(method.upper(), unquote(parts.path), query, headers, body)


class HttpServer:
    """Serves ``handler`` on host:port; ``start`` and ``stop`` may alternate."""

    def __init__(
        self, handler: Handler, host: str, port: int, ssl_context: ssl.SSLContext | None
    ) -> None:
        self._handler = handler
        self._host = host
        self._port = port
        self._ssl = ssl_context
        self._server: asyncio.Server | None = None
        self._connections: dict[asyncio.Task[None], asyncio.StreamWriter] = {}

    @property
    def listening(self) -> bool:
        return self._server is not None

    async def start(self) -> None:
        if self._server is None:
            self._server = await asyncio.start_server(
                self._serve_connection, self._host, self._port, ssl=self._ssl, reuse_address=True
            )

    async def stop(self) -> None:
        """Stop listening and drop every open connection."""
        server, self._server = self._server, None
        if server is not None:
            server.close()
        # Aborting the transports ends each connection's task on its own; cancelling them
        # instead makes asyncio's stream callback log the cancellation (Python 3.11).
        for writer in list(self._connections.values()):
            writer.transport.abort()
        if self._connections:
            await asyncio.wait(list(self._connections), timeout=2)
        if server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), 2)

    async def _serve_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections[task] = writer
        try:
            await self._exchange(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
            pass
        finally:
            self._connections.pop(task, None)
            if self._server is None:
                writer.transport.abort()  # stopping: drop the connection, no TLS goodbye
            else:
                writer.close()
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(writer.wait_closed(), 1)

    async def _exchange(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            try:
                request = await _read_request(reader)
            except _BadRequest as error:
                writer.write(Response(error.status, {"message": str(error)}).encode(False))
                await writer.drain()
                return
            if request is None:
                return
            try:
                response = await self._handler(request)
            except Exception:
                log.exception("handler failed for %s %s", request.method, request.path)
                response = Response(500, {"message": "internal error"})
            keep_alive = request.headers.get("connection", "").lower() != "close"
            writer.write(response.encode(keep_alive))
            await writer.drain()
            if not keep_alive:
                return
