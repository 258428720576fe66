"""test_model's route checks against a model API that misbehaves: every case is a result
with its four checks and the failing one's detail, never an exception.

The API is a real HTTP server on loopback that answers each path as a case says (status,
body, or a reset connection).
"""

from __future__ import annotations

import asyncio
import json
import socket
import struct
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from skupper_mcp.engine.operations.model_checks import base_url, route_checks

ADDRESS = "127.204.1.20"
MODEL = "granite-3b"
GOOD = {
    "/health": (200, b'{"status":"ok"}'),
    "/v1/models": (200, json.dumps({"data": [{"id": MODEL}]}).encode()),
    "/v1/chat/completions": (
        200,
        json.dumps({"choices": [{"message": {"content": "Yes, it is up."}}]}).encode(),
    ),
}
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

    server = await asyncio.start_server(serve, ADDRESS, 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
        await server.wait_closed()


def details(checks) -> dict[str, tuple[bool, str]]:  # type: ignore[no-untyped-def]
    return {c.name: (c.passed, c.detail) for c in checks}


async def test_a_working_api_passes_all_four() -> None:
    async with model_api(GOOD) as port:
        checks = await asyncio.wait_for(route_checks(ADDRESS, port, [MODEL], timeout=5), timeout=20)
    assert [c.passed for c in checks] == [True, True, True, True]
    assert checks[3].detail == "answered: Yes, it is up."


@pytest.mark.parametrize(
    ("path", "answer", "failing", "words"),
    [
        ("/health", (503, b"loading"), "API health", "HTTP 503"),
        ("/v1/models", (200, b"[]"), "model id", "did not answer a model list"),
        ("/v1/models", (200, b"null"), "model id", "did not answer a model list"),
        ("/v1/models", (200, b"{not json"), "model id", "did not answer JSON"),
        ("/v1/models", RESET, "model id", "the connection was reset or closed"),
        ("/v1/chat/completions", (200, b'{"choices": []}'), "chat completion", "no choices"),
        ("/v1/chat/completions", (500, b"{}"), "chat completion", "HTTP 500"),
        ("/v1/chat/completions", RESET, "chat completion", "the connection was reset or closed"),
        (
            "/v1/chat/completions",
            (200, b'{"choices": [{"message": {"content": "  "}}]}'),
            "chat completion",
            "empty",
        ),
    ],
)
async def test_a_misbehaving_api_fails_that_check_with_its_detail(
    path: str, answer: tuple[int, bytes], failing: str, words: str
) -> None:
    async with model_api({**GOOD, path: answer}) as port:
        checks = await asyncio.wait_for(route_checks(ADDRESS, port, [MODEL], timeout=5), timeout=20)
    assert [c.name for c in checks] == [
        "listener port",
        "API health",
        "model id",
        "chat completion",
    ]
    found = details(checks)
    assert not found[failing][0]
    assert words in found[failing][1]


async def test_a_closed_listener_skips_the_http_checks() -> None:
    with socket.socket() as probe:
        probe.bind((ADDRESS, 0))
        port = probe.getsockname()[1]  # bound, never listening: connections are refused
        checks = await route_checks(ADDRESS, port, [MODEL], timeout=5)
    assert [c.passed for c in checks] == [False, False, False, False]
    assert checks[1].detail == "skipped: the listener port is closed"


def test_an_ipv6_listener_gets_a_bracketed_url() -> None:
    assert base_url("::1", 9000) == "http://[::1]:9000"
    assert base_url("127.0.0.1", 9000) == "http://127.0.0.1:9000"
