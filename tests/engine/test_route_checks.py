"""test_model's route checks against a model API that misbehaves: every case is a result
with its four checks and the failing one's detail, never an exception.

The API is a real HTTP server on loopback that answers each path as a case says (status,
body, or a reset connection).
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from model_api_server import ADDRESS, RESET, details, model_api, serving
from skupper_mcp.engine.operations.model_checks import base_url, route_checks

MODEL = "granite-3b"
GOOD = {
    "/health": (200, b'{"status":"ok"}'),
    "/v1/models": (200, json.dumps({"data": [{"id": MODEL}]}).encode()),
    "/v1/chat/completions": (
        200,
        json.dumps({"choices": [{"message": {"content": "Yes, it is up."}}]}).encode(),
    ),
}


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


@asynccontextmanager
async def hostile_models(mode: str) -> AsyncIterator[int]:
    """A model API whose /health is fine and whose /v1/models answer trickles (a byte every
    0.2 s, each read quick, so httpx's per-phase timeouts never trip) or never ends."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request = await reader.readuntil(b"\r\n\r\n")
            if b" /v1/models " not in request:
                body = b'{"status":"ok"}'
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                    + body
                )
            elif mode == "trickle":
                body = json.dumps({"data": [{"id": MODEL}] * 100}).encode()
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    + f"Content-Length: {len(body)}\r\n\r\n".encode()
                )
                for byte in body:
                    await writer.drain()
                    await asyncio.sleep(0.2)
                    writer.write(bytes([byte]))
            else:
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    b"Transfer-Encoding: chunked\r\n\r\n"
                )
                item = json.dumps({"id": MODEL}).encode() + b","
                chunk = b"%x\r\n%s\r\n" % (len(item) * 1000, item * 1000)
                loop = asyncio.get_running_loop()
                started = loop.time()
                while loop.time() - started < 60:
                    writer.write(chunk)
                    await writer.drain()
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()

    async with serving(serve) as port:
        yield port


@pytest.mark.parametrize(
    ("mode", "words"),
    [
        ("trickle", "/v1/models did not answer in full within 2s"),
        ("endless", "/v1/models answered more than 1024 KiB: cut off there"),
    ],
)
async def test_a_hostile_model_list_fails_its_check_within_the_bound(mode: str, words: str) -> None:
    # issue 31: 1 byte/s held test_model 150 s against a 20 s timeout; an endless list grew
    # the process to 3.5 GB
    async with hostile_models(mode) as port:
        # the subject's bound: 15 s, clear of the 2 s timeout under any load and of the
        # 150 s the trickle held it before; the words say which bound ended it
        checks = await asyncio.wait_for(route_checks(ADDRESS, port, [MODEL], timeout=2), 15)
    found = details(checks)
    assert found["API health"] == (True, "/health answered 200")
    assert found["model id"] == (False, words)
    assert found["chat completion"] == (False, "skipped: no model id")


async def test_a_server_running_another_profile_says_which_and_what_to_do() -> None:
    """test_model small4k while the host runs small: the model id check names the profile
    that runs and the way out, not only two lists of ids."""
    async with model_api(GOOD) as port:
        checks = await asyncio.wait_for(
            route_checks(
                ADDRESS,
                port,
                ["granite-3b-4k"],
                timeout=5,
                profiles={"small": MODEL, "small4k": "granite-3b-4k"},
            ),
            timeout=20,
        )
    passed, detail = details(checks)["model id"]
    assert not passed
    assert "runs profile small, not small4k" in detail, detail
    assert "start small4k with hosted-model-ctl, or test small" in detail, detail
